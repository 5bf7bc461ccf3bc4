"""The TSTORE engine against the golden model, on every simulator (one bench body).

Scenarios come from seeded draws: legal TSTOREs of every layout and element size, with
sparse and dense strides, and the faults of D15 (another element size, overlapping rows,
past the end of memory, shapes the source's size does not allow).  The final memory must
equal the model's byte for byte, so a byte written outside a footprint is caught as surely
as one missed.
"""

import random
import zlib

import numpy as np
import pytest

from tilecosim.model.dtypes import DTYPES
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TileImage, TLoadLayout as L
from tilecosim.model.tstore import TStoreParams
from tilecosim.sim.benches.tstore import TStoreConfig, compare_tstore, simulate_tstore

from ..tiers import slow

TYPES = ["S8", "FP16", "FP32", "S64"]
MEM = 1 << 17


def draw(rng: random.Random, layout: L, dtype: str, slot: int):
    """(params, source image): a TSTORE whose fields are a legal TLOAD's (one output), its
    base in its own 4 KB of memory, and now and then one of D15's faults."""
    p, _ = random_tload(rng, layout, dtype, sizes=(256, 512, 1024, 2048), n=1)
    size = p.outputs[0][1]
    e = p.esize
    col = p.valid_col if p.col is None else p.col
    src_type = p.dtype
    base = slot * 4096 + rng.randint(0, 200)
    stride = p.stride
    inner = p.valid_row if layout.source_dn else p.valid_col
    if stride is not None and stride < inner * e and rng.random() < 0.5:
        stride = inner * e + rng.randint(0, 3) * e            # mostly legal: no overlap
    fault = rng.random()
    if fault < 0.06:                                          # another element size
        src_type = DTYPES[rng.choice([t for t in TYPES if DTYPES[t].esize != e])]
    elif fault < 0.10:                                        # past the end of memory
        base = MEM - rng.randint(1, 64)
    elif fault < 0.13:                                        # Col the size does not allow
        col = col + rng.randint(1, 3)
    rows = max(1, size // (col * e))
    data = np.random.default_rng(rng.randint(0, 2**32 - 1)).integers(0, 256, size,
                                                                     dtype=np.uint8)
    src = TileImage("T", size, src_type, layout.dest, rows, col, data, np.ones(size, bool))
    params = TStoreParams(layout, p.dtype, p.valid_col, base, p.valid_row, col, stride)
    return params, src


def run_batch(layout, width, backend="amaranth", count=12, stall=0.3):
    seed = zlib.crc32(f"tstore:{layout.name}:{width}".encode()) & 0xFFFF
    rng = random.Random(seed)
    cases = [draw(rng, layout, rng.choice(TYPES), k) for k in range(count)]
    mem = np.random.default_rng(seed).integers(0, 256, MEM, dtype=np.uint8)
    res = simulate_tstore(cases, mem, TStoreConfig(width=width, seed=seed, p_wr_ready=1 - stall,
                                                   p_instr_valid=1 - stall, backend=backend))
    problems = compare_tstore(cases, mem, res)
    assert not problems, "\n".join(problems)
    return cases, res


@pytest.mark.parametrize("width", [32, 64, slow(128)])
@pytest.mark.parametrize("layout", list(L), ids=lambda x: x.name)
def test_random_tstores(layout, width):
    cases, res = run_batch(layout, width)
    assert len(res.faults) == len(cases)


def test_the_draws_reach_every_outcome():
    """The batches above hold legal stores and each fault (a test that could not fail
    otherwise: a batch of faults only would write nothing)."""
    from tilecosim.model.faults import Fault
    from tilecosim.model.tstore import plan_tstore
    seen = set()
    for layout in L:
        for width in (32, 64, 128):
            seed = zlib.crc32(f"tstore:{layout.name}:{width}".encode()) & 0xFFFF
            rng = random.Random(seed)
            for k in range(12):
                p, src = draw(rng, layout, rng.choice(TYPES), k)
                try:
                    pl = plan_tstore(p, src, MEM)
                    seen.add("empty" if pl.span() is None else "legal")
                except Fault as f:
                    seen.add(f.field)
    assert {"legal", "DataType", "RegSrc0", "Col"} <= seen, seen


# Verilator builds the engine in about half a minute: in the slow tier (make check)
@pytest.mark.parametrize("backend", ["icarus", slow("verilator")])
def test_the_same_bench_on_the_verilog_simulators(backend):
    run_batch(L.ND2ZN, 32, backend=backend, count=6)
    run_batch(L.ND2NZ, 64, backend=backend, count=6)


def _tile(size, dtype, layout, col, seed=7):
    e = DTYPES[dtype].esize
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return TileImage("T", size, DTYPES[dtype], layout.dest, size // (col * e), col, data,
                     np.ones(size, bool))


#: the edges of D15's rules, each with the model's verdict written by hand
EDGES = [
    # (layout, type, LB0, LB1, LB2, stride, source type, the fault's field or None)
    (L.NORM, "S16", 4, 2, 16, 6, "S16", "RegSrc1"),     # two rows of 8 B, 6 B apart
    (L.NORM, "S16", 4, 2, 16, 8, "S16", None),          # 8 B apart: just touching
    (L.NORM, "S16", 4, 1, 16, 0, "S16", None),          # one row: any stride
    (L.DN2ZN, "S8", 2, 40, 16, 39, "S8", "RegSrc1"),    # two columns of 40 B, 39 apart
    (L.DN2NZ, "FP32", 16, 8, 16, 32, "S32", None),      # same size, another type: a copy
    (L.DN2NZ, "FP32", 16, 8, 16, 32, "S16", "DataType"),
    (L.ND2ZN, "S8", 16, 32, 16, None, "S8", None),      # b8 ZN of 16 columns: half squares
    (L.ND2NZ, "S64", 4, 16, 4, None, "S64", None),
    (L.ND2ZN, "S16", 0, 5, 16, 1, "S16", None),         # empty: nothing, no fault
]


@pytest.mark.parametrize("width", [32, 128])
def test_the_edges_of_the_rules(width):
    cases = []
    for k, (layout, dt, vc, vr, col, stride, src_type, _) in enumerate(EDGES):
        src = _tile(1024, dt, layout, col)
        src.dtype = DTYPES[src_type]
        cases.append((TStoreParams(layout, dt, vc, 64 + k * 1024, vr, col, stride), src))
    mem = np.random.default_rng(3).integers(0, 256, 16384, dtype=np.uint8)
    res = simulate_tstore(cases, mem, TStoreConfig(width=width))
    assert not compare_tstore(cases, mem, res)
    want = [0 if f is None else 2 for *_, f in EDGES]           # IllegalParameter: code 2
    assert res.faults == want
