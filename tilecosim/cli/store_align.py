"""``tilecosim store-align``: one StoreAlign on the model or an HDL backend."""

from __future__ import annotations

import io
import zipfile

import numpy as np

from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault
from tilecosim.model.load_align import StoreDist, store_align, store_align_reference
from tilecosim.sim.benches.align import (StoreCase, compare_store_align, store_align_run,
                                         store_footprint)

from tilecosim import ops
from tilecosim.ops.store_align import MASKS, registers_needed, store_sources

from .common import (FMT, UsageError, add_dut_options, any_int, backend_errors, check_waves, check_writable, design_of, emit_json,
                     exit_status, int_arg, read_file, report_fault, seed_arg,
                     usage_from, with_mismatch_waves, write_file)
from .load_align import (_dist_name, add_addressing_options, add_mode_options, add_unit_options,
                         addressing_of, check_contract_vl, check_unit_range, mode_arg,
                         unit_report)

STORE_ALIGN_HELP = """\
Run one StoreAlign (one or two RegTensors of VL bytes -> UB, under a byte mask) and print
the UB bytes it writes.

examples:
  tilecosim store-align --dist DIST_PACK_B32 --dtype b32 --addr 64
  tilecosim store-align --dist DIST_INTLV_B16 --dtype b16 --addr 0 --src-seed 7 \\
      --post-update 256 --json --out ub.bin

The registers: --src FILE.npz (src0 and src1, or the dst0 and dst1 that `load-align --out`
writes: uint8 arrays of VL bytes), or random bytes from --src-seed N, or by default a ramp
(element k of --dtype holds k in src0, VL/sizeof + k in src1).  The mask: --mask, a
CreateMask pattern of --dtype (default ALL; ALLF enables nothing) or `random` (one bit per
byte lane, from --src-seed).  UB is the --ub file, or --ub-bytes of zeros.  --addr is the
byte address in UB; --post-update STRIDE and --addr-reg OFFSET count elements of --dtype.
--out writes the whole UB image after the store, raw bytes.
"""

DEFAULT_UB_BYTES = 256 << 10

dist_arg = mode_arg(StoreDist, "StoreDist", "DIST_NORM, DIST_PACK_B32, DIST_INTLV_B8")


def add_parsers(sub) -> dict:
    p = sub.add_parser("store-align", help="RegTensor -> UB with a distribution mode and a mask",
                       description=STORE_ALIGN_HELP, formatter_class=FMT)
    add_mode_options(p, dist_arg, StoreDist)
    p.add_argument("--addr", required=True, type=any_int("--addr"), metavar="BYTES",
                   help="byte address in UB of the first byte written")
    add_addressing_options(p, "store")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--src", metavar="FILE.npz",
                   help="the registers: src0 (and src1), or dst0 (and dst1), VL bytes each")
    g.add_argument("--src-seed", type=seed_arg("--src-seed"), metavar="N",
                   help="random registers (and --mask random) from seed N")
    p.add_argument("--mask", choices=MASKS, default=None, metavar="PATTERN",
                   help="ALL (default), ALLF, VL1..VL128, M3, M4, H, Q (CreateMask of --dtype) "
                        "or random (one bit per lane, from --src-seed)")
    p.add_argument("--ub", metavar="FILE", help="UB image, raw bytes (default: --ub-bytes of "
                   "zeros)")
    p.add_argument("--ub-bytes", type=int_arg("--ub-bytes", 32), default=None, metavar="N",
                   help=f"size of the zero UB (default {DEFAULT_UB_BYTES}; not with --ub)")
    add_unit_options(p, "byte by byte")
    p.add_argument("--out", metavar="FILE.bin", help="write UB after the store (raw bytes)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_dut_options(p)
    return {"store-align": cmd_store_align}


def _registers(args, nregs: int) -> tuple[tuple, bytes]:
    """(registers, mask) as the options give them (module help)."""
    mask = args.mask or "ALL"
    if mask == "random" and args.src_seed is None:
        raise UsageError("--mask random draws from --src-seed: give one")
    if args.src is None:
        return store_sources(args.src_seed, mask, args.dtype, nregs, args.vl)
    raw = read_file("--src", args.src, what="a NumPy .npz archive of src0 (and src1)")
    try:
        with np.load(io.BytesIO(raw.tobytes()), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise UsageError(f"--src {args.src!r}: not a NumPy .npz archive ({e})") from None
    regs = []
    for k in range(nregs):
        name = next((n for n in (f"src{k}", f"dst{k}") if n in arrays), None)
        if name is None:
            raise UsageError(f"--src {args.src!r}: no array src{k} (or dst{k}); this store "
                             f"takes {nregs} register(s)")
        a = arrays[name]
        if a.dtype != np.uint8 or a.size != args.vl:
            raise UsageError(f"--src {args.src!r}: {name} is {a.size} x {a.dtype}; a register "
                             f"is {args.vl} x uint8 (--vl)")
        regs.append(a.reshape(-1).tobytes())
    _, m = store_sources(None, mask, args.dtype, 0, args.vl)
    return tuple(regs), m


def cmd_store_align(args) -> int:
    check_waves(args)
    args.design = design_of(args, ops.get("store-align"), args.backend)
    check_contract_vl(args, "store-align")
    if args.vl % 32 or args.vl > 1 << 16:
        raise UsageError(f"--vl {args.vl}: a multiple of 32 bytes, at most 65536")
    check_writable("--out", args.out, (".bin",), "the UB image, raw bytes")
    if args.ub and args.ub_bytes is not None:
        raise UsageError("--ub and --ub-bytes exclude each other: the file's size is UB's size")
    ub0 = read_file("--ub", args.ub) if args.ub else \
        np.zeros(DEFAULT_UB_BYTES if args.ub_bytes is None else args.ub_bytes, np.uint8)
    how = addressing_of(args)
    regs, mask = _registers(args, registers_needed(args.dist, args.reg_trait))
    case = StoreCase(_dist_name(args.dist), args.dtype, args.addr, regs, mask, how,
                     args.reg_trait)
    base = {"op": "store-align", "backend": args.backend, "dist": _dist_name(args.dist),
            "dtype": args.dtype, "vl": args.vl, "addressing": how.kind, "addr": args.addr}
    hdl = (with_mismatch_waves(args, "store-align", lambda: _run_hdl(args, case, ub0))
           if args.backend != "golden" else None)
    hdl_json = hdl["json"] if hdl else {"cycles": None, "ideal_cycles": None, "match": None}
    ub = Buffer("UB", ub0.copy())
    run = store_align if args.model == "fast" else store_align_reference
    try:
        nxt = run(ub, args.addr, [np.frombuffer(r, np.uint8) for r in regs], args.dist,
                  args.dtype, np.frombuffer(mask, np.uint8).astype(bool), how, args.vl,
                  args.reg_trait)
    except Fault as f:
        return report_fault(args, f, dict(base, address=None, next_addr=None, bytes_written=0,
                                          fault=f.to_json(), **hdl_json), hdl)
    ea, n, w = store_footprint(case, args.vl)
    enabled = _enabled(ub0, ea, n, case, args.vl)
    if args.out:
        write_file("--out", args.out, lambda f: f.write(ub.data.tobytes()))
    next_addr = nxt if how.kind == "post_update" else None
    if args.json:
        emit_json(dict(base, address=ea, next_addr=next_addr, bytes_written=int(enabled.sum()),
                       fault=None, **hdl_json))
        return exit_status(hdl)
    print(f"StoreAlign {args.dist.name} T={args.dtype} VL={args.vl}: wrote {int(enabled.sum())} "
          f"of {n} B at UB {ea:#x}"
          + (f", next_addr {next_addr:#x}" if next_addr is not None else ""))
    print(f"UB from {ea:#x} (hex, 32 bytes a row; .. = kept, its element's mask bit clear):")
    for row in range(0, n, 32):
        cells = " ".join(f"{ub.data[ea + b]:02x}" if enabled[b] else ".."
                         for b in range(row, min(n, row + 32)))
        print(f"  +{row:4d} {cells}")
    if args.out:
        print(f"wrote {args.out}")
    if hdl:
        print(hdl["summary"])
    return exit_status(hdl)


def _enabled(ub0, ea, n, case, vl) -> np.ndarray:
    """Which of the n bytes from ``ea`` the store writes: the model's run of it on a UB
    that tells written bytes apart (each byte's complement, then each byte's own value)."""
    regs = [np.frombuffer(r, np.uint8) for r in case.regs]
    mask = np.frombuffer(case.mask, np.uint8).astype(bool)
    out = np.zeros(n, bool)
    for fill in (0x00, 0xff):
        b = Buffer("UB", np.full(ub0.size, fill, np.uint8))
        store_align(b, case.addr, regs, case.dist, case.t, mask, case.how, vl, case.reg_trait)
        out |= b.data[ea:ea + n] != fill       # a byte written equal to one fill differs
    return out                                  # from the other


def _run_hdl(args, case: StoreCase, ub0) -> dict:
    """Run the op on the StoreAlign unit (or --dut) and compare with the golden model."""
    check_unit_range(args, case.how, ub0.size)
    try:
        out = store_align_run([case], ub0, args.vl, backend=args.backend, vcd=args.vcd,
                              waves=args.waves, design=args.design)
        problems = compare_store_align([case], ub0, out["mem"], out["results"],
                                       out["timed_out"], args.vl, out.get("waveform"))
    except AssertionError as e:                  # the bench caught the unit misbehaving
        out, problems = {"accept": [], "out": []}, [str(e)]
    except backend_errors() as e:
        raise usage_from(args, e) from None
    return unit_report(args, "store_align_unit", out["accept"], out["out"], problems)
