"""``tilecosim load-data-with-transpose``: one LoadDataWithTranspose on the model or an HDL
backend."""

from __future__ import annotations

import sys

import numpy as np

from tilecosim import ops
from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault
from tilecosim.model.load_data import (FRACTAL, LDT_DTYPES, SQUARES, LoadData2dTransposeParams,
                                       LoadData2dTransposeParamsV2, load_data_with_transpose,
                                       load_data_with_transpose_reference, plan_ldt, squares_of)
from tilecosim.sim.benches.load_data_with_transpose import (L1L0Result, LdtCall,
                                                            run_and_compare_l1l0)

from .common import (BACKEND_HELP, BACKENDS, FMT, UsageError, add_dut_options, add_hdl_options,
                     any_int, design_of,
                     backend_errors, check_waves, check_writable, emit_json, exit_status,
                     image_or_ramp, int_arg, quote_argv, report_fault, usage_from, wave_lines,
                     with_mismatch_waves, write_file)

LDT_HELP = """\
Run one LoadDataWithTranspose (L1 -> L0A/L0B, square-block transpose) and print where each
fractal went, with the first square before and after its transpose.

examples:
  # seed 001: int8, 3072 B, repeatTimes 3, srcStride 1, dstGap 1, dstFracGap 0
  tilecosim load-data-with-transpose --dtype int8 --repeat-times 3 --src-stride 1 \\
      --dst-gap 1 --dst-bytes 4096 --out l0a.bin
  # V2 (L0B only): startIndex and srcStride count 512 B fractals
  tilecosim load-data-with-transpose --v2 --dtype half --repeat-times 2 --src-stride 1 \\
      --dst-bytes 2048 --json
  # on the engine with 128-byte L1 reads and L0 writes, against the model
  tilecosim load-data-with-transpose --dtype int8 --repeat-times 4 --src-stride 1 \\
      --dst-gap 1 --dst-bytes 8192 --backend amaranth --width 128

--src is the L1 image (the source tensor starts at --src-addr, L1 is as large as the
file); without it, L1 is a ramp of --src-bytes in which element k of --dtype holds k.  The
destination starts as --dst-bytes zero bytes and --out writes all of it (raw bytes).
The V2 source-address formula is inferred: the source documents do not give it.
"""


DEFAULT_L1_BYTES = 512 << 10


def add_parsers(sub) -> dict:
    p = sub.add_parser("load-data-with-transpose", help="L1 -> L0A/L0B fractal transpose",
                       description=LDT_HELP, formatter_class=FMT)
    p.add_argument("--dtype", required=True, choices=list(LDT_DTYPES),
                   help="element type; sets the square: int4b 64x64, int8/uint8 32x32, "
                        "half/bfloat16 16x16, float/int32/uint32 16x16 of two 16x8 fractals")
    p.add_argument("--repeat-times", required=True, type=any_int("--repeat-times"), metavar="N",
                   help="repeatTimes: squares moved (V1 0..255, 0 = no operation; V2 1..255)")
    for name, text in (("--start-index", "startIndex: the first source square (V2: fractal), "
                                         "counted from --src-addr (0..65535, default 0)"),
                       ("--src-stride", "srcStride: squares (V2: fractals) between the source "
                                        "squares of consecutive iterations (0..65535, default 0)"),
                       ("--dst-gap", "dstGap: 512 B fractals skipped in the destination between "
                                     "iterations (0..65535, default 0)"),
                       ("--dst-frac-gap", "dstFracGap: 512 B fractals skipped between the "
                                          "fractals of one iteration (0..65535, default 0)")):
        p.add_argument(name, type=any_int(name), default=0, metavar="N", help=text)
    p.add_argument("--addr-mode", type=any_int("--addr-mode"), choices=(0, 1), default=0,
                   help="1: the source square index decreases by srcStride per iteration")
    p.add_argument("--v2", action="store_true", help="LoadData2dTransposeParamsV2 (L0B only)")
    p.add_argument("--src-frac-gap", type=any_int("--src-frac-gap"), default=None, metavar="N",
                   help="V2 only: gap between the source fractals of one square, in 512 B")
    p.add_argument("--dst", choices=("L0A", "L0B"), default=None,
                   help="destination buffer (default L0A; L0B for --v2)")
    p.add_argument("--src", metavar="FILE",
                   help="L1 image, raw bytes (default: a ramp of --src-bytes in which element "
                        "k of --dtype holds k)")
    p.add_argument("--src-bytes", type=int_arg("--src-bytes", 32), default=None, metavar="N",
                   help=f"size of the ramp L1 (default {DEFAULT_L1_BYTES}; not with --src, "
                        f"whose file sets the size)")
    p.add_argument("--dst-bytes", required=True, type=int_arg("--dst-bytes"), metavar="N",
                   help="size of the destination L0A/L0B, which starts all zero")
    p.add_argument("--src-addr", type=any_int("--src-addr"), default=0, metavar="BYTES",
                   help="L1 byte address the square indices count from (default 0)")
    p.add_argument("--dst-addr", type=any_int("--dst-addr"), default=0, metavar="BYTES",
                   help="destination byte address the fractal indices count from (default 0)")
    p.add_argument("--backend", choices=BACKENDS, default="golden", help=BACKEND_HELP)
    add_hdl_options(p, tload=False, width=True)
    add_dut_options(p)
    p.add_argument("--model", choices=("fast", "reference"), default="fast",
                   help="golden implementation: vectorized (default) or the seed's loops")
    p.add_argument("--out", metavar="FILE", help="write the whole destination image (raw bytes)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return {"load-data-with-transpose": cmd_ldt}


def cmd_ldt(args) -> int:
    check_waves(args)
    args.design = design_of(args, ops.get("load-data-with-transpose").at_width(args.width),
                            args.backend)
    if args.src_frac_gap is not None and not args.v2:
        raise UsageError("--src-frac-gap is a V2 parameter: add --v2")
    check_writable("--out", args.out)
    l1 = Buffer("L1", image_or_ramp("--src", args.src, LDT_DTYPES[args.dtype], args.src_bytes,
                                      "--src-bytes", DEFAULT_L1_BYTES))
    dst_name = args.dst or ("L0B" if args.v2 else "L0A")
    l0 = Buffer(dst_name, args.dst_bytes)
    common = dict(dtype=args.dtype, repeat_times=args.repeat_times, start_index=args.start_index,
                  src_stride=args.src_stride, dst_gap=args.dst_gap, dst_frac_gap=args.dst_frac_gap,
                  addr_mode=bool(args.addr_mode))
    params = (LoadData2dTransposeParamsV2(src_frac_gap=args.src_frac_gap or 0, **common)
              if args.v2 else LoadData2dTransposeParams(**common))
    base = {"op": "load-data-with-transpose", "backend": args.backend, "params": params.to_json(),
            "dst": dst_name}
    hdl = (with_mismatch_waves(args, "load-data-with-transpose",
                               lambda: _run_ldt_hdl(args, params, dst_name, l1.data))
           if args.backend != "golden" else None)
    hdl_json = hdl["json"] if hdl else {"cycles": None, "ideal_cycles": None, "match": None}
    try:
        pl = plan_ldt(params, l1, Buffer(dst_name, args.dst_bytes), args.dst_addr, args.src_addr)
        run = load_data_with_transpose if args.model == "fast" else load_data_with_transpose_reference
        run(l1, l0, params, args.dst_addr, args.src_addr)
    except Fault as f:
        return report_fault(args, f, dict(base, bytes_moved=0, placements=[],
                                          fault=f.to_json(), **hdl_json), hdl)
    if args.out:
        write_file("--out", args.out, lambda f: f.write(l0.data.tobytes()))
    placements = [{"iteration": i, "fractal": j, "src": int(pl.src_addr[i, j]),
                   "dst": int(pl.dst_addr[i, j])}
                  for i in range(pl.src_addr.shape[0]) for j in range(pl.src_addr.shape[1])]
    if args.json:
        emit_json(dict(base, bytes_moved=pl.bytes_moved, placements=placements, fault=None,
                       **hdl_json))
        return exit_status(hdl)
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
    return exit_status(hdl)

def _run_ldt_hdl(args, params, dst_name, l1) -> dict:
    """Run the call on the Amaranth L1 -> L0 engine and compare with the golden model."""
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
                                             latency=args.latency,
                                             transpose=args.transpose, vcd=args.vcd,
                                             backend=args.backend, waves=args.waves,
                                             width=args.width, design=args.design)
    except AssertionError as e:                  # the bench caught the engine misbehaving
        res, problems = L1L0Result(), [str(e)]
    except backend_errors() as e:
        raise usage_from(args, e) from None
    match = not problems
    ideal = None
    if res.faults == [0] and params.repeat_times:
        ideal = params.repeat_times * SQUARES[LDT_DTYPES[params.dtype]].bytes // args.width
    head = f"{args.backend}: {'match' if match else 'MISMATCH'}"
    if res.cycles and ideal:
        head += f", {res.cycles} cycles, ideal {ideal}, efficiency {ideal / res.cycles:.3f}"
    top = "l1l0_engine" if args.width == 32 else f"l1l0_engine_w{args.width}"
    lines = [head] + wave_lines(args, top)
    lines += [f"  {p}" for p in problems]
    if not match:
        lines.append("  reproduce: " + " ".join(quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": res.cycles, "ideal_cycles": ideal, "match": match,
                     "hdl_fault": res.faults[0] if res.faults else None,
                     "mismatches": problems}}

def _square_text(title, data, addrs, sq) -> str:
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
