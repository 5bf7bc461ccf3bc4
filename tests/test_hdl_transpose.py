"""The transpose unit: both implementations against numpy's transpose, with random
back-pressure, every element size, partial squares; and the square one's throughput."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.transpose import NaiveTranspose, SquareTranspose


def squares(seed, count=10, le=None):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        lg = int(rng.integers(0, 4)) if le is None else le
        s, e = 32 >> lg, 1 << lg
        lines = int(rng.choice([s, max(1, s // 2), 1]))
        sq = rng.integers(0, 256, (s, s, e), dtype=np.uint8)
        out.append((lg, lines, sq))
    return out


def run(cls, sqs, seed=0, p_in=1.0, p_out=1.0):
    dut = cls()
    rng = random.Random(seed)
    got, timing = [], {}
    total = sum(lines for _, lines, _ in sqs)

    async def source(ctx):
        for lg, lines, sq in sqs:
            for row in sq:
                while rng.random() > p_in:
                    ctx.set(dut.i.valid, 0)
                    await ctx.tick()
                ctx.set(dut.i.valid, 1)
                ctx.set(dut.i.payload, {"data": int.from_bytes(row.tobytes(), "little"),
                                        "le": lg, "lines": lines})
                await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)

    async def sink(ctx):
        orng = random.Random(seed + 1)
        cycle = 0
        while len(got) < total:
            ctx.set(dut.o.ready, orng.random() < p_out)
            _, _, v, r, pl = await ctx.tick().sample(dut.o.valid, dut.o.ready, dut.o.payload)
            if v and r:
                got.append((int(pl.data).to_bytes(32, "little"), int(pl.index), int(pl.last)))
                timing.setdefault("first", cycle)
                timing["last"] = cycle
            cycle += 1

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    sim.run()
    return got, timing


def expected(sqs):
    out = []
    for lg, lines, sq in sqs:
        for col in range(lines):
            out.append((np.ascontiguousarray(sq[:, col]).tobytes(), col, int(col == lines - 1)))
    return out


@pytest.mark.parametrize("cls", [SquareTranspose, NaiveTranspose])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_squares_with_back_pressure(cls, seed):
    sqs = squares(seed, count=12)
    got, _ = run(cls, sqs, seed, p_in=0.7, p_out=0.6)
    assert got == expected(sqs)


@pytest.mark.parametrize("le", [0, 1, 2, 3])
def test_square_unit_full_throughput_one_square_of_storage(le):
    """One row in and one column out per cycle, no gap between squares: the last of N*S
    columns leaves S + N*S - 1 cycles after the start."""
    sqs = squares(10 + le, count=8, le=le)
    sqs = [(lg, 32 >> lg, sq) for lg, _, sq in sqs]           # full squares
    got, t = run(SquareTranspose, sqs)
    assert got == expected(sqs)
    s = 32 >> le
    assert t["first"] == s and t["last"] == s + 8 * s - 1


def test_naive_unit_drains_before_filling():
    sqs = [(0, 32, sq) for _, _, sq in squares(5, count=3, le=0)]
    got, t = run(NaiveTranspose, sqs)
    assert got == expected(sqs)
    assert t["last"] > 32 + 3 * 32 + 30                         # no overlap of fill and drain
