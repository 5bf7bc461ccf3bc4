"""Benchmark of the L1 -> L0 engine and the LoadAlign unit.

    python -m tilecosim.perf.units [--area] [--json FILE]

L1 -> L0: efficiency (ideal = bytes moved / 32-byte beat; cycles from the accept of the
call to its last L0 write) per data type for repeatTimes 4, 16 and 64, no back-pressure,
L1 latency 2.  LoadAlign: one op of every mode back to back -- ops per cycle and latency.
With --area, Yosys cell and flip-flop counts of the LoadAlign unit (its distribution mux)
and of the L1 -> L0 engine.
"""

import argparse
import json
import sys

import numpy as np

from tilecosim.model.load_align import LoadDist
from tilecosim.model.load_data import LDT_DTYPES, SQUARES, LoadData2dTransposeParams

from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0

__all__ = ["main"]


def l1l0_case(dt: str, r: int) -> dict:
    """One L1 -> L0 call of ``dt`` with repeatTimes ``r``: cycles, ideal, efficiency, first
    write (checked against the model)."""
    l1 = np.random.default_rng(1).integers(0, 256, 1 << 18, dtype=np.uint8)
    sq = SQUARES[LDT_DTYPES[dt]]
    p = LoadData2dTransposeParams(dt, repeat_times=r, src_stride=1, dst_gap=sq.nfrac - 1)
    res, problems = run_and_compare_l1l0([LdtCall(p, "L0B")], l1, np.zeros(1 << 17, np.uint8))
    if problems:
        raise RuntimeError(f"L1->L0 {dt} x{r}: {problems}")
    ideal = r * sq.bytes // 32
    return {"dtype": dt, "repeat": r, "cycles": res.cycles, "ideal": ideal,
            "efficiency": round(ideal / res.cycles, 4),
            "first_write": res.first_write - res.accept[0]}


def l1l0_table(repeats=(4, 16, 64)):
    return [l1l0_case(dt, r) for dt in ("int4b", "int8", "half", "float") for r in repeats]


def load_align_figures():
    ub = np.random.default_rng(2).integers(0, 256, 8192, dtype=np.uint8)
    cases = [AlignCase(d.name, "b8" if d is not LoadDist.DIST_NORM else "b32", 64 * (k % 60))
             for k, d in enumerate(list(LoadDist) * 6)]
    res = simulate_load_align(cases, ub)
    if compare_load_align(cases, ub, res):
        raise RuntimeError("LoadAlign bench disagrees with the model")
    span = res.out[-1] - res.accept[0] + 1
    lat = sorted({o - a for a, o in zip(res.accept, res.out)})
    return {"ops": len(cases), "cycles": span, "ops_per_cycle": round(len(cases) / (res.out[-1] - res.out[0] + 1), 4),
            "latency": lat}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilecosim.perf.units", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--area", action="store_true", help="also synthesize (slow)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    out = {"l1l0": l1l0_table(), "load_align": load_align_figures()}
    print("| dtype | repeat | cycles | ideal | efficiency | first write |\n|---|---|---|---|---|---|")
    for r in out["l1l0"]:
        print(f"| {r['dtype']} | {r['repeat']} | {r['cycles']} | {r['ideal']} | "
              f"{r['efficiency']:.3f} | {r['first_write']} |")
    la = out["load_align"]
    print(f"\nLoadAlign: {la['ops']} ops back to back, {la['ops_per_cycle']} ops/cycle, "
          f"latency {la['latency']} cycles")
    if args.area:
        from tilecosim.perf.tload import area
        from tilecosim.hdl.l1l0.engine import L1L0Engine
        from tilecosim.hdl.align.load import LoadAlignUnit
        out["area"] = [area(LoadAlignUnit(), "load_align_unit"), area(L1L0Engine(), "l1l0_engine")]
        print("\n| top | cells | flip-flops |\n|---|---|---|")
        for a in out["area"]:
            print(f"| {a['top']} | {a['cells']} | {a['flip_flops']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
