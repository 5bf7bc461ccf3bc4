"""The completion queue alone, against a few lines of Python that say what it must do:
completions leave in instruction order (an instruction with data completes at its last write,
a fault when nothing is in flight), ``idle`` counts what is in flight, nothing is lost under
back-pressure."""

import random

import pytest
from amaranth.sim import Simulator

from tilecosim.hdl.common import FaultCode
from tilecosim.hdl.completion import CompletionQueue
from tests.watchdog import run_bounded


def run(program, p_ready, seed, depth=4):
    """``program``: a list of instructions, each ("data", cycles in flight) or
    ("fault", code).  Drives the queue as an engine would; returns (completions, idle seen
    with data in flight)."""
    dut = CompletionQueue(depth=depth)
    done = []
    bad_idle = []

    async def engine(ctx):
        rng = random.Random(seed)
        in_flight = []                       # cycles left of each started instruction
        todo = list(program)
        while todo or in_flight:
            start = finish = False
            fault = None
            if todo and todo[0][0] == "data" and rng.random() < 0.7:
                start = True
            elif todo and todo[0][0] == "fault":
                fault = todo[0][1]
            # the oldest instruction ends once its time is up and there is room
            if in_flight and in_flight[0] <= 0 and ctx.get(dut.room):
                finish = True
            ctx.set(dut.started, start)
            ctx.set(dut.finished, finish)
            ctx.set(dut.fault.valid, fault is not None and ctx.get(dut.idle))
            ctx.set(dut.fault.payload, FaultCode(fault or 0))
            if in_flight and ctx.get(dut.idle):
                bad_idle.append(len(in_flight))
            took_fault = fault is not None and ctx.get(dut.idle) and ctx.get(dut.fault.ready) \
                and not finish
            await ctx.tick()
            in_flight = [c - 1 for c in in_flight]
            if finish:
                in_flight.pop(0)
            if start:
                in_flight.append(todo.pop(0)[1])
            elif took_fault:
                todo.pop(0)
        ctx.set(dut.started, 0)
        ctx.set(dut.finished, 0)
        ctx.set(dut.fault.valid, 0)
        for _ in range(4 * len(program) + 20):
            await ctx.tick()

    async def consumer(ctx):
        rng = random.Random(seed + 1)
        while True:
            ctx.set(dut.done.ready, rng.random() < p_ready)
            _, _, v, r, p = await ctx.tick().sample(dut.done.valid, dut.done.ready,
                                                    dut.done.payload)
            if v and r:
                done.append(p.fault.value)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(engine)
    sim.add_testbench(consumer, background=True)
    cycles = sum(c for kind, c in program if kind == "data")
    run_bounded(sim, 20 * (cycles + len(program)) + 200, "completion bench")
    return done, bad_idle


@pytest.mark.parametrize("p_ready", [1.0, 0.5, 0.2])
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_completions_leave_in_instruction_order(p_ready, depth):
    rng = random.Random(int(p_ready * 10) + depth)
    program = [("data", rng.randint(0, 6)) if rng.random() < 0.7 else
               ("fault", rng.choice([2, 5, 6, 7])) for _ in range(60)]
    done, bad_idle = run(program, p_ready, seed=depth, depth=depth)
    want = [0 if kind == "data" else code for kind, code in program]
    assert done == want
    assert bad_idle == []
