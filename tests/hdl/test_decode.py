"""The TLOAD decoder alone: its fault code and geometry against the golden model's plan.

Edge sizes are named: Size, Col and ValidRow at a power of two and one either side of it.
"""

import random

import pytest
from amaranth.sim import Simulator

from tilecosim.hdl.tload.decode import TLoadDecoder
from tilecosim.model.dtypes import DTYPES
from tilecosim.model.faults import Fault
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams, plan
from tilecosim.sim.benches.tload import instr_payload

MEM = 1 << 16


def decode_all(params, mem_size=MEM):
    """Each TLOAD through the registered decoder, one per cycle; the decoded payloads."""
    from tilecosim.hdl.tload.types import TLoadInstr
    dut = TLoadDecoder()
    out = []

    async def bench(ctx):
        ctx.set(dut.mem_size, mem_size)
        ctx.set(dut.o.ready, 1)
        for p in params:
            ctx.set(dut.i.payload, TLoadInstr.const(instr_payload(p)))
            ctx.set(dut.i.valid, 1)
            await ctx.tick()
            ctx.set(dut.i.valid, 0)
            out.append(ctx.get(dut.o.payload))
            assert ctx.get(dut.o.valid)
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return out


def model_fault(p, mem_size=MEM):
    try:
        return 0, plan(p, mem_size)
    except Fault as f:
        return f.code, None


def check(params, mem_size=MEM):
    got = decode_all(params, mem_size)
    for p, d in zip(params, got):
        code, pl = model_fault(p, mem_size)
        assert d.fault.value == code, p
        if pl is None:
            continue
        assert 1 << d.log2_rows == pl.out_rows and 1 << d.log2_cols == pl.out_cols, p
        assert d.log2_esize == p.dtype.esize.bit_length() - 1
        assert d.n == pl.n and d.base == p.base and d.stride == pl.stride
        major, minor = (p.valid_col, p.valid_row) if p.layout.source_dn else \
            (p.valid_row, p.valid_col)
        assert (d.valid_major, d.valid_minor) == (major, minor)
        assert d.null == (p.pad.name == "Null")


def test_random_legal_tloads_decode_as_the_model_plans_them():
    rng = random.Random(21)
    params = []
    while len(params) < 60:
        p, span = random_tload(rng, sizes=(256, 512, 1024, 2048, 4096, 8192))
        if span <= MEM:
            params.append(p)
    check(params)


@pytest.mark.parametrize("size", [255, 256, 257, 511, 512, 513, 1023, 1024, 1025])
def test_sizes_at_and_beside_a_power_of_two(size):
    """Only a power of two >= 256 is a tile size; the model raises IllegalParameter for the
    others, and so must the decoder."""
    rows = max(1, size // 32)
    p = TLoadParams(L.NORM, "FP16", valid_col=16, valid_row=1, col=16, outputs=(("T", size),))
    q = TLoadParams(L.ND2NZ, "S8", valid_col=32, valid_row=rows, col=32, outputs=(("U", size),))
    check([p, q])


@pytest.mark.parametrize("col", [15, 16, 17, 31, 32, 33, 63, 64, 65])
def test_col_at_and_beside_a_power_of_two(col):
    params = [TLoadParams(lay, "FP16", valid_col=min(col, 8), valid_row=3, col=col,
                          outputs=(("T", 1024), ("M", 1024)))
              for lay in L]
    check(params)


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_valid_rows_and_columns_at_the_edge_of_the_block(extra):
    """ValidRow/ValidCol = Row/Col - 1, = Row/Col (legal), Row/Col + 1 (IllegalParameter)."""
    params = []
    for lay in L:
        # ND: Row = Size / (Col * e) = 1024 / (32 * 2) = 16; DN: Row = n * out_rows
        params.append(TLoadParams(lay, "FP16", valid_col=32, valid_row=16 + extra, col=32,
                                  outputs=(("T", 1024),)))
        params.append(TLoadParams(lay, "FP16", valid_col=32 + extra, valid_row=4, col=32,
                                  outputs=(("N", 256),)))
    check(params)


def test_instruction_faults_in_the_models_order():
    bad_queue = TLoadParams(L.NORM, "FP16", valid_col=16, valid_row=1, col=16,
                            outputs=(("T", 256), ("ACC", 256)))
    nine = TLoadParams(L.NORM, "FP16", valid_col=16, valid_row=1, col=144,
                       outputs=tuple(("T", 256) for _ in range(9)))
    differ = TLoadParams(L.NORM, "FP16", valid_col=16, valid_row=1, col=32,
                         outputs=(("T", 256), ("T", 512)))
    oob = TLoadParams(L.NORM, "FP32", valid_col=16, valid_row=4, col=16, base=MEM - 200,
                      outputs=(("T", 256),))
    last_byte = TLoadParams(L.NORM, "FP32", valid_col=16, valid_row=4, col=16,
                            base=MEM - 256, outputs=(("T", 256),))
    empty = TLoadParams(L.NORM, "FP32", valid_col=0, valid_row=0, col=16, base=MEM + 4,
                        outputs=(("T", 256),))
    params = [bad_queue, nine, differ, oob, last_byte, empty]
    assert [model_fault(p)[0] for p in params] == [1, 1, 2, 6, 0, 0]   # D8 codes
    check(params)


def test_every_data_type():
    params = [TLoadParams(L.ND2NZ, name, valid_col=256 // dt.esize // 8, valid_row=16,
                          col=512 // dt.esize // 16 if dt.esize < 8 else 4,
                          outputs=(("T", 512),)) for name, dt in DTYPES.items()]
    check(params)
