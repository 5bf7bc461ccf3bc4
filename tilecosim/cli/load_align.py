"""``tilecosim load-align``: one LoadAlign on the model or an HDL backend."""

from __future__ import annotations

import argparse
import sys

from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault
from tilecosim.model.load_align import (WIDTHS, Addressing, LoadDist, load_align,
                                        load_align_reference)
from tilecosim.sim.benches.align import (AlignCase, AlignResult, compare_load_align,
                                         simulate_load_align)

from tilecosim import ops
from tilecosim.ops.load_align import VL

from .common import (BACKEND_HELP, BACKENDS, FMT, UsageError, add_dut_options,
                     add_wave_options, any_int,
                     backend_errors, check_waves, check_writable, design_of, emit_json,
                     exit_status, image_or_ramp, int_arg, quote_argv, report_fault, usage_from,
                     wave_lines, with_mismatch_waves, write_npz)

LOAD_ALIGN_HELP = """\
Run one LoadAlign (UB -> one or two RegTensors of VL bytes) and print the register lanes.

examples:
  tilecosim load-align --dist DIST_US_B16 --dtype b16 --addr 64
  tilecosim load-align --dist DIST_DINTLV_B8 --dtype b8 --addr 0 \\
      --post-update 512 --json --out regs.npz

--addr is the byte address in UB (UB is as large as the --ub file; without --ub, UB is a
ramp of --ub-bytes in which element k of --dtype holds k); --post-update STRIDE
and --addr-reg OFFSET count elements of --dtype, as in the seed.  --out writes dst0 (and
dst1 for dual modes) as uint8 arrays of VL bytes.
"""


def mode_arg(modes, what: str, examples: str):
    """An argument type: a mode of ``modes`` by name (``DIST_`` optional, any case), or the
    raw code of the 5-bit field, 0..31 (a code no mode has faults IllegalParameter: how
    regress reproduces such a scenario)."""
    def conv(text):
        if text.strip().isdigit():
            code = int(text)
            if not 0 <= code < 32:
                raise argparse.ArgumentTypeError(f"--dist {text!r}: a code is 0..31 (5 bits)")
            return modes(code) if code in modes._value2member_map_ else code
        key = text.upper()
        key = key if key.startswith("DIST_") else "DIST_" + key
        if key not in modes.__members__:
            raise argparse.ArgumentTypeError(f"--dist {text!r} is not a {what} (e.g. "
                                             f"{examples})")
        return modes[key]
    return conv


dist_arg = mode_arg(LoadDist, "LoadDist", "DIST_NORM, DIST_US_B16, DIST_DINTLV_B8")


def _dist_name(dist):
    """A mode's name, or the code no mode has (an int: the model faults it)."""
    return getattr(dist, "name", dist)


DEFAULT_UB_BYTES = 256 << 10


#: rows of lanes printed of a long register without --full: the first and the last
HEAD_ROWS, TAIL_ROWS = 16, 2

def add_mode_options(p, dist_type, modes) -> None:
    """``--dist`` (a mode of ``modes``, or a raw code) and ``--dtype``."""
    p.add_argument("--dist", required=True, type=dist_type, metavar="DIST_...",
                   help="one of " + ", ".join(d.name for d in modes)
                        + "; or the field's code, 0..31 (a code no mode has faults)")
    p.add_argument("--dtype", required=True, choices=list(WIDTHS),
                   help="element type T of the RegTensor (b8, b16, b32, b64)")


def add_addressing_options(p, verb: str) -> None:
    """``--post-update`` or ``--addr-reg`` (``verb``: what the op does, load or store)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--post-update", type=any_int("--post-update"), metavar="STRIDE",
                   help=f"PostUpdate: {verb}, then addr += STRIDE elements (next_addr in the "
                        f"JSON)")
    g.add_argument("--addr-reg", type=any_int("--addr-reg"), metavar="OFFSET",
                   help=f"AddrReg: {verb} at addr + OFFSET elements")


def add_unit_options(p, reference: str) -> None:
    """``--vl``, ``--reg-trait``, ``--backend``, the waveform options and ``--model``
    (``reference``: what the reference model is)."""
    p.add_argument("--vl", type=int_arg("--vl"), default=256, metavar="BYTES",
                   help="vector length (default 256)")
    p.add_argument("--reg-trait", type=any_int("--reg-trait"), choices=(1, 2), default=1,
                   help="2: RegTraitNumTwo (b64 / complex32 split over two registers)")
    p.add_argument("--backend", choices=BACKENDS, default="golden", help=BACKEND_HELP)
    g = p.add_argument_group("HDL backends")
    add_wave_options(g)
    p.add_argument("--model", choices=("fast", "reference"), default="fast",
                   help=f"golden implementation: vectorized (default) or {reference}")


def addressing_of(args) -> Addressing:
    """The addressing ``--post-update`` / ``--addr-reg`` name (plain without either)."""
    if args.post_update is not None:
        return Addressing.post_update(args.post_update)
    if args.addr_reg is not None:
        return Addressing.addr_reg(args.addr_reg)
    return Addressing()


def check_contract_vl(args, op: str) -> None:
    """A design from elsewhere has the contract's ports, at VL = 256."""
    if not args.design.builtin and args.vl != VL:
        raise UsageError(f"--vl {args.vl}: the {op} contract is at VL = {VL} (a design "
                         f"from elsewhere has its ports)")


def check_unit_range(args, how: Addressing, ub_bytes: int) -> None:
    """The unit's operands: a 32-bit address, a 32-bit signed value, UB within 2 GiB."""
    if not 0 <= args.addr < 1 << 32 or not -(1 << 31) <= how.value < 1 << 31:
        raise UsageError(f"--backend {args.backend}: the unit takes a 32-bit address and a "
                         f"32-bit signed stride/offset")
    if ub_bytes >= 1 << 31:
        raise UsageError(f"--ub: {ub_bytes} bytes is more than the unit's 2 GiB address range")


def add_parsers(sub) -> dict:
    p = sub.add_parser("load-align", help="UB -> RegTensor with a distribution mode",
                       description=LOAD_ALIGN_HELP, formatter_class=FMT)
    add_mode_options(p, dist_arg, LoadDist)
    p.add_argument("--ub", metavar="FILE", help="UB image, raw bytes (default: a ramp of "
                   "--ub-bytes in which element k of --dtype holds k)")
    p.add_argument("--ub-bytes", type=int_arg("--ub-bytes", 32), default=None, metavar="N",
                   help=f"size of the ramp UB (default {DEFAULT_UB_BYTES}; not with --ub, "
                        f"whose file sets the size)")
    p.add_argument("--addr", required=True, type=any_int("--addr"), metavar="BYTES",
                   help="byte address in UB of the first element read (aligned as the mode "
                        "requires, see --dist)")
    add_addressing_options(p, "load")
    add_unit_options(p, "the seed's loops")
    p.add_argument("--out", metavar="FILE.npz", help="write dst0 (and dst1)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--full", action="store_true",
                   help=f"print every row of lanes (default: the first {HEAD_ROWS} and the last "
                        f"{TAIL_ROWS} of a long register; --out saves them all)")
    add_dut_options(p)
    return {"load-align": cmd_load_align}


def cmd_load_align(args) -> int:
    check_waves(args)
    args.design = design_of(args, ops.get("load-align"), args.backend)
    check_contract_vl(args, "load-align")
    check_writable("--out", args.out, (".npz",), "a NumPy archive of dst0 (and dst1)")
    ub = Buffer("UB", image_or_ramp("--ub", args.ub, 8 * WIDTHS[args.dtype], args.ub_bytes,
                                      "--ub-bytes", DEFAULT_UB_BYTES))
    how = addressing_of(args)
    run = load_align if args.model == "fast" else load_align_reference
    base = {"op": "load-align", "backend": args.backend, "dist": _dist_name(args.dist),
            "dtype": args.dtype, "vl": args.vl, "addressing": how.kind, "addr": args.addr}
    hdl = (with_mismatch_waves(args, "load-align", lambda: _run_load_align_hdl(args, ub, how))
           if args.backend != "golden" else None)
    hdl_json = hdl["json"] if hdl else {"cycles": None, "ideal_cycles": None, "match": None}
    try:
        r = run(ub, args.addr, args.dist, args.dtype, how, args.vl, args.reg_trait)
    except Fault as f:
        return report_fault(args, f, dict(base, address=None, next_addr=None, bytes_read=0,
                                          fault=f.to_json(), **hdl_json), hdl)
    if args.out:
        write_npz("--out", args.out, {f"dst{k}": reg for k, reg in enumerate(r.dst)})
    next_addr = r.next_addr if how.kind == "post_update" else None
    if args.json:
        emit_json(dict(base, address=r.address, next_addr=next_addr, bytes_read=r.nbytes,
                       fault=None, **hdl_json))
        return exit_status(hdl)
    w = args.dist.width or WIDTHS[args.dtype]
    if args.reg_trait == 2:
        w = WIDTHS[args.dtype] // 2
    print(f"LoadAlign {args.dist.name} T={args.dtype} VL={args.vl}: read {r.nbytes} B at UB "
          f"{r.address:#x}" + (f", next_addr {next_addr:#x}" if next_addr is not None else ""))
    for k, reg in enumerate(r.dst):
        lanes = reg.reshape(-1, w)[:, ::-1]                  # little-endian: print MSB first
        print(f"dst{k} ({reg.size // w} lanes of b{8 * w}, hex):")
        per = max(4, 32 // w)
        starts = list(range(0, lanes.shape[0], per))
        cut = not args.full and len(starts) > HEAD_ROWS + TAIL_ROWS + 1
        for start in (starts[:HEAD_ROWS] + [None] + starts[-TAIL_ROWS:] if cut else starts):
            if start is None:
                print(f"  ... {len(starts) - HEAD_ROWS - TAIL_ROWS} rows left out (--full "
                      f"prints them; --out FILE.npz saves the registers)")
                continue
            cells = " ".join("".join(f"{b:02x}" for b in lane) for lane in lanes[start:start + per])
            print(f"  [{start:3d}] {cells}")
    if args.out:
        print(f"wrote {args.out}")
    if hdl:
        print(hdl["summary"])
    return exit_status(hdl)

def _run_load_align_hdl(args, ub, how) -> dict:
    """Run the op on the Amaranth LoadAlign unit and compare with the golden model."""
    check_unit_range(args, how, ub.size)
    case = AlignCase(_dist_name(args.dist), args.dtype, args.addr, how, args.reg_trait)
    try:
        res = simulate_load_align([case], ub.data, args.vl, vcd=args.vcd, backend=args.backend,
                                  waves=args.waves, design=args.design)
        problems = compare_load_align([case], ub.data, res, args.vl)
    except AssertionError as e:                  # the bench caught the unit misbehaving
        res, problems = AlignResult(), [str(e)]
    except backend_errors() as e:
        raise usage_from(args, e) from None
    return unit_report(args, "load_align_unit", res.accept, res.out, problems)


def unit_report(args, top: str, accepts: list, outs: list, problems: list) -> dict:
    """What an HDL run of one op on an align unit (``top``) says: match or mismatch, the
    cycles from the op's accept to its result, the waveform, the problems and a reproduce
    line; and its JSON fields."""
    match = not problems
    cycles = outs[0] - accepts[0] if outs and accepts else None
    lines = [f"{args.backend}: {'match' if match else 'MISMATCH'}"
             + (f", result {cycles} cycles after the op was accepted" if cycles is not None else "")]
    lines += wave_lines(args, top)
    lines += [f"  {p}" for p in problems]
    if not match:
        lines.append("  reproduce: " + " ".join(quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": cycles, "ideal_cycles": 1, "match": match,
                     "mismatches": problems}}
