"""What every subcommand of the ``tilecosim`` command line shares: the exit statuses, the
one-line usage error, argument types that name the option and the value, the checks of
output paths and waveform options, and the JSON printout.

Exit status (the contract scripts rely on):
  0  done
  1  an HDL backend disagreed with the golden model
  2  usage error (bad option, malformed assembly, unset register, unreadable file)
  3  the instruction faulted (the fault's name and message are also on stderr)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import stat
import sys
import tempfile
from pathlib import Path

import numpy as np

from tilecosim.version import stamp
from tilecosim import ops
from tilecosim.cleanup import PENDING, write_whole
from tilecosim.model.asm import SCALAR_REGS, parse_int
from tilecosim.model.display import index_ramp, ramp_memory, seeded_memory
from tilecosim.model.dtypes import PROFILES
from tilecosim.model.tload import LCFR
from tilecosim.sim.design import (BUILTIN, DesignError, amaranth_design, check as check_design,
                                  read_supports, supports_beside, verilog_design)
from tilecosim.sim.ports import probe
from tilecosim.sim.runner import WAVE_SUFFIX, BenchError, wave_suffixes
from tilecosim.sim.waves import write_gtkw

from . import shipped

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_FAULT = 0, 1, 2, 3

BACKENDS = ("golden", "amaranth", "icarus", "verilator")

BACKEND_HELP = ("golden (the numpy model alone; default), or an HDL backend compared with the "
                "model: amaranth (its simulator), icarus or verilator (cocotb on the generated "
                "Verilog; the first run of a design builds it, later runs reuse the build)")

DEFAULT_MEM_SIZE = 4 << 20

MAX_MEM_SIZE = 1 << 30

MAX_SEED = (1 << 64) - 1

MAX_LATENCY = 256

LATENCY_HELP = ("at the earliest CYCLES cycles after the cycle its request was accepted (1 = "
                "the next cycle)")

class UsageError(Exception):
    """A one-line usage error (exit 2)."""

class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error on one line and exits 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

FMT = argparse.RawDescriptionHelpFormatter


# --- argument types and groups ------------------------------------------------------------

def any_int(name):
    def conv(text):
        try:
            return parse_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
    return conv

def int_arg(name, lo: int = 1, hi: int = MAX_MEM_SIZE):
    def conv(text):
        try:
            v = parse_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} {text!r} must be in {lo}..{hi}")
        return v
    return conv

def seed_arg(name):
    """A seed of a random generator: 0..2**64-1."""
    return int_arg(name, 0, MAX_SEED)

def prob_arg(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--stall {text!r} is not a number") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"--stall {text!r} must be in [0, 1)")
    return v

def lcfr_arg(text):
    try:
        lo, hi = (parse_int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lcfr {text!r} is not MIN:MAX in bytes") from None
    if not 256 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"--lcfr {text!r}: need 256 <= MIN <= MAX")
    return LCFR(lo, hi)

def add_hdl_options(p, tload: bool = True, transpose: bool = True, width: bool | None = None):
    """The options of an HDL run: ``--width`` (when ``width``, default ``tload``), the
    memory latency (``tload``), stalls, seed, transpose unit and waveforms."""
    g = p.add_argument_group("HDL backends")
    if tload if width is None else width:
        g.add_argument("--width", type=any_int("--width"), choices=(32, 64, 128), default=32,
                       help="beat width W in bytes (default 32)")
        g.add_argument("--latency", type=int_arg("--latency", 1, MAX_LATENCY), default=2,
                       metavar="CYCLES",
                       help=(f"global memory of the bench: a response is valid {LATENCY_HELP}; "
                             f"the TLOAD engine takes a response 2 cycles after its request at "
                             f"the earliest, so 1 and 2 time alike" if tload else
                             f"the L1 read port of the bench: a response is valid "
                             f"{LATENCY_HELP}") + f" (1..{MAX_LATENCY}, default 2)")
    g.add_argument("--stall", type=prob_arg, default=0.0, metavar="P",
                   help="probability of idle/back-pressure on every port each cycle (default 0)")
    g.add_argument("--seed", type=seed_arg("--seed"), default=0, metavar="S",
                   help="seed of the idle/back-pressure patterns (default 0)")
    if transpose:
        g.add_argument("--transpose", choices=("square", "naive"), default="square",
                       help="transpose unit: one square, alternating orientation (default) "
                            "or naive")
    add_wave_options(g)

def add_wave_options(g) -> None:
    """``--vcd`` (amaranth), ``--waves`` (icarus: VCD or FST; verilator: FST) and
    ``--no-waves``."""
    g.add_argument("--vcd", metavar="FILE", help="amaranth: write a VCD waveform of the run")
    g.add_argument("--waves", metavar="FILE.vcd|FILE.fst",
                   help="icarus: write a VCD (or, named .fst, an FST) waveform of the run; "
                        "verilator: an FST one")
    g.add_argument("--no-waves", action="store_true",
                   help="on a mismatch, do not re-run with a waveform (by default a run "
                        "without --vcd/--waves that mismatches runs again writing "
                        "$TILECOSIM_WAVES_DIR/OP-mismatch-BACKEND.vcd|.fst, default folder "
                        "build/waves, and prints its path)")


def add_regs(p):
    p.add_argument("--reg", action="append", default=[], metavar="NAME=VALUE",
                   help="set a scalar register, e.g. --reg a0=64 --reg a2=0x1000 (repeatable)")

def add_machine(p, lcfr_default=LCFR()):
    p.add_argument("--mem", metavar="FILE", help="raw bytes of global memory (default: a ramp)")
    p.add_argument("--mem-size", type=int_arg("--mem-size"), default=None, metavar="BYTES",
                   help=f"size of the ramp or --mem-seed memory (default {DEFAULT_MEM_SIZE}; "
                        f"not with --mem, whose file sets the size)")
    p.add_argument("--profile", choices=PROFILES, default="finite",
                   help="pad values for Max/Min: largest finite (default) or +/-inf")
    p.add_argument("--lcfr", metavar="MIN:MAX", type=lcfr_arg, default=lcfr_default,
                   help="tile-size limits in bytes (default 256:262144"
                        + (", and 256:4096 with an HDL backend)" if lcfr_default is None
                           else ")"))


# --- checks and printouts --------------------------------------------------------------------

def parse_regs(items: list[str]) -> dict[str, int]:
    regs = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in SCALAR_REGS:
            raise UsageError(f"--reg {item!r}: expected NAME=VALUE with NAME a scalar register "
                             f"(a0..a7, t0..t6, s0..s11, x1..x31)")
        try:
            v = parse_int(value)
        except ValueError:
            raise UsageError(f"--reg {item!r}: VALUE {value!r} is not an integer") from None
        if not -(1 << 63) <= v < 1 << 64:
            raise UsageError(f"--reg {item!r}: VALUE must fit the 64-bit register "
                             f"({-(1 << 63)}..{(1 << 64) - 1}; negative values are two's "
                             f"complement)")
        regs[name] = v & ((1 << 64) - 1)
    return regs

def check_memory_args(args) -> None:
    """--mem excludes --mem-seed and --mem-size: the file is the memory, size and all."""
    if args.mem and getattr(args, "mem_seed", None) is not None:
        raise UsageError("--mem and --mem-seed exclude each other")
    if args.mem and args.mem_size is not None:
        raise UsageError("--mem and --mem-size exclude each other: the file's size is the "
                         "memory's size")


def memory_of(args, dt) -> np.ndarray:
    check_memory_args(args)
    size = DEFAULT_MEM_SIZE if args.mem_size is None else args.mem_size
    if getattr(args, "mem_seed", None) is not None:
        return seeded_memory(args.mem_seed, size)
    if args.mem:
        return read_file("--mem", args.mem)
    return ramp_memory(dt, size)


def read_file(opt, path, limit: int = MAX_MEM_SIZE, what: str = "a file of raw bytes"
              ) -> np.ndarray:
    """The bytes of an input file: a regular file of 1..``limit`` bytes, read whole.  A
    missing or empty file, a folder, a device (/dev/zero), a pipe or a /proc or /sys file
    (/proc/self/mem) is a one-line usage error naming the option; nothing past ``limit``
    is read."""
    try:
        st = os.stat(path)
        real = os.path.realpath(path)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    except ValueError:                                   # a NUL in the name
        raise UsageError(f"{opt} {path!r}: a file name cannot hold a NUL character") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{opt} {path!r}: is a folder; {what} is expected")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{opt} {path!r}: not a regular file (a device, pipe or socket); "
                         f"{what} is expected")
    if real.startswith(("/proc/", "/sys/")):
        raise UsageError(f"{opt} {path!r}: a /proc or /sys file has no fixed contents; copy "
                         f"them to a regular file first")
    if st.st_size > limit:
        raise UsageError(f"{opt} {path!r}: {st.st_size} bytes, more than the {limit} allowed")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    if not data:
        raise UsageError(f"{opt} {path!r}: the file is empty; {what} is expected")
    if len(data) > limit:
        raise UsageError(f"{opt} {path!r}: more than the {limit} bytes allowed")
    return np.frombuffer(data, dtype=np.uint8).copy()


def _parent_problem(path: Path) -> str | None:
    """Why no file can be created at ``path``'s place, or None: the nearest existing
    ancestor decides between "does not exist" and "is not a directory"."""
    parent = path.parent
    if parent.is_dir():
        return None
    probe = parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        return f"{str(probe)!r} is a file, not a directory"
    return f"directory {str(parent)!r} does not exist"


def image_or_ramp(opt: str, path: str | None, bits: int, size: int | None, size_opt: str,
                  default_size: int) -> np.ndarray:
    """The bytes of the file ``path`` (option ``opt``), or, without one, ``size`` bytes
    (option ``size_opt``, default ``default_size``) in which element k of ``bits`` bits holds
    k (:func:`tilecosim.model.display.index_ramp`); both options at once are refused."""
    if path:
        if size is not None:
            raise UsageError(f"{opt} and {size_opt} exclude each other: the file's size is the "
                             f"buffer's size")
        return read_file(opt, path)
    return index_ramp(bits, default_size if size is None else size)


def write_npz(opt: str, path: str, arrays: dict) -> None:
    """A NumPy archive of ``arrays`` written whole to exactly ``path`` (:func:`write_file`)."""
    write_file(opt, path, lambda f: np.savez(f, **arrays))


def check_writable(opt: str, path: str | None, suffixes: tuple[str, ...] = (),
                   what: str = "") -> None:
    """Refuse, before any work is done, an output file that cannot be written exactly as
    named: an empty name, a directory, a missing or non-directory parent, a wrong suffix
    (``suffixes``, e.g. ``(".npz",)``; ``what`` says why), or a folder where no file can be
    created (probed by creating and removing a temporary file beside it)."""
    if path is None:
        return
    if not path.strip():
        raise UsageError(f"{opt} {path!r}: empty file name")
    if "\0" in path:
        raise UsageError(f"{opt} {path!r}: a file name cannot hold a NUL character")
    try:
        _check_target(opt, path, suffixes, what)
    except OSError as e:                             # a name too long, a loop of links, ...
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=Path(path).absolute().parent, prefix=".tilecosim-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: cannot write there ({e.strerror or e})") from None


def _check_target(opt, path, suffixes, what):
    target = Path(path)
    if target.is_dir() or path.endswith(("/", "\\")):
        raise UsageError(f"{opt} {path!r}: is a directory; name a file")
    if target.exists() and not target.is_file():
        raise UsageError(f"{opt} {path!r}: not a regular file (a device, pipe or socket)")
    if suffixes and not path.lower().endswith(suffixes):
        raise UsageError(f"{opt} {path!r}: the file name must end in {' or '.join(suffixes)}"
                         + (f" ({what})" if what else ""))
    problem = _parent_problem(target.absolute())
    if problem:
        raise UsageError(f"{opt} {path!r}: {problem}")


def write_file(opt: str, path: str, write) -> None:
    """Write an output file through ``write(file object)``, whole or not at all
    (:func:`tilecosim.cleanup.write_whole`); an OS error becomes a usage error naming the
    option."""
    try:
        write_whole(path, write)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None


def check_waves(args):
    """--vcd goes with amaranth, --waves with icarus/verilator; the file must be writable."""
    if args.backend == "golden" and (args.vcd or args.waves):
        opt = "--vcd" if args.vcd else "--waves"
        raise UsageError(f"{opt} needs an HDL backend (--backend amaranth, icarus or verilator)")
    if args.vcd and args.backend != "amaranth":
        raise UsageError(f"--vcd is for --backend amaranth; {args.backend} writes with "
                         f"--waves FILE{'.vcd or FILE.fst' if args.backend == 'icarus' else '.fst'}")
    if args.waves and args.backend == "amaranth":
        raise UsageError("--waves is for --backend icarus or verilator; amaranth writes VCD "
                         "with --vcd FILE")
    check_writable("--vcd", args.vcd, (".vcd",), "Amaranth's simulator writes VCD")
    icarus = args.backend == "icarus"
    check_writable("--waves", args.waves, wave_suffixes(args.backend) if icarus else (".fst",),
                   "icarus writes VCD or FST" if icarus else
                   f"{args.backend} writes FST; GTKWave's fst2vcd converts it to VCD")

def make_dir(opt: str, path: str) -> Path:
    """Create an output directory, or a usage error naming the option: "is a file" when
    the path or a parent is a file.  The folders it creates are the command's until it
    finishes (:data:`tilecosim.cleanup.PENDING`): a refused or stopped command removes them."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{opt} {path!r}: is a file; a folder is expected")
    if not target.is_dir():
        problem = _parent_problem(target.absolute())
        if problem and "is a file" in problem:
            raise UsageError(f"{opt} {path!r}: {problem}")
    PENDING.claim(target)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{opt} {path!r}: {e.strerror or e}") from None
    return target


def backend_errors():
    """What an HDL run raises on bad input or a broken tool (turned into usage errors)."""
    return (ValueError, OSError, BenchError)

def usage_from(args, e):
    if isinstance(e, OSError):
        opt, path = ("--vcd", args.vcd) if args.vcd else ("--waves", args.waves)
        return UsageError(f"{opt} {path!r}: {e.strerror or e}")
    return UsageError(f"--backend {args.backend}: {e}")

def wave_lines(args, top) -> list[str]:
    """The waveform's path and a GTKWave save file grouping the engine's streams."""
    path = args.vcd or args.waves
    if not path or not Path(path).exists():
        return []
    gtkw = write_gtkw(path, top, args.backend, probe(ops.top(top).make))
    return [f"  waveform: {path}  (gtkwave {path} {gtkw})"]

def mismatch_wave_path(op: str, backend: str) -> Path:
    """Where a single-operation command's mismatch writes its waveform when none was asked
    for: ``$TILECOSIM_WAVES_DIR`` (default ``build/waves``, as ``WAVES=1`` uses)
    ``/OP-mismatch-BACKEND.vcd`` (``.fst`` on Verilator), the last mismatch's."""
    folder = Path(os.environ.get("TILECOSIM_WAVES_DIR") or Path("build") / "waves")
    return folder / f"{op}-mismatch-{backend}{WAVE_SUFFIX[backend]}"


def with_mismatch_waves(args, op: str, run) -> dict:
    """``run()`` -- an HDL run of a single-operation command, returning ``{"match",
    "summary", ...}`` -- and, when it mismatched and no waveform was asked for (``--vcd``,
    ``--waves``, ``--no-waves``), ``run()`` again writing one at
    :func:`mismatch_wave_path` (the run is seeded: the same mismatch again); its summary
    then names the waveform.  Adds ``waveform`` (the path, or None) to the result and to
    its ``json``."""
    hdl = run()
    if not hdl["match"] and not (args.vcd or args.waves or getattr(args, "no_waves", False)):
        path = mismatch_wave_path(op, args.backend)
        PENDING.claim(path.parent)              # the folders made here: the command's
        try:                                    # until it finishes
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            hdl["summary"] += (f"\n  waveform: not written ({path.parent}: "
                               f"{e.strerror or e})")
        else:
            print(f"tilecosim {op}: mismatch; running it again with a waveform ({path})",
                  file=sys.stderr, flush=True)
            if args.backend == "amaranth":
                args.vcd = str(path)
            else:
                args.waves = str(path)
            hdl = run()
    wave = args.vcd or args.waves
    hdl["waveform"] = str(Path(wave).absolute()) if wave and Path(wave).exists() else None
    if "json" in hdl:
        hdl["json"]["waveform"] = hdl["waveform"]
    return hdl


def example_path(opt: str, text: str) -> str:
    """``text`` itself, or for ``example:NAME`` the shipped example's path
    (:mod:`tilecosim.cli.shipped`); a usage error naming ``opt`` when no example has that
    name."""
    if not text.startswith(shipped.PREFIX):
        return text
    try:
        return str(shipped.lookup(text[len(shipped.PREFIX):]))
    except KeyError:
        raise UsageError(f"{opt} {text!r}: no such example ("
                         + ", ".join(n for n, _ in shipped.catalog())
                         + "; tilecosim examples lists them)") from None


def quote_argv(argv):
    prog = "tilecosim" if argv and argv[0].endswith(("tilecosim", "__main__.py")) else argv[0]
    return [prog] + [shlex.quote(a) for a in argv[1:]]

def result_json(op, backend, tiles, names, fault=None, **extra):
    return {"op": op, "backend": backend,
            "tiles": [dict(img.to_json(), name=n) for img, n in zip(tiles, names)],
            "cycles": None, "ideal_cycles": None, "match": None,
            "fault": fault.to_json() if fault else None} | extra

def emit_json(obj):
    print(json.dumps(stamp(obj)))


def exit_status(hdl: dict | None, done: int = EXIT_OK) -> int:
    """1 when an HDL backend disagreed with the model, else ``done``."""
    return EXIT_MISMATCH if hdl and not hdl["match"] else done


def report_fault(args, fault, json_obj: dict, hdl: dict | None, text: str = "") -> int:
    """The instruction faulted: its name and message on stderr, then the JSON object or the
    text (``text`` first, then the fault and the HDL summary); exit 3, or 1 on a mismatch."""
    print(f"{fault.name}: {fault.message}", file=sys.stderr)
    if args.json:
        emit_json(json_obj)
    else:
        print(f"{text}fault: {fault}")
        if hdl:
            print(hdl["summary"])
    return exit_status(hdl, EXIT_FAULT)


# --- a design from elsewhere (D16) ------------------------------------------------------------

DUT_HELP = ("a design from elsewhere in place of the built-in engine, with the ports of the "
            "operation's contract (tilecosim contract OP writes its skeleton, --doc the whole "
            "contract); an example: --dut example:designs/load_align_unit.sv")


def add_dut_options(p) -> None:
    """``--dut FILE[,FILE...]``, ``--dut-top MODULE`` and ``--dut-amaranth MODULE:CLASS``."""
    g = p.add_argument_group("design under test", DUT_HELP)
    g.add_argument("--dut", metavar="FILE[,FILE...]",
                   help="Verilog or SystemVerilog files of the design (icarus, verilator)")
    g.add_argument("--dut-top", metavar="MODULE",
                   help="its top module (default: the first file's stem)")
    g.add_argument("--dut-amaranth", metavar="MODULE:CLASS",
                   help="an Amaranth wiring.Component with the contract's signature, from a "
                        "module or a .py file (every backend)")
    g.add_argument("--dut-supports", metavar="FILE.toml",
                   help="the subset of the contract the design implements (default: "
                        "<its first file's stem>.supports.toml beside it, if there is one; "
                        "keys in tilecosim contract --doc)")


def design_of(args, op, backend: str):
    """The :class:`~tilecosim.sim.design.Design` the options name for the operation ``op``
    (at its width), its ports checked against the contract: a usage error, one line naming
    every difference, before anything runs.  The built-in design without ``--dut``."""
    dut, top, amaranth, supports = (getattr(args, k, None) for k in (
        "dut", "dut_top", "dut_amaranth", "dut_supports"))
    if top and not dut:
        raise UsageError("--dut-top names the top module of --dut FILE: give --dut")
    if supports and not (dut or amaranth):
        raise UsageError("--dut-supports declares what a design from elsewhere implements: "
                         "give --dut or --dut-amaranth")
    if dut and amaranth:
        raise UsageError("--dut and --dut-amaranth exclude each other: one design at a time")
    if not (dut or amaranth):
        return BUILTIN
    if op.contract_module is None:
        raise UsageError(f"--dut: {op.name} has no port contract (operations with one: "
                         f"tilecosim contract --help)")
    if backend == "golden":
        raise UsageError("--dut: the design runs on an HDL backend: give --backend icarus, "
                         "verilator" + (" or amaranth" if amaranth else ""))
    if dut and backend == "amaranth":
        raise UsageError(f"--dut: Verilog runs on --backend icarus or verilator, not "
                         f"{backend} (an Amaranth design: --dut-amaranth MODULE:CLASS)")
    if dut:
        dut = ",".join(example_path("--dut", f) for f in dut.split(","))
    if supports:
        supports = example_path("--dut-supports", supports)
    try:
        design = verilog_design(dut, top) if dut else amaranth_design(amaranth)
        path = supports or supports_beside(design)
        if path:
            design = dataclasses.replace(
                design, supports=read_supports(path, op.capabilities, op.name),
                supports_file=str(Path(path).resolve()) if supports else None)
        widths = design.supports.get("widths")
        if widths and op.width not in widths:
            raise UsageError(f"--width {op.width}: the design declares W = "
                             f"{', '.join(map(str, widths))} only ({path})")
        check_design(design, op.contract())
    except DesignError as e:
        raise UsageError(str(e)) from None
    return design
