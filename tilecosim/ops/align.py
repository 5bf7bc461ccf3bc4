"""What the LoadAlign and StoreAlign operations share (seed 003): UB's size and VL in
``regress``, the addressing and address draws, and :class:`AlignOperation`, the base of both
-- the capability traits of a scenario and of a bin, the bins common to both, the operands
a scenario aimed at a fault or at far operands takes, the class of a scenario, the UB image
and the reproduce line.  Each operation adds its own case type, model call, bench and
bins."""

from __future__ import annotations

import dataclasses
import math
import random
import shlex

from tilecosim.model.display import seeded_memory
from tilecosim.model.faults import Fault, FaultKind
from tilecosim.model.load_align import WIDTHS, Addressing

from .base import FaultRule, Operation

__all__ = ["AlignOperation", "UB_SIZE", "VL", "FAULTS", "ADDRESSING", "random_addressing",
           "random_address", "is_far"]

UB_SIZE = 1 << 12
VL = 256
FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds")
ADDRESSING = ("plain", "post_update", "addr_reg")


def random_addressing(rng: random.Random, kind: str | None = None) -> Addressing:
    kind = kind or rng.choice(["plain", "post_update", "addr_reg"])
    if kind == "plain":
        return Addressing()
    return Addressing(kind, rng.randint(-4, 12) * rng.choice([1, 4, 8, 16, 32]))


def random_address(rng: random.Random) -> int:
    """A UB address, aligned or not, within the first 2 KB."""
    return rng.randint(0, 60) * rng.choice([1, 2, 4, 16, 32])


#: the edge bins (D17) of both operations, after their prefix, in the order regress draws
#: them: value -> what it holds
EDGES = {
    "edge:ub/end": "the access ends at the last byte of UB (legal)",
    "fault:ub/past": "the access ends past UB by the mode's alignment: one element for a "
                     "mode aligned to its element (OutOfBounds)",
    "fault:ub/past-byte": "a mode aligned to one byte whose access ends one byte past UB "
                          "(OutOfBounds)",
    "fault:ub/start-at-end": "the access starts at UB's size (OutOfBounds)",
    "edge:ub/start": "AddrReg with a negative offset reaches UB address 0 (legal)",
    "fault:ub/below": "AddrReg with a negative offset reaches below UB address 0 "
                      "(OutOfBounds)",
    "fault:code/dist": "a dist code no mode has (IllegalParameter)",
    "fault:order/IllegalParameter>Alignment": "a mode b64 does not have and an address "
                                              "not aligned: IllegalParameter wins",
    "fault:order/IllegalParameter>OutOfBounds": "a mode b64 does not have and an access "
                                                "past UB: IllegalParameter wins",
    "fault:order/Alignment>OutOfBounds": "an address not aligned and an access past UB: "
                                         "Alignment wins",
}


def is_far(case) -> bool:
    """Does the address or the addressing value of ``case`` lie beyond 16 bits?"""
    return case.addr >= 1 << 16 or abs(case.how.value) >= 1 << 16


def _runs(codes: list[int]) -> str:
    """``4, 5, 10, 21..31``: the codes, runs of three or more as ``a..b``."""
    out, k = [], 0
    while k < len(codes):
        j = k
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        out += [f"{codes[k]}..{codes[j]}"] if j - k >= 2 else [str(c) for c in codes[k:j + 1]]
        k = j + 1
    return ", ".join(out)


class AlignOperation(Operation):
    """An operation of the LoadAlign/StoreAlign units.  A subclass sets ``short`` (its bins'
    prefix), ``modes`` (its distribution enum, with ``DIST_NORM``), ``b64_modes`` (the modes
    b64 may take), ``misaligned_mode`` (the mode its Alignment scenarios use) and implements
    :meth:`model_fault`; its cases have ``dist`` (a mode's name, or a code no mode has),
    ``t``, ``addr``, ``how`` and ``reg_trait``."""

    short: str
    modes: type
    b64_modes: tuple
    misaligned_mode = None
    regress = True
    harness_batch = 256
    image_file = "ub-seed{seed}.bin"

    regress_sizes = f"`ub_size` = {UB_SIZE} bytes, VL = {VL} bytes"

    @property
    def fault_rules(self) -> tuple:
        """The fault table of the contract page (docs/contract.md), in the model's checking
        order (model/load_align.py): ea is the effective address, addr + offset x sizeof(T)
        with AddrReg, else addr; a mode's bytes and alignment are seed 003's table."""
        s = self.short
        unused = [k for k in range(32) if k not in {d.value for d in self.modes}]
        return (
            FaultRule("IllegalParameter", f"dist is a code no {self.seed_name} mode has "
                      f"({_runs(unused)})", "yes", (f"{s}.fault:code/dist",)),
            FaultRule("IllegalParameter", "T = b64 with a mode other than NORM", "yes",
                      (f"{s}.fault:order/IllegalParameter>Alignment",
                       f"{s}.fault:order/IllegalParameter>OutOfBounds")),
            FaultRule("IllegalParameter", "RegTraitNumTwo with a mode other than NORM, a T "
                      "other than b64 or b32, or AddrReg", "yes"),
            FaultRule("Alignment", "AddrReg: offset x sizeof(T) mod align != 0; PostUpdate: "
                      "stride x sizeof(T) mod align != 0; AddrReg: addr mod align != 0", "yes",
                      (f"{s}.fault:order/Alignment>OutOfBounds",)),
            FaultRule("Alignment", "ea mod align != 0", "yes"),
            FaultRule("OutOfBounds", "ea < 0", "yes",
                      (f"{s}.edge:ub/start", f"{s}.fault:ub/below")),
            FaultRule("OutOfBounds", "ea + bytes > ub_size (the mode's bytes)", "yes",
                      (f"{s}.edge:ub/end", f"{s}.fault:ub/past", f"{s}.fault:ub/past-byte",
                       f"{s}.fault:ub/start-at-end")),
        )

    def legal(self, dist, t: str) -> bool:
        return t != "b64" or dist in self.b64_modes

    def model_fault(self, case) -> Fault | None:
        """The model's fault of ``case`` on a UB of :data:`UB_SIZE` bytes (None: legal)."""
        raise NotImplementedError

    def traits(self, item, fault) -> dict:
        c = item
        out = {"faults": fault is not None, "dtypes": c.t, "addressing": c.how.kind,
               "reg_trait": c.reg_trait}
        if isinstance(c.dist, str):                 # a code no mode has: a fault alone
            out["modes"] = c.dist
        return out

    def bin_traits(self, bin_: str) -> dict:
        point, _, value = bin_.partition(":")
        point = point.removeprefix(f"{self.short}.")
        if point == "fault":
            return {"faults": {True}}
        if point == "edge":
            return {"faults": {False}, **({"addressing": {"addr_reg"}}
                                          if value == "ub/start" else {})}
        if point == "operands":
            return {}
        if point == "trait":
            return {"faults": {False}, "modes": {"DIST_NORM"}, "dtypes": {value},
                    "reg_trait": {2}}
        d, x = value.split("/")
        out = {"faults": {False}, "modes": {d}}
        out.update({"dtypes": {x}} if point == "mode" else {"addressing": {x}})
        return out

    def geometry(self, case) -> tuple[int, int]:
        """(bytes accessed, alignment) of the mode of ``case`` (a known mode)."""
        raise NotImplementedError

    def edges(self) -> list[str]:
        return [f"{self.short}.{e}" for e in EDGES]

    def edge_hits(self, case, fault) -> list[str]:
        """The edge bins ``case`` hits, judged from its fields and the model's ``fault``."""
        if isinstance(case.dist, int):
            return [f"{self.short}.fault:code/dist"] if fault is not None else []
        nbytes, align = self.geometry(case)
        how = case.how
        ea = case.addr + how.value * WIDTHS[case.t] if how.kind == "addr_reg" else case.addr
        end = ea + nbytes * case.reg_trait
        kind = FaultKind(fault.code).name if fault is not None else None
        out = []
        if kind is None:
            out += ["edge:ub/end"] if end == UB_SIZE else []
            out += ["edge:ub/start"] if ea == 0 and how.kind == "addr_reg" and how.value < 0 \
                else []
        elif kind == "OutOfBounds":
            out += ["fault:ub/past"] if end == UB_SIZE + align else []
            out += ["fault:ub/past-byte"] if end == UB_SIZE + 1 else []
            out += ["fault:ub/start-at-end"] if ea == UB_SIZE else []
            out += ["fault:ub/below"] if -math.lcm(align, WIDTHS[case.t]) <= ea < 0 else []
        elif kind == "IllegalParameter" and fault.field in ("dist", "T"):
            out += ["fault:order/IllegalParameter>Alignment"] if ea % align else []
            out += ["fault:order/IllegalParameter>OutOfBounds"] if end > UB_SIZE else []
        elif kind == "Alignment" and end > UB_SIZE and ea % align:
            out.append("fault:order/Alignment>OutOfBounds")
        return [f"{self.short}.{e}" for e in out]

    def draw_edge(self, rng: random.Random, hint: str):
        """A case aimed at the edge bin ``hint``: a legal one (or, for the pairs led by
        IllegalParameter, one of a mode b64 does not have) drawn, then moved onto the
        edge."""
        what = hint.partition(".")[2]
        s = self.short
        if what == "fault:code/dist":
            while True:
                c, fault, hit = self.draw(rng, f"{s}.fault:IllegalParameter")
                if isinstance(c.dist, int):
                    return c, fault, hit
        lead = f"{s}.fault:IllegalParameter" if "IllegalParameter>" in what else None
        while True:
            c, fault, _ = self.draw(rng, lead)
            if c.reg_trait == 1 and not isinstance(c.dist, int) and \
                    (fault is None) == (lead is None) and \
                    (what != "fault:ub/past-byte" or self.geometry(c)[1] == 1):
                break
        nbytes, align = self.geometry(c)
        size = WIDTHS[c.t]
        plain = type(c.how)()
        step = math.lcm(align, size)            # an AddrReg base and offset both aligned
        if what == "edge:ub/end":
            c = dataclasses.replace(c, addr=UB_SIZE - nbytes,
                                    how=plain if c.how.kind == "addr_reg" else c.how)
        elif what in ("fault:ub/past", "fault:ub/past-byte"):
            c = dataclasses.replace(c, addr=UB_SIZE - nbytes + align, how=plain)
        elif what == "fault:ub/start-at-end":
            c = dataclasses.replace(c, addr=UB_SIZE, how=plain)
        elif what in ("edge:ub/start", "fault:ub/below"):
            base = step * rng.randint(1, 8)
            below = step if what == "fault:ub/below" else 0
            c = dataclasses.replace(c, addr=base,
                                    how=type(c.how)("addr_reg", -(base + below) // size))
        elif what == "fault:order/IllegalParameter>Alignment":
            c = dataclasses.replace(c, addr=c.addr + 1, how=plain)
        elif what == "fault:order/IllegalParameter>OutOfBounds":
            c = dataclasses.replace(c, addr=UB_SIZE, how=plain)
        elif what == "fault:order/Alignment>OutOfBounds":
            c = dataclasses.replace(c, addr=UB_SIZE - nbytes + align + 1, how=plain)
        fault = self.model_fault(c)
        return c, fault, self.hits(c, fault)

    def bins(self) -> list[str]:
        s, out = self.short, []
        for d in self.modes:
            out += [f"{s}.mode:{d.name}/{t}" for t in WIDTHS if self.legal(d, t)]
            out += [f"{s}.addressing:{d.name}/{a}" for a in ADDRESSING]
        out += [f"{s}.trait:b32", f"{s}.trait:b64"] + self.more_bins()
        return out + [f"{s}.fault:{k}" for k in FAULTS] + [f"{s}.operands:far"] + self.edges()

    def more_bins(self) -> list[str]:
        """The operation's own bins, listed after the RegTraitNumTwo ones."""
        return []

    def hits(self, case, fault) -> list[str]:
        """The bins ``case`` (with the model's ``fault``) hits."""
        s = self.short
        far = [f"{s}.operands:far"] if is_far(case) else []
        edges = self.edge_hits(case, fault)
        if fault is not None:
            return [f"{s}.fault:{FaultKind(fault.code).name}"] + far + edges
        out = [f"{s}.mode:{case.dist}/{case.t}", f"{s}.addressing:{case.dist}/{case.how.kind}"]
        if case.reg_trait == 2:
            out.append(f"{s}.trait:{case.t}")
        return out + self.more_hits(case) + far + edges

    def more_hits(self, case) -> list[str]:
        """The operation's own bins a legal ``case`` hits."""
        return []

    def operands(self, rng: random.Random, point: str, kind: str | None, dist, t: str,
                 how_kind: str):
        """(mode, type, address, addressing) of a scenario aimed at ``point`` (without the
        prefix; ``kind`` the fault of a fault bin): the addressing value and an aligned
        address drawn, then reshaped to hit the fault, or drawn over 16 bits for
        ``operands``."""
        w = WIDTHS[t]
        how = Addressing() if how_kind == "plain" else \
            Addressing(how_kind, rng.randint(-2, 8) * 32 // w)
        addr = rng.randint(0, UB_SIZE // 32 - 20) * 32
        if kind == "IllegalParameter":
            dist, t = rng.choice([d for d in self.modes if not self.legal(d, "b64")]), "b64"
        elif kind == "Alignment":
            t, how = "b8", Addressing("post_update", rng.choice([1, 3, 17]))
            dist = self.misaligned_mode
        elif kind == "OutOfBounds":
            addr = UB_SIZE - rng.randint(1, 4) * 32
            dist, how = self.modes.DIST_NORM, Addressing()
        if point == "operands":            # the address, the value or both over 16 bits
            far_addr, far_value = [(True, False), (False, True), (True, True)][rng.randrange(3)]
            if far_addr:
                addr = rng.getrandbits(rng.randint(17, 32)) & (~31 if rng.random() < 0.8 else ~0)
            if far_value:
                how = Addressing(rng.choice(["post_update", "addr_reg"]),
                                 rng.choice([1, -1]) * rng.getrandbits(rng.randint(17, 31)))
            if rng.random() < 0.25:      # AddrReg from a far base back inside UB: D11
                # checks the access at base + offset alone
                size = WIDTHS[t]
                addr = rng.randint(1 << 11, (1 << 26) - 1) * 32     # 64 KB .. 2 GB
                near = rng.randint(0, UB_SIZE // 32 - 20) * 32
                how = Addressing("addr_reg", (near - addr) // size)
        return dist, t, addr, how

    def dist_code(self, rng: random.Random, kind: str | None, dist):
        """The ``dist`` of the case: the mode's name, or for a quarter of the
        IllegalParameter scenarios a code of the 5-bit field no mode has (D12)."""
        if kind == "IllegalParameter" and rng.random() < 0.25:
            return rng.choice([v for v in range(32)
                               if v not in {d.value for d in self.modes}])
        return dist.name

    def image(self, seed: int):
        """UB before the scenarios: one image per seed for both operations (one
        ``ub-seed<N>.bin`` for their reproduce lines)."""
        return seeded_memory(seed + 2, UB_SIZE)

    def scenario_class(self, item) -> str:
        """The mode's family (e.g. NORM, BRC, PACK, INTLV), RegTraitNumTwo, or "fault"."""
        c = item
        if self.model_fault(c) is not None:
            return "fault"
        return "RegTraitNumTwo" if c.reg_trait == 2 else self.modes[c.dist].family

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        c = item
        parts = ["tilecosim", self.name, "--dist", str(c.dist), "--dtype", c.t, "--ub",
                 shlex.quote(str(image_path)), "--addr", str(c.addr), "--vl", str(VL)]
        if c.how.kind == "post_update":
            parts += ["--post-update", str(c.how.value)]
        elif c.how.kind == "addr_reg":
            parts += ["--addr-reg", str(c.how.value)]
        if c.reg_trait == 2:
            parts += ["--reg-trait", "2"]
        parts += self.repro_sources(c)
        parts += [shlex.quote(o) for o in self.design.options()]
        return " ".join(parts + ["--backend", backend])

    def repro_sources(self, case) -> list[str]:
        """The options of the reproduce line that rebuild the case's own inputs."""
        return []
