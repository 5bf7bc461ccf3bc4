"""Benchmark of the L1 -> L0 engine and the LoadAlign unit (``tilecosim bench --only
l1l0,load-align``).

L1 -> L0: efficiency (ideal = bytes moved / 32-byte beat; cycles from the accept of the
call to its last L0 write) per data type for repeatTimes 4, 16 and 64, no back-pressure,
L1 latency 2.  LoadAlign: one op of every mode back to back -- ops per cycle and latency.
"""

import numpy as np

from tilecosim.model.load_align import LoadDist
from tilecosim.model.load_data import LDT_DTYPES, SQUARES, LoadData2dTransposeParams

from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0

__all__ = ["l1l0_case", "l1l0_table", "load_align_figures"]


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
    return {"ops": len(cases), "cycles": span,
            "ops_per_cycle": round(len(cases) / (res.out[-1] - res.out[0] + 1), 4),
            "latency": lat}
