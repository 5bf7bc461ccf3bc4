"""StoreAlign (seed 003): one or two vector registers -> UB in one of the 14 distribution
modes, under a byte mask, on the StoreAlign unit.  Its documented short form is ``sa``
(coverage bins).

Coverage bins (104, with the 10 edge bins of :data:`tilecosim.ops.align.EDGES`)
  ``sa.mode:DIST/T``               -- every legal distribution mode x data type
  ``sa.addressing:DIST/A``         -- mode x plain, post_update, addr_reg
  ``sa.trait:T``                   -- RegTraitNumTwo with b32 and b64
  ``sa.mask:all`` / ``sa.mask:none`` -- a masked mode (NORM, PACK, PACK4) with every element
                                      enabled / none (it writes nothing)
  ``sa.fault:KIND``                -- IllegalParameter (a quarter of them with a dist code no
                                      mode has), Alignment, OutOfBounds
  ``sa.operands:far``              -- the address or the PostUpdate/AddrReg value drawn over
                                      16 bits (legal or faulting)

A scenario's registers and mask come from a seed (``--src-seed``) and a mask spelling
(``--mask``): :func:`store_sources`, which ``tilecosim store-align`` calls too, so that its
reproduce line rebuilds them.
"""

from __future__ import annotations

import random
import re

import numpy as np

from tilecosim.hdl.align.store import StoreAlignUnit
from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault
from tilecosim.model.load_align import (WIDTHS, Addressing, MaskPattern, StoreDist, create_mask,
                                        store_align, store_align_geometry)
from tilecosim.sim.batch_align import run_store_align_batches
from tilecosim.sim.benches.align import (StoreCase, compare_store_align, simulate_store_align,
                                         store_align_run)

from .align import (ADDRESSING, UB_SIZE, VL, AlignOperation, random_address,
                    random_addressing)
from .base import Outcome, Top, Unit, by_class

__all__ = ["StoreAlign", "random_store_case", "store_sources", "MASKS"]

#: the ``--mask`` spellings: a CreateMask pattern of the data type, or one random bit per
#: byte lane drawn from the source seed
MASKS = ("random",) + tuple(p.name for p in MaskPattern)

#: the families whose mask selects elements (the others write every byte)
MASKED = ("NORM", "PACK", "PACK4")

def registers_needed(dist, reg_trait: int) -> int:
    """The registers a StoreAlign of ``dist`` takes: two for INTLV and RegTraitNumTwo."""
    return 2 if reg_trait == 2 or (isinstance(dist, StoreDist) and dist.dual) else 1


def store_sources(src_seed: int | None, mask: str, t: str, nregs: int,
                  vl: int = VL) -> tuple[tuple, bytes]:
    """The source registers (``nregs`` of VL bytes) and the mask (one 0/1 byte per lane).

    Registers: with ``src_seed`` None a ramp (element k of ``t`` in src0 holds k, in src1
    holds VL / sizeof(t) + k), else random bytes from ``numpy.random.default_rng(src_seed)``.
    Mask: ``random`` draws one bit per lane from the same generator, after the registers
    (seed 0 when ``src_seed`` is None); a :class:`MaskPattern` name is CreateMask<t>."""
    size = WIDTHS[t]
    rng = np.random.default_rng(0 if src_seed is None else src_seed)
    if src_seed is None:
        n = vl // size
        ramp = np.arange(2 * n, dtype=np.uint64).astype(f"<u{size}").view(np.uint8)
        regs = (ramp[:vl], ramp[vl:])
    else:
        src = rng.integers(0, 256, (2, vl), dtype=np.uint8)
        regs = (src[0], src[1])
    if mask == "random":
        m = rng.integers(0, 2, vl, dtype=np.uint8)
    else:
        m = create_mask(t, MaskPattern[mask], vl).astype(np.uint8)
    return tuple(r.tobytes() for r in regs[:nregs]), m.tobytes()


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


def _mask_spec(case: StoreCase) -> str | None:
    o = case.origin
    return o[o.index("--mask") + 1] if "--mask" in o else None


def model_fault(c: StoreCase, vl: int = VL) -> Fault | None:
    """The model's fault of ``c`` on a UB of the regress size (None: it writes)."""
    try:
        store_align(Buffer("UB", UB_SIZE), c.addr, [np.frombuffer(r, np.uint8) for r in c.regs],
                    c.dist, c.t, np.frombuffer(c.mask, np.uint8).astype(bool), c.how, vl,
                    c.reg_trait)
    except Fault as f:
        return f
    return None


def _unit(profile: str = "finite"):
    return StoreAlignUnit()


class StoreAlign(AlignOperation):
    name = "store-align"
    seed_name = "StoreAlign"
    tops = (Top("store_align_unit", _unit, "StoreAlign unit, VL = 256"),)
    tests = ("tests/hdl/test_align.py", "tests/hdl/test_kernels.py")
    units = (Unit("StoreAlignUnit", "align/store.py", area=(("store_align_unit (VL = 256)", {}),),
                  proof="store-align", proof_args={"vl": 64}, quick=True),)
    short = "sa"
    modes = StoreDist
    b64_modes = (StoreDist.DIST_NORM, StoreDist.DIST_PACK_B64)
    misaligned_mode = StoreDist.DIST_NORM_B8
    contract_module = "store_align_unit"
    capabilities = {"faults": (True, False), "modes": tuple(d.name for d in StoreDist),
                    "dtypes": tuple(WIDTHS), "addressing": ADDRESSING, "reg_trait": (1, 2)}
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

    def model_fault(self, case) -> Fault | None:
        return model_fault(case)

    def bin_traits(self, bin_: str) -> dict:
        if bin_.startswith("sa.mask:"):
            return {"faults": {False}, "modes": {d.name for d in StoreDist
                                                 if d.family in MASKED}}
        return super().bin_traits(bin_)

    def more_bins(self) -> list[str]:
        return ["sa.mask:all", "sa.mask:none"]

    def more_hits(self, case) -> list[str]:
        if case.reg_trait == 2 or StoreDist[case.dist].family in MASKED:
            spec = _mask_spec(case)
            if spec in ("ALL", "ALLF"):
                return ["sa.mask:" + ("all" if spec == "ALL" else "none")]
        return []

    def geometry(self, case) -> tuple[int, int]:
        return store_align_geometry(StoreDist[case.dist], case.t, VL)

    def draw(self, rng: random.Random, hint: str | None):
        if hint in self.edges():
            return self.draw_edge(rng, hint)
        point, _, value = (hint or "").partition(":")
        point = point.removeprefix("sa.")
        kind = value if point == "fault" else None
        s = self.design.supports
        dist = rng.choice(list(StoreDist))
        t = rng.choice([w for w in WIDTHS if self.legal(dist, w)])
        how_kind = rng.choice(ADDRESSING)
        trait = 1
        mask = "random" if rng.random() < 0.7 else rng.choice(MASKS[1:])
        if point == "mode":
            d, t = value.split("/")
            dist = StoreDist[d]
        elif point == "addressing":
            d, how_kind = value.split("/")
            dist = StoreDist[d]
            t = rng.choice([w for w in WIDTHS if self.legal(dist, w)])
        elif point == "trait":
            dist, t, trait = StoreDist.DIST_NORM, value, 2
            how_kind = rng.choice(["plain", "post_update"])
        elif point == "mask":
            mask = "ALL" if value == "all" else "ALLF"
            dist = rng.choice([d for d in StoreDist if d.family in MASKED
                               and d.name in s.get("modes", (d.name,))])
            t = rng.choice([w for w in WIDTHS if self.legal(dist, w)])
        dist, t, addr, how = self.operands(rng, point, kind, dist, t, how_kind)
        code = self.dist_code(rng, kind, dist)
        c = self.case(code, t, addr, how, trait, rng.getrandbits(31), mask)
        fault = model_fault(c)
        return c, fault, self.hits(c, fault)

    @staticmethod
    def case(dist, t: str, addr: int, how: Addressing, reg_trait: int, src_seed: int | None,
             mask: str, vl: int = VL) -> StoreCase:
        """A StoreAlign whose registers and mask :func:`store_sources` makes, with the
        ``tilecosim store-align`` options that rebuild them."""
        mode = StoreDist[dist] if isinstance(dist, str) else dist
        regs, m = store_sources(src_seed, mask, t, registers_needed(mode, reg_trait), vl)
        origin = (("--src-seed", str(src_seed)) if src_seed is not None else ()) + ("--mask", mask)
        return StoreCase(dist, t, addr, regs, m, how, reg_trait, origin)

    def run(self, items, backend, image, seed, stall) -> Outcome:
        out = store_align_run(items, image, VL, seed=seed, p_op=1 - stall, p_ready=1 - stall,
                              backend=backend, design=self.design)
        return self._outcome(items, image, out)

    def waveform(self, item, backend, image, seed, stall, path) -> bool:
        store_align_run([item], image, VL, seed=seed, p_op=1 - stall, p_ready=1 - stall,
                        backend=backend, design=self.design, **self.wave_option(backend, path))
        return True

    def run_many(self, batches, backend, image) -> list[Outcome]:
        if backend == "amaranth":
            return super().run_many(batches, backend, image)
        got = run_store_align_batches([(items, image, seed, 1 - stall, 1 - stall)
                                       for items, seed, stall in batches], VL, backend,
                                      design=self.design, **self.harness_args())
        return [self._outcome(items, image, res) for (items, _, _), res in zip(batches, got)]

    def _outcome(self, items, image, out) -> Outcome:
        by_index = {}
        problems = compare_store_align(items, image, out["mem"], out["results"],
                                       out["timed_out"], VL, out.get("waveform"))
        if out.get("error"):
            problems.append(out["error"])
        for line in problems:
            m = re.match(r"op (\d+) (.*)", line)
            key = int(m[1]) if m else -1
            by_index[key] = by_index.get(key, "") + ("; " if key in by_index else "") + \
                (m[2] if m else line)
        acc, ends = out["accept"], out["out"]
        cycles = ends[-1] - acc[0] + 1 if ends and acc else 0
        classes = by_class([self.scenario_class(c) for c in items], acc, ends, [1] * len(items))
        return Outcome(by_index, out.get("waveform") if out["timed_out"] else None, cycles,
                       len(items), classes)

    def repro_sources(self, case) -> list[str]:
        return list(case.origin)

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
