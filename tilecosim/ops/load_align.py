"""LoadAlign (seed 003): UB -> vector registers in one of the 18 distribution modes, on the
LoadAlign unit.  Its documented short form is ``la`` (coverage bins).

Coverage bins (115)
  ``la.mode:DIST/T``               -- every legal distribution mode x data type
  ``la.addressing:DIST/A``         -- mode x plain, post_update, addr_reg
  ``la.trait:T``                   -- RegTraitNumTwo with b32 and b64
  ``la.fault:KIND``                -- IllegalParameter (a quarter of them with a dist code no
                                      mode has), Alignment, OutOfBounds
  ``la.operands:far``              -- the address or the PostUpdate/AddrReg value drawn over
                                      its 32-bit encoding (legal or faulting)
"""

from __future__ import annotations

import dataclasses
import random
import re
import shlex

import numpy as np

from tilecosim.hdl.align.load import LoadAlignUnit
from tilecosim.model.buffers import Buffer
from tilecosim.model.display import seeded_memory
from tilecosim.model.faults import Fault, FaultKind
from tilecosim.model.load_align import WIDTHS, Addressing, LoadDist, load_align
from tilecosim.sim.batch_align import run_load_align_batches
from tilecosim.sim.benches.align import AlignCase, compare_load_align, simulate_load_align

from .base import Operation, Outcome, Top, Unit, by_class

__all__ = ["LoadAlign", "la_bins", "la_legal", "random_addressing", "random_address",
           "random_load_case", "VL"]

UB_SIZE = 1 << 12
VL = 256
FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds")
ADDRESSING = ("plain", "post_update", "addr_reg")


def la_legal(dist: LoadDist, t: str) -> bool:
    return t != "b64" or dist is LoadDist.DIST_NORM


#: the codes of the 5-bit dist field that no LoadDist has (D12)
UNUSED_CODES = tuple(v for v in range(32) if v not in {d.value for d in LoadDist})


def is_far(case: AlignCase) -> bool:
    """Does the address or the addressing value of ``case`` lie beyond 16 bits?"""
    return case.addr >= 1 << 16 or abs(case.how.value) >= 1 << 16


def la_bins(case: AlignCase, fault: Fault | None) -> list[str]:
    far = ["la.operands:far"] if is_far(case) else []
    if fault is not None:
        return [f"la.fault:{FaultKind(fault.code).name}"] + far
    out = [f"la.mode:{case.dist}/{case.t}", f"la.addressing:{case.dist}/{case.how.kind}"]
    if case.reg_trait == 2:
        out.append(f"la.trait:{case.t}")
    return out + far


def random_addressing(rng: random.Random, kind: str | None = None) -> Addressing:
    kind = kind or rng.choice(["plain", "post_update", "addr_reg"])
    if kind == "plain":
        return Addressing()
    return Addressing(kind, rng.randint(-4, 12) * rng.choice([1, 4, 8, 16, 32]))


def random_address(rng: random.Random) -> int:
    """A UB address, aligned or not, within the first 2 KB."""
    return rng.randint(0, 60) * rng.choice([1, 2, 4, 16, 32])


def random_load_case(rng: random.Random, dist: LoadDist | None = None) -> AlignCase:
    """A LoadAlign of ``dist`` (any when None): random type, address, addressing and, one
    time in ten, RegTraitNumTwo."""
    dist = dist if dist is not None else rng.choice(list(LoadDist))
    t = rng.choice(list(WIDTHS))
    how = random_addressing(rng)
    return AlignCase(dist.name, t, random_address(rng), how, 2 if rng.random() < 0.1 else 1)


def _model_fault(c: AlignCase) -> Fault | None:
    try:
        load_align(Buffer("UB", UB_SIZE), c.addr, c.dist, c.t, c.how, VL, c.reg_trait)
    except Fault as f:
        return f
    return None


def _unit(profile: str = "finite"):
    return LoadAlignUnit()


class LoadAlign(Operation):
    name = "load-align"
    seed_name = "LoadAlign"
    tops = (Top("load_align_unit", _unit, "LoadAlign unit, VL = 256"),)
    tests = ("tests/hdl/test_align.py", "tests/hdl/test_kernels.py")
    units = (Unit("LoadAlignUnit", "align/load.py", area=(("load_align_unit (VL = 256)", {}),),
                  proof="load-align", proof_args={"vl": 64}, quick=True),)
    regress = True
    batch = {"amaranth": 40, "verilog": 120}
    harness_batch = 256
    image_file = "ub-seed{seed}.bin"
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

    def traits(self, item, fault) -> dict:
        c = item
        out = {"faults": fault is not None, "dtypes": c.t, "addressing": c.how.kind,
               "reg_trait": c.reg_trait}
        if isinstance(c.dist, str):                 # a code no mode has: a fault alone
            out["modes"] = c.dist
        return out

    def bin_traits(self, bin_: str) -> dict:
        point, _, value = bin_.partition(":")
        if point == "la.fault":
            return {"faults": {True}}
        if point == "la.operands":
            return {}
        if point == "la.trait":
            return {"faults": {False}, "modes": {"DIST_NORM"}, "dtypes": {value},
                    "reg_trait": {2}}
        d, x = value.split("/")
        out = {"faults": {False}, "modes": {d}}
        out.update({"dtypes": {x}} if point == "la.mode" else {"addressing": {x}})
        return out

    def bins(self) -> list[str]:
        out = []
        for d in LoadDist:
            out += [f"la.mode:{d.name}/{t}" for t in WIDTHS if la_legal(d, t)]
            out += [f"la.addressing:{d.name}/{a}" for a in ADDRESSING]
        out += ["la.trait:b32", "la.trait:b64"]
        return out + [f"la.fault:{k}" for k in FAULTS] + ["la.operands:far"]

    def draw(self, rng: random.Random, hint: str | None):
        point, _, value = (hint or "").partition(":")
        kind = value if point == "la.fault" else None
        dist = rng.choice(list(LoadDist))
        t = rng.choice([w for w in WIDTHS if la_legal(dist, w)])
        how_kind = rng.choice(ADDRESSING)
        trait = 1
        if point == "la.mode":
            d, t = value.split("/")
            dist = LoadDist[d]
        elif point == "la.addressing":
            d, how_kind = value.split("/")
            dist = LoadDist[d]
            t = rng.choice([w for w in WIDTHS if la_legal(dist, w)])
        elif point == "la.trait":
            dist, t, trait = LoadDist.DIST_NORM, value, 2
            how_kind = rng.choice(["plain", "post_update"])
        w = WIDTHS[t]
        how = Addressing() if how_kind == "plain" else \
            Addressing(how_kind, rng.randint(-2, 8) * 32 // w)
        addr = rng.randint(0, UB_SIZE // 32 - 20) * 32
        if kind == "IllegalParameter":
            dist, t = rng.choice([d for d in LoadDist if d is not LoadDist.DIST_NORM]), "b64"
        elif kind == "Alignment":
            t, how = "b8", Addressing("post_update", rng.choice([1, 3, 17]))
            dist = LoadDist.DIST_DINTLV_B8
        elif kind == "OutOfBounds":
            addr = UB_SIZE - rng.randint(1, 4) * 32
            dist, how = LoadDist.DIST_NORM, Addressing()
        if point == "la.operands":         # the address, the value or both over 32 bits
            far_addr, far_value = [(True, False), (False, True), (True, True)][rng.randrange(3)]
            if far_addr:
                addr = rng.getrandbits(rng.randint(17, 32)) & (~31 if rng.random() < 0.8 else ~0)
            if far_value:
                how = Addressing(rng.choice(["post_update", "addr_reg"]),
                                 rng.choice([1, -1]) * rng.getrandbits(rng.randint(17, 31)))
            if rng.random() < 0.25:      # AddrReg from a far base back inside UB: D11
                # checks the read at base + offset alone
                size = WIDTHS[t]
                addr = rng.randint(1 << 11, (1 << 26) - 1) * 32     # 64 KB .. 2 GB
                near = rng.randint(0, UB_SIZE // 32 - 20) * 32
                how = Addressing("addr_reg", (near - addr) // size)
        c = AlignCase(dist.name, t, addr, how, trait)
        if kind == "IllegalParameter" and rng.random() < 0.25:    # a code no mode has (D12)
            c = dataclasses.replace(c, dist=rng.choice(UNUSED_CODES))
        fault = _model_fault(c)
        return c, fault, la_bins(c, fault)

    def image(self, seed: int):
        return seeded_memory(seed + 2, UB_SIZE)

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

    def scenario_class(self, item) -> str:
        """The mode's family (NORM, BRC, US, DS, UNPACK, UNPACK4, BLK, E2B, DINTLV),
        RegTraitNumTwo, or "fault"."""
        c = item
        if _model_fault(c) is not None:
            return "fault"
        return "RegTraitNumTwo" if c.reg_trait == 2 else LoadDist[c.dist].family

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        c = item
        parts = ["tilecosim", "load-align", "--dist", str(c.dist), "--dtype", c.t, "--ub",
                 shlex.quote(str(image_path)), "--addr", str(c.addr), "--vl", str(VL)]
        if c.how.kind == "post_update":
            parts += ["--post-update", str(c.how.value)]
        elif c.how.kind == "addr_reg":
            parts += ["--addr-reg", str(c.how.value)]
        if c.reg_trait == 2:
            parts += ["--reg-trait", "2"]
        parts += [shlex.quote(o) for o in self.design.options()]
        return " ".join(parts + ["--backend", backend])

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
