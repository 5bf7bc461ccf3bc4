"""StoreAlign (seed 003): vector registers -> UB in one of the 14 distribution modes, with a
byte mask, on the StoreAlign unit.  No CLI subcommand and no regression generator yet: it is
simulated on every backend (with the Python-driven bench and with its batch harness),
converted, linted and mutated through this entry.
"""

from __future__ import annotations

import random

import numpy as np

from tilecosim.hdl.align.store import StoreAlignUnit
from tilecosim.model.load_align import WIDTHS, StoreDist
from tilecosim.sim.batch_align import run_store_align_batches
from tilecosim.sim.benches.align import StoreCase, compare_store_align, simulate_store_align

from .base import Operation, Top, Unit
from .load_align import UB_SIZE, VL, random_address, random_addressing

__all__ = ["StoreAlign", "random_store_case"]


def random_store_case(rng: random.Random, dist: StoreDist | None = None,
                      vl: int = VL) -> StoreCase:
    """A StoreAlign of ``dist`` (any when None) with random registers and mask."""
    dist = dist if dist is not None else rng.choice(list(StoreDist))
    t = rng.choice(list(WIDTHS))
    rt = 2 if rng.random() < 0.1 else 1
    nregs = 2 if (dist.dual or rt == 2) else 1
    regs = tuple(bytes(rng.randrange(256) for _ in range(vl)) for _ in range(nregs))
    mask = bytes(rng.randrange(2) for _ in range(vl))
    return StoreCase(dist.name, t, random_address(rng), regs, mask, random_addressing(rng), rt)


def _unit(profile: str = "finite"):
    return StoreAlignUnit()


class StoreAlign(Operation):
    name = "store-align"
    seed_name = "StoreAlign"
    tops = (Top("store_align_unit", _unit, "StoreAlign unit, VL = 256"),)
    tests = ("tests/hdl/test_align.py", "tests/hdl/test_kernels.py")
    units = (Unit("StoreAlignUnit", "align/store.py", area=(("store_align_unit (VL = 256)", {}),),
                  proof="store-align", proof_args={"vl": 64}, quick=True),)
    harness_batch = 256
    contract_module = "store_align_unit"
    contract_notes = """\
The StoreAlign unit (seed 003, D11, D12) at VL = 256 bytes: vector registers to UB.

- `op`: the LoadAlign fields (with the StoreDist code in `dist`), the registers `src0`
  and `src1` and the byte `mask` (one bit per byte of the register).
- `ub_waddr`, `ub_wen`, `ub_wdata`, `ub_wbe`: a UB write port 2 x VL bytes wide: in each
  cycle with `ub_wen` high, UB[ub_waddr + k] takes byte k of `ub_wdata` where bit k of
  `ub_wbe` is set. A write past the end of UB fails the run; the final UB image is
  compared with the model's.
- `res`: one result per op, in op order: `next_addr` (compared for PostUpdate) and
  `fault`. A faulting op writes nothing.
- `ub_size`: the bytes of UB, constant during a run (OutOfBounds).
"""

    def reference(self):
        return StoreAlignUnit(vl=VL)

    def cross_check(self, backend: str, harness: bool = False) -> dict:
        rng = random.Random(8)
        cases = [random_store_case(rng, d, VL) for d in StoreDist for _ in range(3)]
        ub = np.random.default_rng(8).integers(0, 256, UB_SIZE, dtype=np.uint8)
        timing = {}
        if harness:
            out = run_store_align_batches([(cases, ub, 5, 0.8, 0.75)], VL, backend,
                                          design=self.design, **self.harness_args())[0]
            assert out["error"] is None, out["error"]
            final, results, timed_out = out["mem"], out["results"], out["timed_out"]
            timing.update(accept=out["accept"], out=out["out"])
        else:
            final, results, timed_out = simulate_store_align(cases, ub, VL, seed=5, p_op=0.8,
                                                             p_ready=0.75, backend=backend,
                                                             timing=timing, design=self.design)
        assert compare_store_align(cases, ub, final, results, timed_out, VL) == []
        o = timing["accept"][0]
        return {"accept": [c - o for c in timing["accept"]],
                "out": [c - o for c in timing["out"]], "faults": [r[1] for r in results]}
