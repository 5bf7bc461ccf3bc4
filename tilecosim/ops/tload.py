"""TLOAD (seed 000): global memory -> tile registers, with the fractal layout transforms.

Coverage bins (164, with the 15 edge bins below)
  ``tload.shape:LAYOUT/ESIZE/PAD`` -- layout x element size (b4x2, b8, b16, b32, b64) x pad
  ``tload.outputs:LAYOUT/N``       -- 1, 2 or 3..8 output tiles
  ``tload.region:LAYOUT/R``        -- valid region: full, rows (fewer valid rows than the
                                      source block), cols (fewer valid columns), both
  ``tload.source:LAYOUT/S``        -- dense (no RegSrc1) or strided
  ``tload.fault:KIND``             -- IllegalInstruction, IllegalParameter, OutOfBounds
  ``tload.fault:far``              -- a faulting TLOAD with operands drawn over their 64-bit
                                      encodings (the decoder's checks at full width)

Edge bins (15, D17; drawn first, :data:`EDGES`): every bound exactly met and exceeded by the
smallest step (a byte: RegSrc0 has no alignment), every range at its minimum, maximum and maximum + 1, and every pair of rules that
can meet, the first in checking order winning.  ``tload.edge:`` bins are legal TLOADs,
``tload.fault:`` ones faulting TLOADs; each is judged from the scenario itself
(:func:`edge_bins`), never from what it was aimed at.
"""

from __future__ import annotations

import dataclasses
import random
import shlex

from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.transpose import SquareTranspose
from tilecosim.model.display import seeded_memory
from tilecosim.model.dtypes import DTYPES, PadValue
from tilecosim.model.faults import Fault, FaultKind, completion_label, fault_label
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TILE_QUEUES, TLoadLayout, TLoadLayout as L, TLoadParams, plan
from tilecosim.sim.batch_tload import run_tload_batches
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.benches.tload import (SimConfig, compare, repro_command, run_and_compare,
                                         simulate_tload)

from .base import FaultRule, Operation, Outcome, Top, Unit, by_class

__all__ = ["TLoad", "esize_name", "tload_bins"]

MEM_SIZE = 1 << 16              # global memory of the regression
MAX_BEATS = 8 * 2048 // 32      # write beats of the largest TLOAD drawn (8 tiles of 2 KB)
MAX_SIZE = 256 * 1024           # the largest tile (LCFR, D7): drawn once a run (size/max)
ESIZES = ("b4x2", "b8", "b16", "b32", "b64")
FAULTS = ("IllegalInstruction", "IllegalParameter", "OutOfBounds")


def esize_name(dtype) -> str:
    return "b4x2" if dtype.name.endswith("x2") else f"b{8 * dtype.esize}"


ESIZE_TYPES: dict[str, list[str]] = {}
for _name, _dt in DTYPES.items():
    ESIZE_TYPES.setdefault(esize_name(_dt), []).append(_name)


def _outputs(n: int) -> str:
    return str(n) if n <= 2 else "3..8"


def is_far(p: TLoadParams) -> bool:
    """Does an operand of ``p`` lie beyond 32 bits?"""
    values = [p.valid_col, p.valid_row, p.col or 0, p.base, p.stride or 0]
    return max(values + [size for _, size in p.outputs]) >= 1 << 32


def far_operands(rng: random.Random, p: TLoadParams) -> TLoadParams:
    """``p`` with each operand, with probability one half, drawn over its 64-bit encoding
    (of a random bit length, so that small, middle and top bits all move); at least one
    beyond 32 bits."""
    while True:
        kw = {f: rng.getrandbits(rng.randint(1, 64))
              for f in ("valid_col", "valid_row", "col", "base", "stride") if rng.random() < 0.5}
        if rng.random() < 0.3:
            kw["outputs"] = tuple((q, rng.getrandbits(rng.randint(1, 64))) for q, _ in p.outputs)
        far = dataclasses.replace(p, **kw)
        if is_far(far):
            return far


#: the edge bins (D17), in the order regress draws them: bin -> what it holds
EDGES = {
    "tload.edge:mem/end": "the footprint's last byte is the last byte of memory (legal)",
    "tload.fault:mem/past": "the footprint's last byte is the first byte past memory "
                           "(OutOfBounds; RegSrc0 has no alignment, so one byte is the "
                           "smallest step)",
    "tload.fault:mem/start-at-end": "RegSrc0 = mem_size: the footprint starts at the end "
                                    "(OutOfBounds)",
    "tload.fault:mem/wrap": "RegSrc0 + footprint passes 2**64 and wraps to inside memory "
                            "(OutOfBounds)",
    "tload.edge:size/min": "Size = 256 B, the smallest tile (legal)",
    "tload.fault:size/past": "Size = 512 KB, past the largest (IllegalParameter)",
    "tload.fault:size/below": "Size = 128 B, below the smallest (IllegalParameter)",
    "tload.edge:ValidRow/at": "ValidRow = Row > 1 (legal)",
    "tload.fault:ValidRow/past": "ValidRow = Row + 1 (IllegalParameter)",
    "tload.fault:ValidCol/past": "ValidCol = Col + 1 (IllegalParameter)",
    "tload.edge:outputs/max": "8 output tiles (legal)",
    "tload.fault:order/IllegalInstruction>IllegalParameter":
        "an output to ACC or S and ValidCol > Col: IllegalInstruction wins",
    "tload.fault:order/IllegalInstruction>OutOfBounds":
        "an output to ACC or S and a footprint past memory: IllegalInstruction wins",
    "tload.fault:order/IllegalParameter>OutOfBounds":
        "ValidCol > Col and a footprint past memory: IllegalParameter wins",
    # last: a run of fewer scenarios than edges leaves out its 8,192 beats
    "tload.edge:size/max": "Size = 256 KB, the largest tile (legal; NORM, rows a multiple of "
                           "128 B, so that it moves at one beat a cycle at every W)",
}


def footprint_end(p: TLoadParams) -> int | None:
    """One past the last byte the valid block of ``p`` spans in memory (D2, the stride's
    dense default applied; no rule checked), None when nothing is valid."""
    vr, vc, e = p.valid_row, p.valid_col, p.esize
    if vr <= 0 or vc <= 0:
        return None
    outer, inner = (vc, vr) if p.layout.source_dn else (vr, vc)
    stride = inner * e if p.stride is None else p.stride
    return p.base + (outer - 1) * stride + inner * e


def _row(p: TLoadParams, col: int) -> int:
    """Row of ``p`` with Col = ``col`` (D3), rounded down where it is not whole."""
    return len(p.outputs) * p.outputs[0][1] // (col * p.esize)


def edge_bins(p: TLoadParams, fault: Fault | None, mem_size: int = MEM_SIZE) -> list[str]:
    """The edge bins (:data:`EDGES`) ``p`` hits, judged from its fields and the model's
    ``fault`` (its kind and the field it names)."""
    out = []
    end = footprint_end(p)
    kind = FaultKind(fault.code).name if fault is not None else None
    sizes = {s for _, s in p.outputs}
    col = p.valid_col if p.col is None else p.col
    illegal_queue = any(q not in TILE_QUEUES for q, _ in p.outputs)
    past_mem = end is not None and end > mem_size
    if kind is None:
        out += ["tload.edge:mem/end"] if end == mem_size else []
        out += ["tload.edge:size/min"] if sizes == {256} else []
        out += ["tload.edge:size/max"] if sizes == {MAX_SIZE} else []
        out += ["tload.edge:ValidRow/at"] if p.valid_row == _row(p, col) > 1 else []
        out += ["tload.edge:outputs/max"] if len(p.outputs) == 8 else []
        return out
    if kind == "OutOfBounds":
        out += ["tload.fault:mem/past"] if end == mem_size + 1 else []
        out += ["tload.fault:mem/start-at-end"] if p.base == mem_size else []
        out += ["tload.fault:mem/wrap"] if end is not None and \
            0 < end - (1 << 64) <= mem_size and p.base < 1 << 64 else []
    if kind == "IllegalParameter" and fault.field.endswith("Size") and len(sizes) == 1:
        out += ["tload.fault:size/past"] if sizes == {2 * MAX_SIZE} else []
        out += ["tload.fault:size/below"] if sizes == {128} else []
    if kind == "IllegalParameter" and fault.field == "ValidCol" and p.valid_col == col + 1:
        out.append("tload.fault:ValidCol/past")
    if kind == "IllegalParameter" and fault.field == "ValidRow":
        out += ["tload.fault:ValidRow/past"] if p.valid_row == _row(p, col) + 1 else []
    if kind == "IllegalInstruction" and illegal_queue and p.valid_col > col:
        out.append("tload.fault:order/IllegalInstruction>IllegalParameter")
    if kind == "IllegalInstruction" and illegal_queue and past_mem:
        out.append("tload.fault:order/IllegalInstruction>OutOfBounds")
    if kind == "IllegalParameter" and fault.field == "ValidCol" and past_mem:
        out.append("tload.fault:order/IllegalParameter>OutOfBounds")
    return out


def tload_bins(p: TLoadParams, fault: Fault | None, pl=None) -> list[str]:
    """The bins a TLOAD hits (``pl``: its plan, when the model accepts it)."""
    if fault is not None:
        return [f"tload.fault:{FaultKind(fault.code).name}"] + \
            (["tload.fault:far"] if is_far(p) else []) + edge_bins(p, fault)
    lay = p.layout.name
    col = p.valid_col if p.col is None else p.col
    rows = p.valid_row < pl.row
    cols = p.valid_col < col
    region = "both" if rows and cols else "rows" if rows else "cols" if cols else "full"
    return [f"tload.shape:{lay}/{esize_name(p.dtype)}/{p.pad.name}",
            f"tload.outputs:{lay}/{_outputs(len(p.outputs))}",
            f"tload.region:{lay}/{region}",
            f"tload.source:{lay}/{'dense' if p.stride is None else 'strided'}"] + \
        edge_bins(p, None)


def _judge(p: TLoadParams):
    """(the model's fault or None, its plan or None) of ``p`` on the regress memory."""
    try:
        return None, plan(p, MEM_SIZE)
    except Fault as f:
        return f, None


def _bench_config(backend: str, seed: int, stall: float, width: int = 32,
                  design: Design = BUILTIN, **more):
    ok = 1 - stall
    return SimConfig(seed=seed, p_req_ready=ok, p_resp_valid=ok, p_write_ready=ok,
                     p_instr_valid=ok, backend=backend, width=width, design=design, **more)


def _engine(width: int):
    def make(profile: str = "finite"):
        return TLoadEngine(width=width, profile=profile)
    return make


def _transpose(profile: str = "finite"):
    return SquareTranspose()


def transpose_fill(layout: TLoadLayout, esize: int, width: int,
                   minor: int | None = None) -> int:
    """The cycles before a transposing TLOAD's first beat can leave (D14), 0 for the other
    layouts: the S = 32 / esize source rows of its first square, of which a W-byte read
    brings W / ``minor`` from a source whose rows (an ND source's; a DN source's columns)
    hold ``minor`` bytes: S x min(minor, W) / W reads, at least 1 (S when ``minor`` is not
    given)."""
    if not layout.transposing:
        return 0
    side = 32 // esize
    return side if minor is None else max(1, side * min(minor, width) // width)


def tload_fill(p: TLoadParams, width: int) -> int:
    """:func:`transpose_fill` of the TLOAD ``p``: its source rows hold ValidCol (an ND
    source) or ValidRow (a DN source) elements."""
    minor = (p.valid_row if p.layout.source_dn else p.valid_col) * p.esize
    return transpose_fill(p.layout, p.esize, width, minor)


class TLoad(Operation):
    name = "tload"
    seed_name = "TLOAD"
    tops = (Top("tload_engine", _engine(32), "TLOAD engine, W = 32"),
            Top("tload_engine_w64", _engine(64), "TLOAD engine, W = 64"),
            Top("tload_engine_w128", _engine(128), "TLOAD engine, W = 128"),
            Top("square_transpose", _transpose, "transpose unit"))
    tests = ("tests/hdl/test_tload.py",)
    units = (Unit("TLoadEngine", "tload/engine.py",
                  area=(("tload_engine (W = 32)", {"width": 32}),
                        ("tload_engine (W = 64)", {"width": 64}),
                        ("tload_engine (W = 128)", {"width": 128})), proof="tload"),
             Unit("TLoadDecoder", "tload/decode.py", ("tests/hdl/test_decode.py",),
                  proof="decoder", quick=True),
             Unit("FractalAddressGenerator", "tload/addrgen.py", ("tests/hdl/test_addrgen.py",),
                  proof="addrgen", environment="addrgen_environment", quick=True),
             Unit("PadMerge", "tload/padmerge.py", ("tests/hdl/test_padmerge.py",),
                  proof="padmerge", quick=True),
             Unit("CompletionQueue", "completion.py", ("tests/hdl/test_completion.py",)),
             Unit("SquareTranspose", "transpose.py", ("tests/hdl/test_transpose.py",),
                  area=(("square_transpose (b8..b64, in both TLOAD engines)", {}),)),
             Unit("ChunkTranspose", "transpose.py", ("tests/hdl/test_transpose.py",),
                  area=(("chunk_transpose (W = 64, in the W = 64 TLOAD engine)",
                         {"width": 64}),
                        ("chunk_transpose (W = 128, in the W = 128 TLOAD engine)",
                         {"width": 128}))))
    regress = True
    harness_batch = 64
    widths = (32, 64, 128)
    contract_module = "tload_engine"
    capabilities = {"faults": (True, False), "widths": (32, 64, 128),
                    "layouts": tuple(x.name for x in TLoadLayout), "esizes": ESIZES,
                    "pads": tuple(x.name for x in PadValue), "outputs": tuple(range(1, 9))}
    # n outputs, e bytes per element; Col is RegSrc1's Col, or ValidCol when it is omitted;
    # Row = n x Size / (Col x e); the stride RegSrc1's, or ValidCol x e (ND) / ValidRow x e
    # (DN) when omitted (model/tload.py plan)
    fault_rules = (
        FaultRule("IllegalInstruction", "n < 1 or n > 8 (the outputs)", "yes",
                  ("tload.edge:outputs/max",)),
        FaultRule("IllegalInstruction", "queues[k] is not T, U, M or N (ACC, S, or a code "
                  "of 6 or 7), for some k < n", "yes",
                  ("tload.fault:order/IllegalInstruction>IllegalParameter",
                   "tload.fault:order/IllegalInstruction>OutOfBounds")),
        FaultRule("IllegalParameter", "sizes[k] is not 256 x 2^j bytes, or sizes[k] < 256 or "
                  "sizes[k] > 262144 (LCFR, D7), for some k < n", "yes",
                  ("tload.edge:size/min", "tload.edge:size/max", "tload.fault:size/past",
                   "tload.fault:size/below")),
        FaultRule("IllegalParameter", "the n sizes are not all equal", "yes"),
        FaultRule("IllegalParameter", "Col < 1", "yes"),
        FaultRule("IllegalParameter", "ValidCol > Col", "yes",
                  ("tload.fault:ValidCol/past", "tload.fault:order/IllegalParameter>OutOfBounds")),
        FaultRule("IllegalParameter", "(n x Size) mod (Col x e) != 0 (Row not whole)", "yes"),
        FaultRule("IllegalParameter", "ValidRow > Row", "yes",
                  ("tload.edge:ValidRow/at", "tload.fault:ValidRow/past")),
        FaultRule("IllegalParameter", "a DN source: Row mod n != 0; an ND source: Col mod n != 0 "
                  "(the source splits into n bands)", "yes"),
        FaultRule("IllegalParameter", "an NZ / ZN destination: each output tile's rows mod r0 "
                  "!= 0 or its cols mod c0 != 0, (r0, c0) = (16, 32/e) for NZ, (32/e, 16) for "
                  "ZN", "yes"),
        FaultRule("OutOfBounds", "last >= mem_size, last = base + (ValidRow - 1) x stride + "
                  "(ValidCol - 1) x e + e - 1 for an ND source (ValidRow and ValidCol swap for "
                  "DN), computed without wrapping: a last byte past 2^64 faults", "no: ValidRow "
                  "= 0 or ValidCol = 0 reads nothing, at any base",
                  ("tload.edge:mem/end", "tload.fault:mem/past", "tload.fault:mem/start-at-end",
                   "tload.fault:mem/wrap")),
    )
    regress_sizes = "global memory `mem_size` = 65536 bytes"
    contract_notes = """\
The engine of one TLOAD (seed 002, D9): a decoded instruction in, memory reads out, tile
writes out, one completion per instruction.

- `instr`: a TLOAD with every operand a number (`n` outputs, output k into queue
  `queues[k]` with `sizes[k]` bytes; `stride_given` 0: RegSrc1 omitted, rows dense).
  Decoding, the shape rules and the OutOfBounds check are the design's.
- `mem_size`: the bytes of global memory, constant during a run (OutOfBounds).
- `req` / `resp`: global memory. A request reads `len` bytes (1..W) from `addr`; the
  memory answers each request with one W-byte `resp` beat, in request order, byte k =
  memory[addr + k] (bytes past `len` are filler), at least one cycle (`--latency`) after
  the request was taken, with random gaps. A request outside memory fails the run.
- `write`: tile writes. `tile` is the output index (0 .. n-1), `offset` the byte offset of
  the beat in that output tile (a multiple of W), `be` one enable per byte of `data`.
  Bytes a write does not enable keep their value (Null padding writes nothing). Every
  legal instruction writes exactly n x Size / W beats, all before the next instruction's
  first: the bench gives beats to instructions by count.
- `done`: `fault` of each instruction, in instruction order. A faulting instruction
  makes no request and no write.
- Pad values: Max/Min are the largest finite values (`--profile finite`, D5).
- Reset: the TLOAD bench also resets the engine in the middle of an instruction; the
  memory drops the responses it had pending, and the instructions after the reset must
  run as if nothing came before.
"""

    def reference(self):
        return TLoadEngine(width=self.width)

    def traits(self, item, fault) -> dict:
        p = item
        return {"faults": fault is not None, "layouts": p.layout.name,
                "esizes": esize_name(p.dtype), "pads": p.pad.name, "outputs": len(p.outputs)}

    def bin_traits(self, bin_: str) -> dict:
        point, _, value = bin_.partition(":")
        if point == "tload.fault":
            return {"faults": {True}}
        if point == "tload.edge":
            return {"faults": {False}, **({"outputs": {8}} if value == "outputs/max" else {})}
        parts = value.split("/")
        out = {"faults": {False}, "layouts": {parts[0]}}
        if point == "tload.shape":
            out.update(esizes={parts[1]}, pads={parts[2]})
        elif point == "tload.outputs":
            out["outputs"] = set(range(3, 9)) if parts[1] == "3..8" else {int(parts[1])}
        return out

    def bins(self) -> list[str]:
        out = []
        for lay in TLoadLayout:
            out += [f"tload.shape:{lay.name}/{e}/{p.name}" for e in ESIZES for p in PadValue]
            out += [f"tload.outputs:{lay.name}/{n}" for n in ("1", "2", "3..8")]
            out += [f"tload.region:{lay.name}/{r}" for r in ("full", "rows", "cols", "both")]
            out += [f"tload.source:{lay.name}/{s}" for s in ("dense", "strided")]
        return out + [f"tload.fault:{k}" for k in FAULTS] + ["tload.fault:far"] + self.edges()

    def edges(self) -> list[str]:
        return list(EDGES)

    def draw(self, rng: random.Random, hint: str | None):
        if hint in EDGES:
            return self._draw_edge(rng, hint)
        point, _, value = (hint or "").partition(":")
        kind = value if point == "tload.fault" else None
        layout = dtype = pad = n = None
        if point in ("tload.shape", "tload.outputs", "tload.region", "tload.source"):
            parts = value.split("/")
            layout = TLoadLayout[parts[0]]
            if point == "tload.shape":
                dtype = rng.choice(ESIZE_TYPES[parts[1]])
                pad = PadValue[parts[2]]
            elif point == "tload.outputs":
                n = {"1": 1, "2": 2}.get(parts[1]) or rng.randint(3, 8)
        while True:
            p, span = random_tload(rng, layout, dtype, sizes=(256, 512, 1024, 2048), n=n,
                                   pad=pad)
            if span <= MEM_SIZE:
                break
        if kind == "IllegalInstruction":
            outs = list(p.outputs)
            outs[rng.randrange(len(outs))] = (rng.choice(["ACC", "S"]), outs[0][1])
            p = dataclasses.replace(p, outputs=tuple(outs))
        elif kind == "IllegalParameter":
            col = p.valid_col if p.col is None else p.col
            p = dataclasses.replace(p, col=col, valid_col=col + rng.randint(1, 4))
        elif kind == "OutOfBounds":
            p = dataclasses.replace(p, valid_row=max(1, p.valid_row),
                                    valid_col=max(1, p.valid_col),
                                    base=MEM_SIZE - rng.randint(0, 8))
        while True:
            q = far_operands(rng, p) if kind == "far" else p
            fault, pl = _judge(q)
            if kind != "far" or fault is not None:      # a far TLOAD the model accepts: again
                return q, fault, tload_bins(q, fault, pl)

    def _draw_edge(self, rng: random.Random, hint: str):
        """A TLOAD aimed at the edge bin ``hint`` (:data:`EDGES`): a legal one drawn, then
        moved onto the edge."""
        what = hint.partition(":")[2]
        sizes = {"size/min": (256,), "size/max": (MAX_SIZE,)}.get(what, (256, 512, 1024, 2048))
        n = 8 if what == "outputs/max" else 1 if what == "size/max" else None
        layout = TLoadLayout.NORM if what == "size/max" else None
        while True:
            try:
                p, span = random_tload(rng, layout, None, sizes=sizes, n=n)
            except IndexError:          # no shape of the layout and type has this size
                continue
            end = footprint_end(p)
            col = p.valid_col if p.col is None else p.col
            if span <= MEM_SIZE and end is not None and \
                    (what != "size/max" or col * p.esize % 128 == 0):
                break
        if what in ("mem/end", "mem/past", "order/IllegalParameter>OutOfBounds",
                    "order/IllegalInstruction>OutOfBounds"):
            p = dataclasses.replace(p, base=p.base + MEM_SIZE - end
                                    + (0 if what == "mem/end" else 1))
        elif what == "mem/start-at-end":
            p = dataclasses.replace(p, base=MEM_SIZE)
        elif what == "mem/wrap":         # the end wraps past 2**64 to 1..end bytes
            p = dataclasses.replace(p, base=p.base + (1 << 64) - end
                                    + rng.randint(1, max(1, end - p.base - 1)))
        elif what in ("size/past", "size/below"):
            size = 2 * MAX_SIZE if what == "size/past" else 128
            p = dataclasses.replace(p, outputs=tuple((q, size) for q, _ in p.outputs))
        elif what == "ValidRow/at" or what == "ValidRow/past":
            p = dataclasses.replace(p, valid_row=_row(p, col) + (what == "ValidRow/past"),
                                    col=col)
            if what == "ValidRow/at" and footprint_end(p) > MEM_SIZE:
                p = dataclasses.replace(p, base=0, stride=None)
        if what in ("ValidCol/past", "order/IllegalInstruction>IllegalParameter",
                    "order/IllegalParameter>OutOfBounds"):
            p = dataclasses.replace(p, col=col, valid_col=col + 1)
        if what.startswith("order/IllegalInstruction"):
            outs = list(p.outputs)
            outs[rng.randrange(len(outs))] = (rng.choice(["ACC", "S"]), outs[0][1])
            p = dataclasses.replace(p, outputs=tuple(outs))
        fault, pl = _judge(p)
        return p, fault, tload_bins(p, fault, pl)

    def image(self, seed: int):
        return seeded_memory(seed, MEM_SIZE)

    def run(self, items, backend, image, seed, stall) -> Outcome:
        return self._outcome(items, image,
                             simulate_tload(items, image, _bench_config(
                                 backend, seed, stall, self.width, self.design)))

    def waveform(self, item, backend, image, seed, stall, path) -> bool:
        simulate_tload([item], image, _bench_config(backend, seed, stall, self.width,
                                                    self.design,
                                                    **self.wave_option(backend, path)))
        return True

    def run_many(self, batches, backend, image) -> list[Outcome]:
        if backend == "amaranth":
            return super().run_many(batches, backend, image)
        got = run_tload_batches([(items, _bench_config(backend, seed, stall, self.width,
                                                       self.design))
                                 for items, seed, stall in batches], image, backend,
                                **self.harness_args())
        return [self._outcome(items, image, res) for (items, _, _), res in zip(batches, got)]

    def harness_args(self) -> dict:
        """The batch harness's build: ``harness_batch`` TLOADs of up to 8 tiles of 2 KB
        and one of the largest tile (the edge ``size/max``), a 64 KB global memory."""
        return {"depth": self.harness_batch,
                "beats": self.harness_batch * MAX_BEATS + MAX_SIZE // 32,
                "mem_bytes": MEM_SIZE}

    def _outcome(self, items, image, res) -> Outcome:
        if res.error:
            return Outcome({-1: res.error})
        problems, ideal, ideals = {}, 0, []
        for i, p in enumerate(items):
            code, mism = compare(p, image, res, instr=i)
            ideals.append(len(p.outputs) * p.outputs[0][1] // self.width if code is None
                          else 0)
            ideal += ideals[-1]
            got = res.faults[i] if i < len(res.faults) else None
            if got != (code or 0):
                problems[i] = (f"{completion_label(got)} from the design, "
                               f"{fault_label(code)} from the model")
            elif mism:
                problems[i] = (f"{mism[0]} ({len(mism)} elements differ)" if len(mism) > 1
                               else str(mism[0]))
        classes = by_class([p.layout.name if ideals[i] else "fault"
                            for i, p in enumerate(items)], res.accept_cycles, res.done_cycles,
                           ideals, [tload_fill(p, self.width) if ideals[i] else 0
                                    for i, p in enumerate(items)])
        return Outcome(problems, res.waveform if res.timed_out else None, res.cycles or 0,
                       ideal, classes)

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        line = repro_command(item, _bench_config(backend, seed, stall, self.width), mem_seed,
                             MEM_SIZE)
        return " ".join([line, *(shlex.quote(o) for o in self.design.options())])

    def cross_check(self, backend: str, harness: bool = False) -> dict:
        rng = random.Random(5)
        plist = []
        for layout, dt in ((L.ND2NZ, "FP16"), (L.ND2ZN, "S8"), (L.NORM, "FP32"),
                           (L.DN2NZ, "BF16"), (L.DN2ZN, "S64")):
            plist.append(random_tload(rng, layout, dt, sizes=(512, 1024),
                                      n=rng.randint(1, 3))[0])
        plist.insert(2, TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32,
                                    outputs=(("T", 512),)))            # IllegalParameter
        mem = seeded_memory(11, 1 << 15)
        cfg = SimConfig(seed=4, p_req_ready=0.8, p_resp_valid=0.8, p_write_ready=0.8,
                        p_instr_valid=0.9, backend=backend)
        done = None
        if harness:
            done = run_tload_batches([(plist, cfg)], mem, backend, **self.harness_args())[0]
            assert done.error is None, done.error
        res, _, mism, problems = run_and_compare(plist, mem, cfg, result=done)
        assert not mism and not problems, "\n".join(map(str, mism + problems))
        assert 0 in res.faults and any(res.faults)                  # legal and faulting
        o = res.accept_cycles[0]
        return {"accept": [c - o for c in res.accept_cycles],
                "done": [c - o for c in res.done_cycles],
                "last write": res.last_write_cycle - o, "faults": res.faults}

