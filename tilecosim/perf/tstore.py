"""Figures of the TSTORE engine (``tilecosim bench --only tstore``).

* one TSTORE of a whole 64 KB tile per layout, element size and W, to a dense footprint
  of the tile's TLOAD shape (:func:`tilecosim.perf.tload.shape_for`): cycles from accept to
  the last write against its W-byte beats, and for the transposing layouts against the
  fill bound (DESIGN D14: the first group's S words must be in before its first write can
  leave, so beats / (beats + S));
* a kernel through the tile system, TLOAD A, TLOAD B, TADD, TSTORE of 4 KB tiles, against
  the sum of the same instructions each measured alone (after the instructions it reads
  from): how much of each the next one hides;
* the cost of program order (D15: a TSTORE waits for every instruction before it and holds
  the next until it completes): TLOAD, TSTORE, TLOAD of other registers and other memory,
  against the sum of the three alone and the floor: the longer of the two TLOADs (one
  engine) and the TSTORE, what they would take if the TSTORE overlapped them.

Every figure comes from a run that also matched the golden model.
"""

from __future__ import annotations

import numpy as np

from tilecosim.model.asm import parse_program
from tilecosim.model.display import seeded_memory
from tilecosim.model.dtypes import dtype
from tilecosim.model.tload import TileImage, TLoadLayout
from tilecosim.model.tstore import TStoreParams
from tilecosim.perf.tload import DTYPES, shape_for
from tilecosim.sim.benches.program import ProgramConfig, golden_steps, run_program
from tilecosim.sim.benches.tstore import TStoreConfig, compare_tstore, simulate_tstore

__all__ = ["bench_case", "fill", "kernel_case", "SIZE"]

SIZE = 64 * 1024


def fill(layout: TLoadLayout, esize: int, width: int) -> int:
    """The cycles a TSTORE must read before its first write (D14 for TSTORE): a transposing
    layout's S = 32/esize words of its first group; 0 for the others."""
    return 32 // esize if layout.transposing else 0


def bench_case(layout: TLoadLayout, esize: int, width: int, size: int = SIZE) -> dict:
    """One TSTORE of a whole ``size``-byte tile of ``layout``: cycles, beats, efficiency and
    its fraction of the fill bound."""
    rows, cols = shape_for(layout, esize, size, width)
    dt = dtype(DTYPES[esize])
    data = np.random.default_rng(size + esize).integers(0, 256, size, dtype=np.uint8)
    src = TileImage("T", size, dt, layout.dest, rows, cols, data, np.ones(size, bool))
    p = TStoreParams(layout, dt, cols, 64, rows, cols, None)
    mem = seeded_memory(4, size + 128)
    res = simulate_tstore([(p, src)], mem, TStoreConfig(width=width, max_cycles=20 * size))
    problems = compare_tstore([(p, src)], mem, res)
    if problems or res.faults != [0]:
        raise RuntimeError(f"TSTORE bench case {layout.name} b{8 * esize} W = {width} "
                           f"failed: {problems[:2] or res.faults}")
    beats = size // width
    f = fill(layout, esize, width)
    bound = beats / (beats + f)
    eff = beats / res.cycles
    return {"layout": layout.name, "dtype": f"b{8 * esize}", "size": size, "width": width,
            "rows": rows, "cols": cols, "cycles": res.cycles, "ideal": beats,
            "efficiency": round(eff, 4), "bound": round(bound, 4),
            "of_bound": round(eff / bound, 4),
            "first_write": res.first_write_cycle - res.accept_cycles[0]}


KERNEL = ["TLOAD.NORM <LB0:64, LB1:32, S16, Zero>, [a0], ->T<4KB>",
          "TLOAD.NORM <LB0:64, LB1:32, S16, Zero>, [a1], ->T<4KB>",
          "TADD T#1, T#2, ->U",
          "TSTORE.NORM <LB0:64, LB1:32, LB2:64, S16>, U#1, [a2]"]


def kernel_case(width: int = 32) -> dict:
    """The kernel TLOAD, TLOAD, TADD, TSTORE (4 KB S16 tiles) through the tile system in
    one program, against the sum of its four instructions each alone (the sources of TADD
    and TSTORE loaded before the measured instruction, not counted)."""
    regs = {"a0": 0, "a1": 4096, "a2": 8192, "a3": 12288}
    mem = seeded_memory(5, 1 << 16)
    cfg = ProgramConfig(check="end", width=width)

    def cycles(lines, measured):
        steps = golden_steps(parse_program("\n".join(lines)), regs, mem, cfg.profile,
                             cfg.lcfr)
        res, problems = run_program(steps, mem, cfg)
        if problems:
            raise AssertionError(f"kernel at W = {width}: {problems[:3]}")
        ends = res.done_cycles
        start = ends[len(lines) - measured - 1] if len(lines) > measured else \
            res.first_record_cycle - 1
        return ends[-1] - start

    whole = cycles(KERNEL, 4)
    parts = [cycles(KERNEL[:1], 1), cycles(KERNEL[1:2], 1), cycles(KERNEL[:3], 1),
             cycles(KERNEL, 1)]
    # the cost of program order (D15): a TSTORE between two TLOADs that touch other memory
    # and other registers; the floor is what they would take if the TSTORE overlapped the
    # TLOADs (which share one engine): the longer of the TLOADs' sum and the TSTORE
    setup = [KERNEL[0]]
    rest = ["TLOAD.NORM <LB0:64, LB1:32, S16, Zero>, [a1], ->U<4KB>",
            "TSTORE.NORM <LB0:64, LB1:32, LB2:64, S16>, T#1.reuse, [a2]",
            "TLOAD.NORM <LB0:64, LB1:32, S16, Zero>, [a3], ->M<4KB>"]
    alone = [cycles(setup + [x], 1) for x in rest]
    ordered = cycles(setup + rest, 3)
    return {"width": width, "kernel": whole, "parts": parts, "sum": sum(parts),
            "overlap": round(1 - whole / sum(parts), 4),
            "order": {"cycles": ordered, "parts": alone, "sum": sum(alone),
                      "floor": max(alone[0] + alone[2], alone[1])}}
