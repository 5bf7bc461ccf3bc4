"""LoadAlign (seed 003): UB -> vector registers in one of the 18 distribution modes, on the
LoadAlign unit.  Its documented short form is ``la`` (coverage bins).

Coverage bins (125, with the 10 edge bins of :data:`tilecosim.ops.align.EDGES`)
  ``la.mode:DIST/T``               -- every legal distribution mode x data type
  ``la.addressing:DIST/A``         -- mode x plain, post_update, addr_reg
  ``la.trait:T``                   -- RegTraitNumTwo with b32 and b64
  ``la.fault:KIND``                -- IllegalParameter (a quarter of them with a dist code no
                                      mode has), Alignment, OutOfBounds
  ``la.operands:far``              -- the address or the PostUpdate/AddrReg value drawn over
                                      its 32-bit encoding (legal or faulting)
"""

from __future__ import annotations

import random
import re

import numpy as np

from tilecosim.hdl.align.load import LoadAlignUnit
from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault
from tilecosim.model.load_align import WIDTHS, LoadDist, load_align, load_align_geometry
from tilecosim.sim.batch_align import run_load_align_batches
from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align

from .align import (ADDRESSING, UB_SIZE, VL, AlignOperation, random_address,
                    random_addressing)
from .base import Outcome, Top, Unit, by_class

__all__ = ["LoadAlign", "random_load_case", "model_fault", "VL", "UB_SIZE"]


def random_load_case(rng: random.Random, dist: LoadDist | None = None) -> AlignCase:
    """A LoadAlign of ``dist`` (any when None): random type, address, addressing and, one
    time in ten, RegTraitNumTwo."""
    dist = dist if dist is not None else rng.choice(list(LoadDist))
    t = rng.choice(list(WIDTHS))
    how = random_addressing(rng)
    return AlignCase(dist.name, t, random_address(rng), how, 2 if rng.random() < 0.1 else 1)


def model_fault(c: AlignCase) -> Fault | None:
    """The model's fault of ``c`` on a UB of the regress size (None: it reads)."""
    try:
        load_align(Buffer("UB", UB_SIZE), c.addr, c.dist, c.t, c.how, VL, c.reg_trait)
    except Fault as f:
        return f
    return None


def _unit(profile: str = "finite"):
    return LoadAlignUnit()


class LoadAlign(AlignOperation):
    name = "load-align"
    seed_name = "LoadAlign"
    tops = (Top("load_align_unit", _unit, "LoadAlign unit, VL = 256"),)
    tests = ("tests/hdl/test_align.py", "tests/hdl/test_kernels.py")
    units = (Unit("LoadAlignUnit", "align/load.py", area=(("load_align_unit (VL = 256)", {}),),
                  proof="load-align", proof_args={"vl": 64}, quick=True),)
    short = "la"
    modes = LoadDist
    b64_modes = (LoadDist.DIST_NORM,)
    misaligned_mode = LoadDist.DIST_DINTLV_B8
    contract_module = "load_align_unit"
    capabilities = {"faults": (True, False), "modes": tuple(d.name for d in LoadDist),
                    "dtypes": tuple(WIDTHS), "addressing": ADDRESSING, "reg_trait": (1, 2)}
    contract_notes = """\
The LoadAlign unit (seed 003, D11, D12) at VL = 256 bytes: UB to two vector registers.

- `op`: `dist` is the LoadDist code (D12; a code no mode has faults IllegalParameter),
  `t` log2 of the element bytes (0 b8 .. 3 b64), `addr` the UB byte address, `mode`
  how the address is formed, `value` the PostUpdate stride or AddrReg offset in
  elements, `reg_trait` 2 for RegTraitNumTwo.
- `ub_addr`, `ub_en`, `ub_data`: a synchronous UB read port 2 x VL bytes wide: in the
  cycle after a cycle with `ub_en` high, `ub_data` holds UB[ub_addr .. ub_addr + 2 VL -
  1] (zeros past the end), and it keeps that data while `ub_en` is low. Reads have no
  handshake: a read can be made every cycle.
- `res`: one result per op, in op order: `dst0`, `dst1` (`dst1` is compared for the
  modes with two registers and RegTraitNumTwo), `next_addr` (compared for PostUpdate),
  and `fault`. Registers of a faulting op are not compared.
- `ub_size`: the bytes of UB, constant during a run (OutOfBounds; `regress` uses 4096).
"""

    def reference(self):
        return LoadAlignUnit(vl=VL)

    def model_fault(self, case) -> Fault | None:
        return model_fault(case)

    def geometry(self, case) -> tuple[int, int]:
        return load_align_geometry(LoadDist[case.dist], VL)

    def draw(self, rng: random.Random, hint: str | None):
        if hint in self.edges():
            return self.draw_edge(rng, hint)
        point, _, value = (hint or "").partition(":")
        point = point.removeprefix("la.")
        kind = value if point == "fault" else None
        dist = rng.choice(list(LoadDist))
        t = rng.choice([w for w in WIDTHS if self.legal(dist, w)])
        how_kind = rng.choice(ADDRESSING)
        trait = 1
        if point == "mode":
            d, t = value.split("/")
            dist = LoadDist[d]
        elif point == "addressing":
            d, how_kind = value.split("/")
            dist = LoadDist[d]
            t = rng.choice([w for w in WIDTHS if self.legal(dist, w)])
        elif point == "trait":
            dist, t, trait = LoadDist.DIST_NORM, value, 2
            how_kind = rng.choice(["plain", "post_update"])
        dist, t, addr, how = self.operands(rng, point, kind, dist, t, how_kind)
        c = AlignCase(self.dist_code(rng, kind, dist), t, addr, how, trait)
        fault = model_fault(c)
        return c, fault, self.hits(c, fault)

    def run(self, items, backend, image, seed, stall) -> Outcome:
        res = simulate_load_align(items, image, VL, seed=seed, p_op=1 - stall,
                                  p_ready=1 - stall, backend=backend, design=self.design)
        return self._outcome(items, image, res)

    def waveform(self, item, backend, image, seed, stall, path) -> bool:
        simulate_load_align([item], image, VL, seed=seed, p_op=1 - stall, p_ready=1 - stall,
                            backend=backend, design=self.design,
                            **self.wave_option(backend, path))
        return True

    def run_many(self, batches, backend, image) -> list[Outcome]:
        if backend == "amaranth":
            return super().run_many(batches, backend, image)
        got = run_load_align_batches([(items, seed, 1 - stall, 1 - stall)
                                      for items, seed, stall in batches], image, VL, backend,
                                     design=self.design, **self.harness_args())
        return [self._outcome(items, image, res) for (items, _, _), res in zip(batches, got)]

    def _outcome(self, items, image, res) -> Outcome:
        by_index = {}
        for line in compare_load_align(items, image, res, VL):
            m = re.match(r"op (\d+) (.*)", line)
            by_index[int(m[1]) if m else -1] = m[2] if m else line
        cycles = res.out[-1] - res.accept[0] + 1 if res.out and res.accept else 0
        classes = by_class([self.scenario_class(c) for c in items], res.accept, res.out,
                           [1] * len(items))
        return Outcome(by_index, res.waveform if res.timed_out else None, cycles, len(items),
                       classes)

    def cross_check(self, backend: str, harness: bool = False) -> dict:
        rng = random.Random(7)
        cases = [random_load_case(rng, d) for d in LoadDist for _ in range(3)]
        ub = np.random.default_rng(7).integers(0, 256, UB_SIZE, dtype=np.uint8)
        if harness:
            res = run_load_align_batches([(cases, 3, 0.8, 0.75)], ub, VL, backend,
                                         design=self.design, **self.harness_args())[0]
        else:
            res = simulate_load_align(cases, ub, VL, seed=3, p_op=0.8, p_ready=0.75,
                                      backend=backend, design=self.design)
        assert compare_load_align(cases, ub, res, VL) == []
        o = res.accept[0]
        return {"accept": [c - o for c in res.accept], "out": [c - o for c in res.out],
                "faults": [r[3] for r in res.results]}
