"""StoreAlign (seed 003): one or two vector registers -> UB in one of the 14 distribution
modes, under a byte mask, on the StoreAlign unit.  Its documented short form is ``sa``
(coverage bins).

Coverage bins (94)
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
import shlex

import numpy as np

from tilecosim.hdl.align.store import StoreAlignUnit
from tilecosim.model.buffers import Buffer
from tilecosim.model.display import seeded_memory
from tilecosim.model.faults import Fault, FaultKind
from tilecosim.model.load_align import (WIDTHS, Addressing, MaskPattern, StoreDist, create_mask,
                                        store_align)
from tilecosim.sim.batch_align import run_store_align_batches
from tilecosim.sim.benches.align import (StoreCase, compare_store_align, simulate_store_align,
                                         store_align_run)

from .base import Operation, Outcome, Top, Unit, by_class
from .load_align import ADDRESSING, FAULTS, UB_SIZE, VL, random_address, random_addressing

__all__ = ["StoreAlign", "random_store_case", "store_sources", "sa_legal", "MASKS"]

#: the ``--mask`` spellings: a CreateMask pattern of the data type, or one random bit per
#: byte lane drawn from the source seed
MASKS = ("random",) + tuple(p.name for p in MaskPattern)

#: the families whose mask selects elements (the others write every byte)
MASKED = ("NORM", "PACK", "PACK4")

#: the codes of the 5-bit dist field that no StoreDist has (D12)
UNUSED_CODES = tuple(v for v in range(32) if v not in {d.value for d in StoreDist})


def sa_legal(dist: StoreDist, t: str) -> bool:
    return t != "b64" or dist in (StoreDist.DIST_NORM, StoreDist.DIST_PACK_B64)


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


def is_far(case: StoreCase) -> bool:
    """Does the address or the addressing value of ``case`` lie beyond 16 bits?"""
    return case.addr >= 1 << 16 or abs(case.how.value) >= 1 << 16


def _mask_spec(case: StoreCase) -> str | None:
    o = case.origin
    return o[o.index("--mask") + 1] if "--mask" in o else None


def sa_bins(case: StoreCase, fault: Fault | None) -> list[str]:
    far = ["sa.operands:far"] if is_far(case) else []
    if fault is not None:
        return [f"sa.fault:{FaultKind(fault.code).name}"] + far
    out = [f"sa.mode:{case.dist}/{case.t}", f"sa.addressing:{case.dist}/{case.how.kind}"]
    if case.reg_trait == 2:
        out.append(f"sa.trait:{case.t}")
    if case.reg_trait == 2 or StoreDist[case.dist].family in MASKED:
        spec = _mask_spec(case)
        if spec in ("ALL", "ALLF"):
            out.append("sa.mask:" + ("all" if spec == "ALL" else "none"))
    return out + far


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


class StoreAlign(Operation):
    name = "store-align"
    seed_name = "StoreAlign"
    tops = (Top("store_align_unit", _unit, "StoreAlign unit, VL = 256"),)
    tests = ("tests/hdl/test_align.py", "tests/hdl/test_kernels.py")
    units = (Unit("StoreAlignUnit", "align/store.py", area=(("store_align_unit (VL = 256)", {}),),
                  proof="store-align", proof_args={"vl": 64}, quick=True),)
    regress = True
    batch = {"amaranth": 40, "verilog": 120}
    harness_batch = 256
    image_file = "ub-seed{seed}.bin"
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

    def traits(self, item, fault) -> dict:
        c = item
        out = {"faults": fault is not None, "dtypes": c.t, "addressing": c.how.kind,
               "reg_trait": c.reg_trait}
        if isinstance(c.dist, str):                 # a code no mode has: a fault alone
            out["modes"] = c.dist
        return out

    def bin_traits(self, bin_: str) -> dict:
        point, _, value = bin_.partition(":")
        if point == "sa.fault":
            return {"faults": {True}}
        if point == "sa.operands":
            return {}
        if point == "sa.trait":
            return {"faults": {False}, "modes": {"DIST_NORM"}, "dtypes": {value},
                    "reg_trait": {2}}
        if point == "sa.mask":
            return {"faults": {False}, "modes": {d.name for d in StoreDist
                                                 if d.family in MASKED}}
        d, x = value.split("/")
        out = {"faults": {False}, "modes": {d}}
        out.update({"dtypes": {x}} if point == "sa.mode" else {"addressing": {x}})
        return out

    def bins(self) -> list[str]:
        out = []
        for d in StoreDist:
            out += [f"sa.mode:{d.name}/{t}" for t in WIDTHS if sa_legal(d, t)]
            out += [f"sa.addressing:{d.name}/{a}" for a in ADDRESSING]
        out += ["sa.trait:b32", "sa.trait:b64", "sa.mask:all", "sa.mask:none"]
        return out + [f"sa.fault:{k}" for k in FAULTS] + ["sa.operands:far"]

    def draw(self, rng: random.Random, hint: str | None):
        point, _, value = (hint or "").partition(":")
        kind = value if point == "sa.fault" else None
        s = self.design.supports
        dist = rng.choice(list(StoreDist))
        t = rng.choice([w for w in WIDTHS if sa_legal(dist, w)])
        how_kind = rng.choice(ADDRESSING)
        trait = 1
        mask = "random" if rng.random() < 0.7 else rng.choice(MASKS[1:])
        if point == "sa.mode":
            d, t = value.split("/")
            dist = StoreDist[d]
        elif point == "sa.addressing":
            d, how_kind = value.split("/")
            dist = StoreDist[d]
            t = rng.choice([w for w in WIDTHS if sa_legal(dist, w)])
        elif point == "sa.trait":
            dist, t, trait = StoreDist.DIST_NORM, value, 2
            how_kind = rng.choice(["plain", "post_update"])
        elif point == "sa.mask":
            mask = "ALL" if value == "all" else "ALLF"
            dist = rng.choice([d for d in StoreDist if d.family in MASKED
                               and d.name in s.get("modes", (d.name,))])
            t = rng.choice([w for w in WIDTHS if sa_legal(dist, w)])
        w = WIDTHS[t]
        how = Addressing() if how_kind == "plain" else \
            Addressing(how_kind, rng.randint(-2, 8) * 32 // w)
        addr = rng.randint(0, UB_SIZE // 32 - 20) * 32
        if kind == "IllegalParameter":
            dist, t = rng.choice([d for d in StoreDist if not sa_legal(d, "b64")]), "b64"
        elif kind == "Alignment":
            t, how = "b8", Addressing("post_update", rng.choice([1, 3, 17]))
            dist = StoreDist.DIST_NORM_B8
        elif kind == "OutOfBounds":
            addr = UB_SIZE - rng.randint(1, 4) * 32
            dist, how = StoreDist.DIST_NORM, Addressing()
        if point == "sa.operands":         # the address, the value or both over 16 bits
            far_addr, far_value = [(True, False), (False, True), (True, True)][rng.randrange(3)]
            if far_addr:
                addr = rng.getrandbits(rng.randint(17, 32)) & (~31 if rng.random() < 0.8 else ~0)
            if far_value:
                how = Addressing(rng.choice(["post_update", "addr_reg"]),
                                 rng.choice([1, -1]) * rng.getrandbits(rng.randint(17, 31)))
            if rng.random() < 0.25:      # AddrReg from a far base back inside UB (D11)
                size = WIDTHS[t]
                addr = rng.randint(1 << 11, (1 << 26) - 1) * 32
                near = rng.randint(0, UB_SIZE // 32 - 20) * 32
                how = Addressing("addr_reg", (near - addr) // size)
        code = dist.name
        if kind == "IllegalParameter" and rng.random() < 0.25:    # a code no mode has (D12)
            code = rng.choice(UNUSED_CODES)
        c = self.case(code, t, addr, how, trait, rng.getrandbits(31), mask)
        fault = model_fault(c)
        return c, fault, sa_bins(c, fault)

    @staticmethod
    def case(dist, t: str, addr: int, how: Addressing, reg_trait: int, src_seed: int | None,
             mask: str, vl: int = VL) -> StoreCase:
        """A StoreAlign whose registers and mask :func:`store_sources` makes, with the
        ``tilecosim store-align`` options that rebuild them."""
        mode = StoreDist[dist] if isinstance(dist, str) else dist
        regs, m = store_sources(src_seed, mask, t, registers_needed(mode, reg_trait), vl)
        origin = (("--src-seed", str(src_seed)) if src_seed is not None else ()) + ("--mask", mask)
        return StoreCase(dist, t, addr, regs, m, how, reg_trait, origin)

    def image(self, seed: int):
        """UB before the stores: LoadAlign's image of the same seed (one ``ub-seed<N>.bin``
        for both operations' reproduce lines)."""
        return seeded_memory(seed + 2, UB_SIZE)

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

    def scenario_class(self, item) -> str:
        """The mode's family (NORM, FIRST_ELEMENT, PACK, PACK4, INTLV), RegTraitNumTwo, or
        "fault"."""
        c = item
        if model_fault(c) is not None:
            return "fault"
        return "RegTraitNumTwo" if c.reg_trait == 2 else StoreDist[c.dist].family

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        c = item
        parts = ["tilecosim", "store-align", "--dist", str(c.dist), "--dtype", c.t, "--ub",
                 shlex.quote(str(image_path)), "--addr", str(c.addr), "--vl", str(VL)]
        if c.how.kind == "post_update":
            parts += ["--post-update", str(c.how.value)]
        elif c.how.kind == "addr_reg":
            parts += ["--addr-reg", str(c.how.value)]
        if c.reg_trait == 2:
            parts += ["--reg-trait", "2"]
        parts += list(c.origin)
        parts += [shlex.quote(o) for o in self.design.options()]
        return " ".join(parts + ["--backend", backend])

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
