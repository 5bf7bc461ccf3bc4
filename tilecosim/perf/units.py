"""Benchmark of the L1 -> L0 engine and the LoadAlign unit (``tilecosim bench --only
l1l0,load-align``).

L1 -> L0: efficiency (ideal = bytes moved / W, the bytes of an L1 read and of an L0 write;
cycles from the accept of the call to its last L0 write) per data type for repeatTimes 4, 16
and 64 at W = 32, 64 and 128, no back-pressure, L1 latency 2; and its fraction of the fill
bound beats / (beats + S/P): the S rows of the transposer's square (64 int4b, 32 int8, 16
half, 8 for a quarter of a b32 square) arrive in S/P reads before its first lines can leave.  LoadAlign: one op of every mode back to back -- ops per cycle and latency.
"""

import numpy as np

from tilecosim.model.load_align import LoadDist
from tilecosim.model.load_data import LDT_DTYPES, SQUARES, LoadData2dTransposeParams

from tilecosim.ops.load_data_with_transpose import FILL_ROWS, ldt_fill
from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0

__all__ = ["l1l0_case", "l1l0_table", "load_align_figures", "FILL_ROWS"]



def l1l0_case(dt: str, r: int, width: int = 32) -> dict:
    """One L1 -> L0 call of ``dt`` with repeatTimes ``r`` at W = ``width``: cycles, ideal,
    efficiency, its fraction of the fill bound, first write (checked against the model)."""
    l1 = np.random.default_rng(1).integers(0, 256, 1 << 18, dtype=np.uint8)
    sq = SQUARES[LDT_DTYPES[dt]]
    p = LoadData2dTransposeParams(dt, repeat_times=r, src_stride=1, dst_gap=sq.nfrac - 1)
    res, problems = run_and_compare_l1l0([LdtCall(p, "L0B")], l1, np.zeros(1 << 17, np.uint8),
                                         width=width)
    if problems:
        raise RuntimeError(f"L1->L0 {dt} x{r} at W = {width}: {problems}")
    ideal = r * sq.bytes // width
    eff = ideal / res.cycles
    fill = ldt_fill(dt, width)
    return {"dtype": dt, "repeat": r, "width": width, "cycles": res.cycles, "ideal": ideal,
            "efficiency": round(eff, 4), "fill_bound": round(ideal / (ideal + fill), 4),
            "of_fill_bound": round(eff * (ideal + fill) / ideal, 4),
            "first_write": res.first_write - res.accept[0]}


def l1l0_table(repeats=(4, 16, 64), width: int = 32):
    return [l1l0_case(dt, r, width) for dt in ("int4b", "int8", "half", "float")
            for r in repeats]


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
