"""LoadDataWithTranspose (seed 001): L1 -> L0A/L0B with a square-block transpose, on the
L1 -> L0 engine.  Its documented short form is ``ldt`` (coverage bins, file names).

Coverage bins (76)
  ``ldt.form:DTYPE/V/ADDRMODE``    -- data type x V1/V2 (int4b has no V2) x addr_mode 0/1
  ``ldt.gaps:DTYPE/G``             -- dst_gap, dst_frac_gap, src_frac_gap all zero, or not
  ``ldt.repeat:DTYPE/R``           -- repeat_times 0 (V1), 1, many
  ``ldt.fault:KIND``               -- IllegalParameter, Alignment, OutOfBounds, ParameterRange
  ``ldt.fault:overlap``            -- IllegalParameter for destination fractals that overlap
  ``ldt.fault:far``                -- a faulting call with operands drawn over their 32-bit
                                      encodings (the engine's checks at full width)
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
from tilecosim.model.load_data import (LDT_DTYPES, SQUARES, V2_DTYPES,
                                       LoadData2dTransposeParams as V1,
                                       LoadData2dTransposeParamsV2 as V2, plan_ldt)
from tilecosim.sim.batch_l1l0 import run_l1l0_batches
from tilecosim.sim.benches.load_data_with_transpose import (LdtCall, compare_l1l0,
                                                            run_and_compare_l1l0, simulate_l1l0)

from .base import Operation, Outcome, Top, Unit, by_class

__all__ = ["LoadDataWithTranspose", "ldt_bins", "random_ldt_call"]

L1_SIZE = 1 << 15
L0_SIZE = 1 << 14
MAX_LINES = 4 * 2048 // 32     # L0 lines of the largest call drawn (repeat 4, int4b squares)
FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds", "ParameterRange")


FIELDS = ("repeat_times", "start_index", "src_stride", "dst_gap", "dst_frac_gap")


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
    if fault is not None:
        return ([f"ldt.fault:{FaultKind(fault.code).name}"]
                + (["ldt.fault:overlap"] if "overlap" in str(fault) else [])
                + (["ldt.fault:far"] if c is not None and is_far(c) else []))
    v2 = p.version == 2
    gaps = p.dst_gap or p.dst_frac_gap or (p.src_frac_gap if v2 else 0)
    r = p.repeat_times
    return [f"ldt.form:{p.dtype}/{'V2' if v2 else 'V1'}/{int(bool(p.addr_mode))}",
            f"ldt.gaps:{p.dtype}/{'nonzero' if gaps else 'zero'}",
            f"ldt.repeat:{p.dtype}/{'0' if r == 0 else '1' if r == 1 else 'many'}"]


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
        return out + [f"ldt.fault:{k}" for k in FAULTS] + ["ldt.fault:overlap", "ldt.fault:far"]

    def draw(self, rng: random.Random, hint: str | None):
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
