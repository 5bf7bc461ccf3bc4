"""Pad/merge alone: every byte is the data where valid, else the pad pattern's byte at the
same position in its element; Null padding leaves the padded bytes unwritten.  Lines go
through under back-pressure, in order, with their ``meta``."""

import random

import pytest
from amaranth.sim import Simulator

from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.model.dtypes import DTYPES, PadValue, pad_bytes
from tests.watchdog import run_bounded


def expected(data, valid, esize, pattern, null):
    out, be = bytearray(32), 0
    for b in range(32):
        v = (valid >> b) & 1
        out[b] = data[b] if v else pattern[b % esize]
        be |= (v | (not null)) << b
    return bytes(out), be


def lines(seed, n=40):
    rng = random.Random(seed)
    names = list(DTYPES)
    for k in range(n):
        dt = DTYPES[rng.choice(names)]
        pad = rng.choice(list(PadValue))
        # the model's pad bytes are the pattern of one element (Null: no pattern)
        pattern = pad_bytes(dt, pad, "finite") if pad is not PadValue.Null else bytes(dt.esize)
        valid = rng.choice([0, (1 << 32) - 1, rng.getrandbits(32),
                            (1 << rng.randint(0, 32)) - 1])
        yield (bytes(rng.getrandbits(8) for _ in range(32)), valid,
               dt.esize.bit_length() - 1, pattern, pad is PadValue.Null, k)


@pytest.mark.parametrize("stall", [0.0, 0.5])
@pytest.mark.parametrize("meta_width", [1, 15, 16, 17])
def test_merge_pad_and_byte_enables(stall, meta_width):
    cases = list(lines(meta_width + int(stall * 10)))
    dut = PadMerge(meta_width)
    got = []

    async def source(ctx):
        rng = random.Random(1)
        for data, valid, log2_esize, pattern, null, k in cases:
            while rng.random() < stall:
                ctx.set(dut.i.valid, 0)
                await ctx.tick()
            ctx.set(dut.i.payload, {"data": int.from_bytes(data, "little"), "valid": valid,
                                    "log2_esize": log2_esize,
                                    "pattern": int.from_bytes(pattern, "little"),
                                    "null": int(null), "meta": k % (1 << meta_width)})
            ctx.set(dut.i.valid, 1)
            await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)

    async def sink(ctx):
        rng = random.Random(2)
        for _ in range(20 * len(cases)):            # a watchdog: lines lost never arrive
            if len(got) == len(cases):
                break
            ctx.set(dut.o.ready, rng.random() >= stall)
            _, _, v, r, p = await ctx.tick().sample(dut.o.valid, dut.o.ready, dut.o.payload)
            if v and r:
                got.append((int(p.data).to_bytes(32, "little"), int(p.be), int(p.meta)))
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    run_bounded(sim, 30 * len(cases) + 100, "pad/merge bench")
    for (data, valid, log2_esize, pattern, null, k), (out, be, meta) in zip(cases, got):
        want, want_be = expected(data, valid, 1 << log2_esize, pattern, null)
        assert be == want_be
        assert all(out[b] == want[b] for b in range(32) if (want_be >> b) & 1)
        assert meta == k % (1 << meta_width)
    assert len(got) == len(cases)

