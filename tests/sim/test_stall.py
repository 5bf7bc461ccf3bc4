"""The stall patterns: the Python model and the gateware generator agree bit for bit, and a
pattern's rate is its probability."""

import pytest
from amaranth.sim import Simulator

from tilecosim.sim.stall import Stall, StallGen, seed_state, threshold, xorshift32


def test_xorshift32_is_marsaglias_generator():
    # Marsaglia (2003), "Xorshift RNGs": the (13, 17, 5) triple from state 2463534242
    x, seq = 2463534242, []
    for _ in range(3):
        x = xorshift32(x)
        seq.append(x)
    assert seq == [723471715, 2497366906, 2064144800]


@pytest.mark.parametrize("seed,port,p", [(0, 0, 0.5), (1, 3, 0.25), (2**64 - 1, 2, 0.9),
                                         (7, 1, 1.0), (7, 1, 0.0)])
def test_the_gateware_draws_the_models_pattern(seed, port, p):
    dut = StallGen()
    got = []

    async def bench(ctx):
        ctx.set(dut.seed, seed_state(seed, port))
        ctx.set(dut.threshold, threshold(p))
        ctx.set(dut.load, 1)
        await ctx.tick()
        ctx.set(dut.load, 0)
        for _ in range(3000):
            got.append(ctx.get(dut.go))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    model, want = Stall(seed, port, p), []
    for _ in range(3000):
        want.append(int(model.go()))
        model.step()
    assert got == want


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_a_patterns_rate_is_its_probability(p):
    model, n, go = Stall(123, 0, p), 20000, 0
    for _ in range(n):
        go += model.go()
        model.step()
    assert abs(go / n - p) < 0.02


def test_ports_and_seeds_get_distinct_nonzero_states():
    states = {seed_state(s, k) for s in range(50) for k in range(8)}
    assert len(states) == 400 and 0 not in states
    assert threshold(0) == 0 and threshold(1) == 65536
    with pytest.raises(ValueError):
        threshold(1.5)
