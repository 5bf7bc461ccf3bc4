"""The fractal address generator alone (fed by the decoder): the bytes its runs read are
exactly those of the valid source block the golden model's plan defines, each element's
once, in the number of runs the layout needs.  Extents at a power of two and one either side of it."""

import random

import pytest
from amaranth import Module
from amaranth.lib import wiring

from tilecosim.hdl.tload.addrgen import KIND_TRANSPOSE, FractalAddressGenerator
from tilecosim.hdl.tload.decode import TLoadDecoder
from tilecosim.hdl.tload.types import TLoadInstr
from tilecosim.model.faults import Fault
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams, plan
from tilecosim.sim.api import pack, run_amaranth, stretched, unpack, watchdog
from tilecosim.sim.benches.tload import instr_payload
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Sink, Source

MEM = 1 << 16


class Front(wiring.Component):
    """Decoder -> address generator, as in the engine."""

    def __init__(self):
        self.dec = TLoadDecoder()
        self.gen = FractalAddressGenerator()
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.dec = self.dec
        m.submodules.gen = self.gen
        wiring.connect(m, self.dec.o, self.gen.i)
        return m


def runs_of(params, stall=0.0, seed=0):
    """Every run of each TLOAD, and the fault codes of the faulting ones, in order: through
    the shared stream drivers, with the seeded idle and back-pressure patterns of every bench
    when ``stall`` > 0."""
    dut = Front()
    state = {"cycle": 0, "done": False}
    runs, faults = [], []
    run_layout = dut.gen.o.payload.shape()
    finished = [0]

    def count(n):
        finished[0] += n
        state["done"] = finished[0] == len(params)

    def on_run(bits, cycle):
        run = unpack(run_layout, bits)
        runs.append({k: int(getattr(run, k)) for k in ("addr", "read_bytes", "kind", "tile",
                                                       "instr_last")})
        count(int(run.instr_last))

    def on_fault(bits, cycle):
        faults.append(int(bits))
        count(1)

    async def inputs(port):                          # the engine's settings, held
        port.set("dec__mem_size", MEM)
        port.set("gen__idle", 1)
        await port.tick()
    go = 1 - stall

    def pattern(k):
        return Stall(seed, k, go) if stall else None
    instrs = [pack(TLoadInstr, instr_payload(p)) for p in params]
    procs = [inputs, Source("dec__i", instrs, state, stall=pattern(0)),
             Sink("gen__o", state, on_run, stall=pattern(1)),
             Sink("gen__fault", state, on_fault, stall=pattern(2))]
    # at least one byte per run and one run per cycle: the output bytes bound the cycles
    out_bytes = sum(size for p in params for _, size in p.outputs)
    limit = stretched(out_bytes + 100 * len(params) + 1000, go)
    run_amaranth(dut, procs + [watchdog(state, limit, lambda: None)])
    assert finished[0] == len(params), \
        f"decoder + address generator bench: {finished[0]} of {len(params)} TLOADs in {limit} cycles"
    return runs, faults


def source_bytes(p):
    """The bytes of the valid source block, from the seed's definition: ValidRow x ValidCol
    elements at base, rows (ND) or columns (DN) ``stride`` bytes apart -- as a sorted list,
    since a stride shorter than a row makes rows overlap and a byte belong to two elements."""
    pl = plan(p, MEM)
    e = p.dtype.esize
    major, minor = (p.valid_col, p.valid_row) if p.layout.source_dn else \
        (p.valid_row, p.valid_col)
    return sorted(p.base + r * pl.stride + c * e + k
                  for r in range(major) for c in range(minor) for k in range(e))


def stacked(p):
    """Issue 18's dense narrow rows at W = 32: a transposing tile of one output whose b8
    source rows (ND; DN: columns) are 16 bytes, back to back, all of each valid and an even
    number of them valid moves two rows a 32-byte run."""
    pl = plan(p, MEM)
    dn = p.layout.source_dn
    minor, vmajor, vminor = ((pl.out_rows, p.valid_col, p.valid_row) if dn else
                             (pl.out_cols, p.valid_row, p.valid_col))
    return (p.layout.transposing and p.dtype.esize == 1 and pl.n == 1 and minor == 16
            and pl.stride == 16 and vminor == 16 and vmajor % 2 == 0)


def runs_needed(p):
    """One run per 32-byte destination line, except narrow NORM rows (one run per row) and
    the transposing layouts (S = 32/esize source runs per group of min(S, extent) lines, half
    as many when two rows make a run)."""
    pl = plan(p, MEM)
    e = p.dtype.esize
    size = p.outputs[0][1]
    lines = pl.n * size // 32
    if p.layout is L.NORM:
        return pl.n * size // min(32, pl.out_cols * e)
    if not p.layout.transposing:
        return lines
    s = 32 // e
    extent = pl.out_rows if p.layout.source_dn else pl.out_cols
    return lines // min(s, extent) * s // (2 if stacked(p) else 1)


def check(params, stall=0.0, seed=0):
    runs, faults = runs_of(params, stall, seed)
    legal = []
    for p in params:
        try:
            plan(p, MEM)
            legal.append(p)
        except Fault as f:
            faults.remove(f.code)
    assert faults == []
    starts = [0] + [i + 1 for i, r in enumerate(runs) if r["instr_last"]]
    assert len(starts) - 1 == len(legal)
    for p, a, b in zip(legal, starts, starts[1:]):
        mine = runs[a:b]
        assert len(mine) == runs_needed(p), p
        read = sorted(r["addr"] + k for r in mine for k in range(r["read_bytes"]))
        assert read == source_bytes(p), p         # every element's bytes, each read once
        assert {r["kind"] == KIND_TRANSPOSE for r in mine} == {p.layout.transposing}
        assert sorted({r["tile"] for r in mine}) == list(range(len(p.outputs)))


@pytest.mark.parametrize("stall", [0.0, 0.5])
@pytest.mark.parametrize("layout", list(L))
def test_random_tloads_read_exactly_the_valid_block(layout, stall):
    """Eight random TLOADs of a layout, back to back; with ``stall`` the instructions come
    with gaps and the runs and faults are taken under back-pressure."""
    rng = random.Random(int(layout) + 40)
    params = []
    while len(params) < 8:
        p, span = random_tload(rng, layout, sizes=(256, 512, 1024, 2048))
        if span <= MEM:
            params.append(p)
    check(params, stall, seed=int(layout))


@pytest.mark.parametrize("layout", list(L))
@pytest.mark.parametrize("extent", [15, 16, 17, 31, 32, 33])
def test_valid_extents_at_and_beside_a_power_of_two(layout, extent):
    """A 32 x 32 FP16 block (2 KB) with ValidRow or ValidCol at 2^k - 1, 2^k, 2^k + 1."""
    rows = min(extent, 32)
    params = [TLoadParams(layout, "FP16", valid_col=32, valid_row=rows, col=32,
                          outputs=(("T", 2048),)),
              TLoadParams(layout, "FP16", valid_col=rows, valid_row=32, col=32, stride=80,
                          outputs=(("U", 2048),))]
    check(params)


def test_faults_leave_on_the_fault_stream_and_make_no_run():
    bad = TLoadParams(L.ND2ZN, "S8", valid_col=40, valid_row=1, col=32, outputs=(("T", 512),))
    good = TLoadParams(L.NORM, "FP32", valid_col=8, valid_row=4, col=8, outputs=(("T", 256),))
    runs, faults = runs_of([bad, good, bad])
    assert faults == [2, 2]                                   # IllegalParameter, twice
    assert len(runs) == runs_needed(good) and runs[-1]["instr_last"] == 1


@pytest.mark.parametrize("layout", [L.ND2ZN, L.DN2NZ])
@pytest.mark.parametrize("valid", [64, 63, 62, 1, 0])
def test_dense_16_byte_b8_rows_are_read_two_a_run(layout, valid):
    """b8 rows of 16 bytes back to back: two a run when an even number of them is valid,
    one a run otherwise -- never a byte outside the valid block; beside them the same tile
    with a longer stride (one row a run)."""
    dn = layout.source_dn
    shape = dict(valid_col=valid, valid_row=16, col=64) if dn else \
        dict(valid_col=16, valid_row=valid, col=16)
    params = [TLoadParams(layout, "S8", outputs=(("T", 1024),), **shape),
              TLoadParams(layout, "S8", outputs=(("T", 1024),), stride=48, **shape)]
    assert [stacked(p) for p in params] == [valid % 2 == 0, False]
    check(params)

