"""LoadDataWithTranspose (seed 001): L1 -> L0A/L0B with a square-block transpose, on the
L1 -> L0 engine.  Its documented short form is ``ldt`` (coverage bins, file names).

Coverage bins (106, with the 30 edge bins below)
  ``ldt.form:DTYPE/V/ADDRMODE``    -- data type x V1/V2 (int4b has no V2) x addr_mode 0/1
  ``ldt.gaps:DTYPE/G``             -- dst_gap, dst_frac_gap, src_frac_gap all zero, or not
  ``ldt.repeat:DTYPE/R``           -- repeat_times 0 (V1), 1, many
  ``ldt.fault:KIND``               -- IllegalParameter, Alignment, OutOfBounds, ParameterRange
  ``ldt.fault:overlap``            -- IllegalParameter for destination fractals that overlap
  ``ldt.fault:far``                -- a faulting call with operands drawn over their 32-bit
                                      encodings (the engine's checks at full width)

Edge bins (D17; drawn first, :data:`EDGES`): L1's and L0's ends met and passed by the
smallest step the alignment allows, addrMode down to L1's start and below it, repeatTimes 0
with its destination at and past L0's end, every 16-bit field at 65535, with its top bit
set alone (past a buffer) and at 65536, and the pairs of rules that can meet.
``ldt.edge:`` bins are legal calls, ``ldt.fault:`` ones faulting calls, each judged from the
call itself (:func:`edge_bins`).
"""

from __future__ import annotations

import dataclasses
import random
import re
import shlex

import numpy as np

from tilecosim.hdl.l1l0.engine import L1L0Engine
from tilecosim.model.buffers import Buffer
from tilecosim.model.display import seeded_memory
from tilecosim.model.faults import Fault, FaultKind
from tilecosim.model.load_data import (FRACTAL, LDT_DTYPES, SQUARES, V2_DTYPES,
                                       LoadData2dTransposeParams as V1,
                                       LoadData2dTransposeParamsV2 as V2, plan_ldt)
from tilecosim.sim.batch_l1l0 import run_l1l0_batches
from tilecosim.sim.benches.load_data_with_transpose import (LdtCall, compare_l1l0,
                                                            run_and_compare_l1l0, simulate_l1l0)

from .base import FaultRule, Operation, Outcome, Top, Unit, by_class

__all__ = ["LoadDataWithTranspose", "ldt_bins", "random_ldt_call"]

L1_SIZE = 1 << 15
L0_SIZE = 1 << 14
MAX_LINES = 4 * 2048 // 32     # L0 lines of the largest call drawn (repeat 4, int4b squares)
FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds", "ParameterRange")


FIELDS = ("repeat_times", "start_index", "src_stride", "dst_gap", "dst_frac_gap")


#: the 16-bit fields (seed 001), under the seed's names
RANGE_FIELDS = {"start_index": "startIndex", "src_stride": "srcStride", "dst_gap": "dstGap",
                "dst_frac_gap": "dstFracGap", "src_frac_gap": "srcFracGap"}
TOP = 1 << 15                   # a 16-bit field's top bit

#: the edge bins (D17), in the order regress draws them: bin -> what it holds
EDGES = {
    "ldt.edge:l1/end": "the last source fractal ends at the end of L1 (legal)",
    "ldt.fault:l1/past": "the last source fractal ends 32 B past L1 (OutOfBounds)",
    "ldt.edge:l1/start": "addrMode descends to L1 address 0 (legal)",
    "ldt.fault:l1/below": "addrMode descends below L1 address 0 (OutOfBounds)",
    "ldt.edge:l0/end": "the last destination fractal ends at the end of L0 (legal)",
    "ldt.fault:l0/past": "the last destination fractal ends 512 B past L0 (OutOfBounds)",
    "ldt.edge:l0/repeat0-at-end": "repeatTimes 0 and dst = L0's size (legal: no access)",
    "ldt.edge:l0/repeat0-past": "repeatTimes 0 and dst past L0 (legal: a no-op accesses "
                                "nothing, so no bound is checked)",
    **{f"ldt.edge:range/{n}/max": f"{n} = 65535, legal" for n in
       ("srcStride", "dstGap", "dstFracGap", "srcFracGap")},
    "ldt.fault:range/startIndex/max": "startIndex = 65535 (OutOfBounds)",
    **{f"ldt.fault:range/{n}/top": f"{n} = 32768 + 0..3, past a buffer (OutOfBounds)"
       for n in RANGE_FIELDS.values()},
    **{f"ldt.fault:range/{n}/past": f"{n} = 65536 (ParameterRange)"
       for n in RANGE_FIELDS.values()},
    "ldt.fault:range/repeatTimes/max": "repeatTimes = 255 (OutOfBounds)",
    "ldt.fault:range/repeatTimes/past": "repeatTimes = 256 (ParameterRange)",
    "ldt.fault:range/repeatTimes/V2-zero": "V2 with repeatTimes 0 (ParameterRange)",
    "ldt.fault:order/ParameterRange>IllegalParameter": "repeatTimes 256 and int4b to L0A",
    "ldt.fault:order/IllegalParameter>Alignment": "int4b to L0A and src not 32 B aligned",
    "ldt.fault:order/Alignment>OutOfBounds": "dst not 512 B aligned and past L0",
    "ldt.fault:order/overlap>OutOfBounds": "fractals that overlap and a read past L1",
}


def footprint(c: LdtCall):
    """(lowest source byte, one past the highest source byte, one past the highest
    destination byte) of ``c`` by D10's formulas, no rule checked; None for repeatTimes 0
    or a data type with no square.  In closed form from the extreme iterations, not from
    the model's per-fractal arrays (``plan_ldt``): a far call's repeatTimes reaches 2**32."""
    p = c.params
    if p.repeat_times <= 0 or p.dtype not in LDT_DTYPES:
        return None
    sq = SQUARES[LDT_DTYPES[p.dtype]]
    sign = -1 if p.addr_mode else 1
    first, last = p.start_index, p.start_index + sign * (p.repeat_times - 1) * p.src_stride
    lo_sq, hi_sq = min(first, last), max(first, last)
    if p.version == 1:
        lo, hi = c.src + lo_sq * sq.bytes, c.src + hi_sq * sq.bytes + sq.bytes
    else:
        lo = c.src + lo_sq * FRACTAL
        hi = c.src + (hi_sq + (sq.nfrac - 1) * (1 + p.src_frac_gap)) * FRACTAL + FRACTAL
    dst_hi = c.dst + ((p.dst_gap + 1) * (p.repeat_times - 1)
                      + (p.dst_frac_gap + 1) * (sq.nfrac - 1)) * FRACTAL + FRACTAL
    return lo, hi, dst_hi


def edge_bins(c: LdtCall, fault: Fault | None) -> list[str]:
    """The edge bins (:data:`EDGES`) ``c`` hits, judged from its fields and the model's
    ``fault`` (its kind and the field it names)."""
    p, out = c.params, []
    fp = footprint(c)
    kind = FaultKind(fault.code).name if fault is not None else None
    if kind is None:
        if fp is not None:
            out += ["ldt.edge:l1/end"] if fp[1] == L1_SIZE else []
            out += ["ldt.edge:l1/start"] if fp[0] == 0 and p.addr_mode and \
                p.repeat_times > 1 and p.src_stride else []
            out += ["ldt.edge:l0/end"] if fp[2] == L0_SIZE else []
        out += ["ldt.edge:l0/repeat0-at-end"] if p.repeat_times == 0 and c.dst == L0_SIZE \
            else []
        out += ["ldt.edge:l0/repeat0-past"] if p.repeat_times == 0 and c.dst > L0_SIZE \
            else []
        out += [f"ldt.edge:range/{n}/max" for f, n in RANGE_FIELDS.items()
                if getattr(p, f, 0) == 65535]
        return out
    field = fault.field
    if kind == "OutOfBounds":
        if fp is not None:
            out += ["ldt.fault:l1/past"] if fp[1] == L1_SIZE + 32 else []
            out += ["ldt.fault:l1/below"] if fp[0] < 0 else []
            out += ["ldt.fault:l0/past"] if fp[2] == L0_SIZE + FRACTAL else []
        out += ["ldt.fault:range/startIndex/max"] if p.start_index == 65535 else []
        out += [f"ldt.fault:range/{n}/top" for f, n in RANGE_FIELDS.items()
                if TOP <= getattr(p, f, 0) < TOP + 4]
        out += ["ldt.fault:range/repeatTimes/max"] if p.repeat_times == 255 else []
    if kind == "ParameterRange":
        out += [f"ldt.fault:range/{n}/past" for f, n in RANGE_FIELDS.items()
                if field == n and getattr(p, f) == 65536]
        out += ["ldt.fault:range/repeatTimes/past"] if field == "repeatTimes" and \
            p.repeat_times == 256 else []
        out += ["ldt.fault:range/repeatTimes/V2-zero"] if field == "repeatTimes" and \
            p.version == 2 and p.repeat_times == 0 else []
        out += ["ldt.fault:order/ParameterRange>IllegalParameter"] if \
            p.dtype == "int4b" and c.dst_name == "L0A" else []
    if kind == "IllegalParameter" and field in ("dtype", "dst") and c.src % 32:
        out.append("ldt.fault:order/IllegalParameter>Alignment")
    if kind == "Alignment" and c.dst % FRACTAL and c.dst > L0_SIZE:
        out.append("ldt.fault:order/Alignment>OutOfBounds")
    if kind == "IllegalParameter" and "overlap" in str(fault) and fp is not None and \
            fp[1] > L1_SIZE:
        out.append("ldt.fault:order/overlap>OutOfBounds")
    return out


def is_far(c: LdtCall) -> bool:
    """Does an operand of ``c`` lie beyond 16 bits (the widest legal one)?"""
    p = c.params
    values = [getattr(p, f) for f in FIELDS] + [getattr(p, "src_frac_gap", 0), c.src, c.dst]
    return max(values) >= 1 << 16


def far_operands(rng: random.Random, c: LdtCall) -> LdtCall:
    """``c`` with each operand, with probability one half, drawn over its 32-bit encoding (of
    a random bit length); at least one beyond 16 bits."""
    fields = FIELDS + (("src_frac_gap",) if c.params.version == 2 else ())
    while True:
        kw = {f: rng.getrandbits(rng.randint(1, 32)) for f in fields if rng.random() < 0.5}
        where = {f: rng.getrandbits(rng.randint(1, 32)) for f in ("src", "dst")
                 if rng.random() < 0.5}
        far = dataclasses.replace(c, params=dataclasses.replace(c.params, **kw), **where)
        if is_far(far):
            return far


def ldt_bins(p, fault: Fault | None, c: LdtCall | None = None) -> list[str]:
    edges = edge_bins(c, fault) if c is not None else []
    if fault is not None:
        return ([f"ldt.fault:{FaultKind(fault.code).name}"]
                + (["ldt.fault:overlap"] if "overlap" in str(fault) else [])
                + (["ldt.fault:far"] if c is not None and is_far(c) else []) + edges)
    v2 = p.version == 2
    gaps = p.dst_gap or p.dst_frac_gap or (p.src_frac_gap if v2 else 0)
    r = p.repeat_times
    return [f"ldt.form:{p.dtype}/{'V2' if v2 else 'V1'}/{int(bool(p.addr_mode))}",
            f"ldt.gaps:{p.dtype}/{'nonzero' if gaps else 'zero'}",
            f"ldt.repeat:{p.dtype}/{'0' if r == 0 else '1' if r == 1 else 'many'}"] + edges


def random_ldt_call(rng: random.Random, dtype: str) -> LdtCall:
    """A LoadDataWithTranspose call of ``dtype`` (V1 or V2, L0A or L0B, gaps 0..5)."""
    v2 = dtype != "int4b" and rng.random() < 0.3
    kw = dict(repeat_times=rng.randint(1 if v2 else 0, 4), start_index=rng.randint(0, 5),
              src_stride=rng.randint(0, 3), dst_gap=rng.randint(0, 5),
              dst_frac_gap=rng.randint(0, 4), addr_mode=rng.random() < 0.2)
    p = V2(dtype, src_frac_gap=rng.randint(0, 3), **kw) if v2 else V1(dtype, **kw)
    dst = "L0B" if (v2 or dtype == "int4b" or rng.random() < 0.5) else "L0A"
    return LdtCall(p, dst, rng.randint(0, 3) * 512, rng.randint(0, 16) * 32)


def _model_fault(c: LdtCall) -> Fault | None:
    try:
        plan_ldt(c.params, Buffer("L1", L1_SIZE), Buffer(c.dst_name, L0_SIZE), c.dst, c.src)
    except Fault as f:
        return f
    return None


def _engine(width: int):
    def make(profile: str = "finite"):
        return L1L0Engine(width=width)
    return make


#: element bits -> the rows of the transposer's square (S): a b32 square goes as 8x8 quarters
FILL_ROWS = {4: 64, 8: 32, 16: 16, 32: 8}


def ldt_fill(dtype: str, width: int) -> int:
    """The cycles before a call's first L0 line can leave (D14): the S rows of the
    transposer's square (:data:`FILL_ROWS`) arrive in S x 32 / W reads of W bytes."""
    return FILL_ROWS[LDT_DTYPES[dtype]] * 32 // width


class LoadDataWithTranspose(Operation):
    name = "load-data-with-transpose"
    seed_name = "LoadDataWithTranspose"
    tops = (Top("l1l0_engine", _engine(32), "L1 -> L0 engine (LoadDataWithTranspose), W = 32"),
            Top("l1l0_engine_w64", _engine(64),
                "L1 -> L0 engine (LoadDataWithTranspose), W = 64"),
            Top("l1l0_engine_w128", _engine(128),
                "L1 -> L0 engine (LoadDataWithTranspose), W = 128"))
    tests = ("tests/hdl/test_l1l0.py",)
    units = (Unit("L1L0Engine", "l1l0/engine.py",
                  area=(("l1l0_engine (W = 32)", {}), ("l1l0_engine (W = 64)", {"width": 64}),
                        ("l1l0_engine (W = 128)", {"width": 128})), proof="l1l0"),
             Unit("SquareTranspose", "transpose.py", ("tests/hdl/test_transpose.py",),
                  area=(("square_transpose (b4..b64, in the L1->L0 engine)",
                         {"max_rows": 64}),)))
    regress = True
    widths = (32, 64, 128)          # its L1 read and L0 write ports are W bytes wide
    harness_batch = 64
    image_file = "l1-seed{seed}.bin"
    contract_module = "l1l0_engine"
    capabilities = {"faults": (True, False), "widths": (32, 64, 128),
                    "dtypes": tuple(LDT_DTYPES), "versions": (1, 2)}
    # R = repeatTimes, F = the fractals of one square (nfrac), S = a square's bytes; i < R,
    # j < F; fractals are 512 bytes (model/load_data.py plan_ldt)
    fault_rules = (
        FaultRule("IllegalParameter", "dtype is none of the LoadDataWithTranspose types", "yes"),
        FaultRule("ParameterRange", "startIndex, srcStride, dstGap, dstFracGap or srcFracGap "
                  "(V2) > 65535; repeatTimes > 255, or repeatTimes = 0 on V2", "yes",
                  ("ldt.edge:range/srcStride/max", "ldt.edge:range/dstGap/max",
                   "ldt.edge:range/dstFracGap/max", "ldt.edge:range/srcFracGap/max",
                   "ldt.fault:range/startIndex/past", "ldt.fault:range/srcStride/past",
                   "ldt.fault:range/dstGap/past", "ldt.fault:range/dstFracGap/past",
                   "ldt.fault:range/srcFracGap/past", "ldt.fault:range/repeatTimes/past",
                   "ldt.fault:range/repeatTimes/V2-zero",
                   "ldt.fault:order/ParameterRange>IllegalParameter")),
        FaultRule("IllegalParameter", "the destination is not L0A or L0B; V2 to L0A; V2 of "
                  "int4b; int4b to L0A", "yes",
                  ("ldt.fault:order/IllegalParameter>Alignment",)),
        FaultRule("Alignment", "dst mod 512 != 0 (L0), or src mod 32 != 0 (L1)", "yes",
                  ("ldt.fault:order/Alignment>OutOfBounds",)),
        FaultRule("IllegalParameter", "two destination fractals overlap: (dstGap + 1) x i + "
                  "(dstFracGap + 1) x j equal for two pairs (i, j)", "no",
                  ("ldt.fault:order/overlap>OutOfBounds",)),
        FaultRule("OutOfBounds", "the lowest source address < 0 (addrMode 1 steps down)", "no",
                  ("ldt.edge:l1/start", "ldt.fault:l1/below")),
        FaultRule("OutOfBounds", "the highest source fractal ends past L1: src_addr(i, j) + 512 "
                  "> l1_size, src_addr = src + (startIndex +/- i x srcStride) x S + j x 512 "
                  "(V1), src + (startIndex +/- i x srcStride + j x (1 + srcFracGap)) x 512 (V2, "
                  "inferred: D10); - when addrMode = 1", "no",
                  ("ldt.edge:l1/end", "ldt.fault:l1/past", "ldt.fault:range/startIndex/max",
                   "ldt.fault:range/startIndex/top", "ldt.fault:range/srcStride/top",
                   "ldt.fault:range/srcFracGap/top", "ldt.fault:range/repeatTimes/max")),
        FaultRule("OutOfBounds", "the highest destination fractal ends past L0: dst + ((dstGap + "
                  "1) x (R - 1) + (dstFracGap + 1) x (F - 1)) x 512 + 512 > l0_size", "no: "
                  "repeatTimes 0 (V1) is a no-op that checks only the alignment of its bases "
                  "(D10)",
                  ("ldt.edge:l0/end", "ldt.fault:l0/past", "ldt.edge:l0/repeat0-at-end",
                   "ldt.edge:l0/repeat0-past", "ldt.fault:range/dstGap/top",
                   "ldt.fault:range/dstFracGap/top")),
    )
    regress_sizes = "`l1_size` = 32768 bytes, `l0_size` = 16384 bytes"
    contract_notes = """\
The L1 -> L0 engine of LoadDataWithTranspose V1 and V2 (seed 001, D10).

- `op`: one call with every operand a number; `src` and `dst` are byte addresses in L1
  and in L0 (L0A, or L0B with `dst_l0b`); `log2_ebits` is log2 of the element's bits (2
  int4b, 3 8-bit, 4 16-bit, 5 32-bit).
- `l1_size`, `l0_size`: the buffers' bytes, constant during a run (OutOfBounds).
- `rd` / `rd_data`: L1 reads. A read names a 32-byte aligned `addr` and L1 answers with
  the W bytes from there, one `rd_data` beat per read, in order, at least `--latency`
  cycles after the read was taken, with random gaps. A read that is not 32-byte aligned
  or passes the end of L1 fails the run.
- `wr`: L0 writes of W bytes at a W-aligned `addr` inside L0; a write outside fails the
  run. The final L0 image is compared with the model's, so the order of writes is free.
- `done`: `fault` of each op, in op order. A faulting op, and an op with repeat 0,
  make no access.
"""

    def reference(self):
        return L1L0Engine(width=self.width)

    def traits(self, item, fault) -> dict:
        p = item.params
        return {"faults": fault is not None, "dtypes": p.dtype, "versions": p.version}

    def bin_traits(self, bin_: str) -> dict:
        point, _, value = bin_.partition(":")
        if bin_ in EDGES:
            out = {"faults": {point == "ldt.fault"}}
            if "srcFracGap" in value or "V2" in value:
                out["versions"] = {2}
            if "IllegalParameter" in value:
                out["dtypes"] = {"int4b"}
            return out
        if point == "ldt.fault":
            return {"faults": {True}}
        parts = value.split("/")
        out = {"faults": {False}, "dtypes": {parts[0]}}
        if point == "ldt.form":
            out["versions"] = {int(parts[1][1])}
        return out

    def bins(self) -> list[str]:
        out = []
        for dt in LDT_DTYPES:
            versions = ("V1", "V2") if dt in V2_DTYPES else ("V1",)
            out += [f"ldt.form:{dt}/{v}/{a}" for v in versions for a in (0, 1)]
            out += [f"ldt.gaps:{dt}/{g}" for g in ("zero", "nonzero")]
            out += [f"ldt.repeat:{dt}/{r}" for r in ("0", "1", "many")]
        return out + [f"ldt.fault:{k}" for k in FAULTS] + ["ldt.fault:overlap",
                                                           "ldt.fault:far"] + self.edges()

    def edges(self) -> list[str]:
        return list(EDGES)

    def _draw_edge(self, rng: random.Random, hint: str):
        """A call aimed at the edge bin ``hint`` (:data:`EDGES`): a small legal one drawn,
        then moved onto the edge."""
        what = hint.partition(":")[2]
        field = {n: f for f, n in RANGE_FIELDS.items()}.get(what.split("/")[1]) \
            if what.startswith("range/") else None
        multi = [d for d, e in LDT_DTYPES.items() if SQUARES[e].nfrac > 1]
        single = [d for d, e in LDT_DTYPES.items() if SQUARES[e].nfrac == 1]
        v2 = "srcFracGap" in what or what.endswith("V2-zero") or \
            (what.startswith(("l1/", "l0/end", "l0/past")) and rng.random() < 0.3)
        dtype = rng.choice(list(LDT_DTYPES))
        if what.endswith("/max") and field in ("dst_frac_gap", "src_frac_gap"):
            dtype = rng.choice(single)          # one fractal a square: the gap is not used
        elif what.endswith("/top") and field in ("dst_frac_gap", "src_frac_gap"):
            dtype = rng.choice(multi)
        elif what.startswith("order/ParameterRange") or what.startswith("order/IllegalP"):
            dtype = "int4b"
        if v2 and dtype == "int4b":
            dtype = rng.choice([d for d in V2_DTYPES if d in multi or not
                                what.endswith("/top")])
        nfrac = SQUARES[LDT_DTYPES[dtype]].nfrac
        frac_gap = rng.randint(0, 2)            # iterations apart enough not to overlap
        kw = dict(repeat_times=rng.randint(1, 3), start_index=rng.randint(0, 3),
                  src_stride=rng.randint(0, 2), dst_frac_gap=frac_gap,
                  dst_gap=(frac_gap + 1) * nfrac - 1 + rng.randint(0, 2), addr_mode=False)
        if v2:
            kw["src_frac_gap"] = rng.randint(0, 2)
        if what.startswith("l1/st") or what == "l1/below":
            kw.update(addr_mode=True, repeat_times=rng.randint(2, 4),
                      src_stride=rng.randint(1, 3))
            kw["start_index"] = (kw["repeat_times"] - 1) * kw["src_stride"] - \
                (what == "l1/below")
        if field is not None:
            value = {"max": 65535, "top": TOP + rng.randint(0, 3), "past": 65536}[
                what.split("/")[2]]
            kw[field] = value
            if field in ("src_stride", "dst_gap"):
                kw["repeat_times"] = 1 if what.endswith("/max") else rng.randint(2, 3)
        elif what.startswith("range/repeatTimes"):
            kw["repeat_times"] = {"max": 255, "past": 256, "V2-zero": 0}[what.split("/")[2]]
        elif what.startswith("l0/repeat0") or what == "order/Alignment>OutOfBounds":
            kw["repeat_times"] = 0 if what.startswith("l0/") else kw["repeat_times"]
        elif what == "order/ParameterRange>IllegalParameter":
            kw["repeat_times"] = 256
        elif what == "order/overlap>OutOfBounds":
            dtype = rng.choice(multi)
            kw.update(repeat_times=rng.randint(2, 4), dst_gap=0, dst_frac_gap=0)
        p = V2(dtype, **kw) if v2 else V1(dtype, **kw)
        dst_name = "L0A" if dtype == "int4b" and what.startswith("order/") else "L0B"
        c = LdtCall(p, dst_name, rng.randint(0, 3) * 512, rng.randint(0, 8) * 32)
        fp = footprint(c)
        if what in ("l1/end", "l1/past"):
            c = dataclasses.replace(c, src=c.src + L1_SIZE - fp[1] + 32 * (what == "l1/past"))
        elif what.startswith("l1/st") or what == "l1/below":
            c = dataclasses.replace(c, src=0)
        elif what in ("l0/end", "l0/past"):
            c = dataclasses.replace(c, dst=c.dst + L0_SIZE - fp[2]
                                    + FRACTAL * (what == "l0/past"))
        elif what == "l0/repeat0-at-end":
            c = dataclasses.replace(c, dst=L0_SIZE)
        elif what == "l0/repeat0-past":
            c = dataclasses.replace(c, dst=L0_SIZE + FRACTAL * rng.randint(1, 4))
        elif what == "order/IllegalParameter>Alignment":
            c = dataclasses.replace(c, src=c.src + rng.choice([1, 2, 16]))
        elif what == "order/Alignment>OutOfBounds":
            c = dataclasses.replace(c, dst=L0_SIZE + FRACTAL * rng.randint(0, 3) + 32)
        elif what == "order/overlap>OutOfBounds":
            c = dataclasses.replace(c, src=L1_SIZE)
        fault = _model_fault(c)
        return c, fault, ldt_bins(c.params, fault, c)

    def draw(self, rng: random.Random, hint: str | None):
        if hint in EDGES:
            return self._draw_edge(rng, hint)
        point, _, value = (hint or "").partition(":")
        kind = value if point == "ldt.fault" else None
        parts = value.split("/") if point in ("ldt.form", "ldt.gaps", "ldt.repeat") else []
        dtype = parts[0] if parts else rng.choice(list(LDT_DTYPES))
        v2 = (parts[1] == "V2") if point == "ldt.form" else \
            (dtype != "int4b" and rng.random() < 0.3)
        addr_mode = (parts[2] == "1") if point == "ldt.form" else rng.random() < 0.25
        repeat = rng.randint(1 if v2 else 0, 4)
        if point == "ldt.repeat":
            repeat = {"0": 0, "1": 1}.get(parts[1], rng.randint(2, 6))
            if repeat == 0:
                v2 = False
        gaps = rng.random() < 0.6
        if point == "ldt.gaps":
            gaps = parts[1] == "nonzero"
        kw = dict(repeat_times=repeat,
                  src_stride=rng.randint(0, 3) if repeat > 1 else rng.randint(0, 2),
                  dst_gap=rng.randint(0, 3) if gaps else 0,
                  dst_frac_gap=rng.randint(0, 3) if gaps else 0, addr_mode=addr_mode)
        sq = SQUARES[LDT_DTYPES[dtype]]
        kw["start_index"] = (kw["src_stride"] * max(0, repeat - 1) + rng.randint(0, 2)) \
            if addr_mode else rng.randint(0, 3)
        if v2:
            p = V2(dtype, src_frac_gap=rng.randint(0, 2) if gaps else 0, **kw)
        else:
            p = V1(dtype, **kw)
        dst_name = "L0B" if (v2 or dtype == "int4b" or rng.random() < 0.5) else "L0A"
        dst, src = rng.randint(0, 3) * 512, rng.randint(0, 8) * 32
        if kind == "IllegalParameter":
            p, dst_name = (V2("half", repeat_times=1), "L0A") if rng.random() < 0.5 else \
                (V1("int4b", repeat_times=1), "L0A")
        elif kind == "Alignment":
            src = src + rng.choice([1, 2, 16]) if rng.random() < 0.5 else src
            dst = dst + 32 if src % 32 == 0 else dst
        elif kind == "OutOfBounds":
            p = dataclasses.replace(p, start_index=L1_SIZE // sq.bytes + rng.randint(0, 4),
                                    addr_mode=False, repeat_times=max(1, repeat))
        elif kind == "ParameterRange":
            p = dataclasses.replace(p, repeat_times=256 + rng.randint(0, 10))
        elif kind == "overlap":            # two (iteration, fractal) pairs on one L0 slot
            dtype = rng.choice([d for d, e in LDT_DTYPES.items() if SQUARES[e].nfrac > 1])
            p = V1(dtype, repeat_times=rng.randint(2, 4), start_index=rng.randint(0, 3),
                   src_stride=rng.randint(0, 3), dst_gap=0,
                   dst_frac_gap=rng.choice([0, 1, 3]) if dtype == "int4b" else 0)
            if rng.random() < 0.5:         # (a, b) = (2, 1): iteration 1 meets fractal 2
                p = dataclasses.replace(p, dtype="int4b", dst_gap=1, dst_frac_gap=0)
            dst_name = "L0B"
        c = LdtCall(p, dst_name, dst, src)
        while True:
            d = far_operands(rng, c) if kind == "far" else c
            fault = _model_fault(d)
            if kind != "far" or fault is not None:
                return d, fault, ldt_bins(d.params, fault, d)

    def image(self, seed: int):
        return seeded_memory(seed + 1, L1_SIZE)

    def batch_key(self, item):
        return item.dst_name                      # one destination buffer per bench run

    def run(self, items, backend, image, seed, stall) -> Outcome:
        res, problems = run_and_compare_l1l0(items, image, np.zeros(L0_SIZE, np.uint8),
                                             seed=seed, stall=stall, backend=backend,
                                             width=self.width, design=self.design)
        return self._outcome(items, res, problems)

    def waveform(self, item, backend, image, seed, stall, path) -> bool:
        simulate_l1l0([item], image, np.zeros(L0_SIZE, np.uint8), seed=seed, stall=stall,
                      backend=backend, width=self.width, design=self.design,
                      **self.wave_option(backend, path))
        return True

    def run_many(self, batches, backend, image) -> list[Outcome]:
        if backend == "amaranth":
            return super().run_many(batches, backend, image)
        l0 = np.zeros(L0_SIZE, np.uint8)
        got = run_l1l0_batches([(items, l0, seed, stall) for items, seed, stall in batches],
                               image, backend, design=self.design, **self.harness_args())
        return [Outcome({-1: res.error}) if res.error else
                self._outcome(items, res, compare_l1l0(items, image, l0, res))
                for (items, _, _), res in zip(batches, got)]

    def harness_args(self) -> dict:
        """The batch harness's build: ``harness_batch`` calls of up to 4 squares of 2 KB,
        a 32 KB L1, the engine at this W."""
        return {"depth": self.harness_batch,
                "beats": self.harness_batch * MAX_LINES * 32 // self.width,
                "l1_bytes": L1_SIZE, "width": self.width}

    def _outcome(self, items, res, problems) -> Outcome:
        by_index = {}
        for line in problems:
            m = re.match(r"call (\d+): (.*)", line)
            if m:
                by_index[int(m[1])] = m[2]
            else:
                by_index[-1] = line                 # the L0 image: not attributable yet
        ideals = [c.params.repeat_times * SQUARES[LDT_DTYPES[c.params.dtype]].bytes
                  // self.width if _model_fault(c) is None else 0 for c in items]
        classes = by_class([c.params.dtype if _model_fault(c) is None else "fault"
                            for c in items], res.accept, res.done, ideals,
                           [ldt_fill(c.params.dtype, self.width) if ideals[i] else 0
                            for i, c in enumerate(items)])
        return Outcome(by_index, res.waveform if res.timed_out else None, res.cycles or 0,
                       sum(ideals), classes)

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        c, p = item, item.params
        parts = ["tilecosim", "load-data-with-transpose", "--dtype", p.dtype,
                 "--repeat-times", str(p.repeat_times), "--start-index", str(p.start_index),
                 "--src-stride", str(p.src_stride), "--dst-gap", str(p.dst_gap),
                 "--dst-frac-gap", str(p.dst_frac_gap), "--addr-mode",
                 str(int(bool(p.addr_mode)))]
        if p.version == 2:
            parts += ["--v2", "--src-frac-gap", str(p.src_frac_gap)]
        parts += ["--dst", c.dst_name, "--src", shlex.quote(str(image_path)), "--dst-bytes",
                  str(L0_SIZE), "--src-addr", str(c.src), "--dst-addr", str(c.dst),
                  "--backend", backend, "--seed", str(seed)]
        parts += ["--width", str(self.width)] if self.width != 32 else []
        parts += [shlex.quote(o) for o in self.design.options()]
        return " ".join(parts + (["--stall", f"{stall:g}"] if stall else []))

    def cross_check(self, backend: str, harness: bool = False) -> dict:
        rng = random.Random(12)
        calls = []
        for dt in LDT_DTYPES:                      # every data type, on the same L0B
            c = random_ldt_call(rng, dt)
            calls.append(LdtCall(c.params, "L0B", c.dst, c.src))
        l1 = np.random.default_rng(3).integers(0, 256, 32768, dtype=np.uint8)
        l0 = np.random.default_rng(4).integers(0, 256, 16384, dtype=np.uint8)
        if harness:
            res = run_l1l0_batches([(calls, l0, 2, 0.2)], l1, backend, **self.harness_args())[0]
            assert res.error is None, res.error
            problems = compare_l1l0(calls, l1, l0, res)
        else:
            res, problems = run_and_compare_l1l0(calls, l1, l0, seed=2, stall=0.2,
                                                 backend=backend)
        assert problems == [], "\n".join(problems)
        assert 0 in res.faults
        o = res.accept[0]
        return {"accept": [c - o for c in res.accept], "done": [c - o for c in res.done],
                "first write": res.first_write - o,
                "last write": res.last_write - o, "faults": res.faults}
