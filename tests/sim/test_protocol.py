"""The protocol rules of the contract (D17, tilecosim.sim.protocol), checked by the gateware
monitor of the batch harnesses and by the Python-driven bench's stream drivers.

Each case is a trace written by hand from the rule it breaks (or keeps), cycle by cycle, and
the violation the rule's own words give: the rule, the stream and the cycle."""

import gc
import warnings

import pytest
from amaranth import ClockDomain, Module
from amaranth.hdl import UnusedElaboratable
from amaranth.sim import Simulator

from tilecosim.sim.protocol import (ProtocolError, ProtocolMonitor, Rule, Watch, is_violation,
                                    violation)
from tilecosim.sim.streams import in_flight

# one cycle: the stream ``s`` (valid, ready, payload), rst, and the instruction side:
# ``acc`` an instruction taken (``mv``: it moves data), ``done`` a completion beat, ``mvd``
# the completed one moved data; ``access``: s's beats are memory accesses
def cyc(v=0, r=0, p=0, rst=0, acc=0, mv=0, done=0, mvd=0):
    return dict(v=v, r=r, p=p, rst=rst, acc=acc, mv=mv, done=done, mvd=mvd)


CASES = {
    # a stalled beat (valid, not ready) whose valid falls the cycle after
    "valid dropped": ([cyc(1, 0, 5), cyc(0, 0, 5)], (Rule.VALID_DROPPED, "s", 1)),
    # a stalled beat whose payload changes, valid kept
    "payload changed": ([cyc(1, 0, 5), cyc(1, 0, 6)], (Rule.PAYLOAD_CHANGED, "s", 1)),
    # held until taken, then gone: legal
    "held until taken": ([cyc(1, 0, 5), cyc(1, 0, 5), cyc(1, 1, 5), cyc(0, 0, 0), cyc(1, 1, 7),
                          cyc(1, 1, 8)], None),
    # a payload may change freely while valid is low or once the beat moved
    "free when idle": ([cyc(0, 0, 1), cyc(0, 0, 2), cyc(1, 1, 3), cyc(1, 0, 4), cyc(1, 1, 4)],
                       None),
    # valid the cycle after an edge with rst high
    "valid after reset": ([cyc(0, 0, 0, rst=1), cyc(1, 0, 5)], (Rule.VALID_IN_RESET, "s", 1)),
    # a stall before a reset: valid may fall after it (rst ends the beat)
    "reset ends a stall": ([cyc(1, 0, 5), cyc(1, 0, 5, rst=1), cyc(0, 0, 0), cyc(0, 0, 0)], None),
    # a completion before any instruction was taken
    "extra completion": ([cyc(done=1)], (Rule.EXTRA_COMPLETION, "done", 0)),
    # one instruction, two completions
    "two completions of one": ([cyc(acc=1, mv=1), cyc(done=1, mvd=1), cyc(done=1)],
                               (Rule.EXTRA_COMPLETION, "done", 2)),
    # a completion in the cycle its instruction is taken: legal
    "same-cycle completion": ([cyc(acc=1, done=1)], None),
    # an access while the only instruction in flight faults
    "access of a faulting instruction": ([cyc(acc=1, mv=0), cyc(1, 1, 9)],
                                         (Rule.FAULTING_ACCESS, "s", 1)),
    # accesses while a moving instruction is in flight, then one after it completed
    "access after completion": ([cyc(acc=1, mv=1), cyc(1, 1, 1), cyc(done=1, mvd=1),
                                 cyc(1, 1, 2)], (Rule.FAULTING_ACCESS, "s", 3)),
    # an access in the cycle its (moving) instruction is taken: legal
    "access in the accept cycle": ([cyc(1, 1, 1, acc=1, mv=1), cyc(1, 1, 2)], None),
}


#: the cases whose stream ``s`` is a memory access (rule 5); in the others it is not
ACCESS = {"access of a faulting instruction", "access after completion",
          "access in the accept cycle"}


def run_monitor(trace, access, completions="done"):
    """The gateware monitor on ``trace`` (s: a stream, a memory access when ``access``;
    ``completions``: the completion stream's name)."""
    mon = ProtocolMonitor({"s": 8, completions: 1}, depth=8, completions=completions)
    top = Module()
    top.submodules.mon = mon
    top.domains.sync = cd = ClockDomain("sync")
    sim = Simulator(top)
    sim.add_clock(1e-8, domain="sync")
    out = {}

    async def bench(ctx):
        ctx.set(mon.s_access, access)
        ctx.set(mon.start, 1)
        await ctx.tick()
        ctx.set(mon.start, 0)
        ctx.set(mon.running, 1)
        taken = done = 0
        for k, c in enumerate(trace):
            ctx.set(mon.cycle, k)
            ctx.set(cd.rst, c["rst"])
            ctx.set(mon.s_valid, c["v"])
            ctx.set(mon.s_ready, c["r"])
            ctx.set(mon.s_payload, c["p"])
            ctx.set(getattr(mon, f"{completions}_valid"), c["done"])
            ctx.set(getattr(mon, f"{completions}_ready"), c["done"])
            ctx.set(mon.accepted, c["acc"])
            ctx.set(mon.accepted_moves, c["mv"])
            ctx.set(mon.completed, c["done"])
            ctx.set(mon.completed_moves, c["mvd"])
            ctx.set(mon.taken, taken)
            ctx.set(mon.done, done)
            await ctx.tick()
            taken += c["acc"]
            done += c["done"]
        ctx.set(cd.rst, 0)
        ctx.set(mon.running, 0)
        await ctx.tick()
        out["got"] = (ctx.get(mon.rule), ctx.get(mon.stream), ctx.get(mon.at))

    sim.add_testbench(bench)
    sim.run()
    rule, stream, at = out["got"]
    return None if rule == 0 else (Rule(rule), ["s", completions][stream], at)


def run_watch(trace, access):
    """The Python-driven bench's checks (rules 1 to 3 on s, the rest as the drivers make
    them) on ``trace``."""
    watch, accepted, completed, moves = Watch("s"), [], [], []
    allowed = in_flight(accepted, completed, moves)
    for k, c in enumerate(trace):
        try:
            if c["acc"]:
                accepted.append(k)
                moves.append(bool(c["mv"]))
            watch.check(c["v"], c["r"], c["p"], c["rst"], k)
            if access and c["v"] and c["r"] and not c["rst"] and not allowed(k):
                raise ProtocolError("s", k, Rule.FAULTING_ACCESS)
            if c["done"]:
                completed.append(k)
                if len(completed) > len(accepted):
                    raise ProtocolError("done", k, Rule.EXTRA_COMPLETION)
        except ProtocolError as e:
            return (e.rule, e.stream, e.cycle)
    return None


@pytest.mark.parametrize("name", list(CASES))
def test_the_gateware_monitor_names_the_rule_the_stream_and_the_cycle(name):
    trace, want = CASES[name]
    assert run_monitor(trace, name in ACCESS) == want


@pytest.mark.parametrize("name", list(CASES))
def test_the_python_bench_checks_agree(name):
    trace, want = CASES[name]
    assert run_watch(trace, name in ACCESS) == want


def test_the_completions_are_the_stream_named_so():
    """An align unit's completions are its results (``res``): an extra one is named there,
    whichever stream is listed last (StoreAlign's UB writes)."""
    trace, _ = CASES["two completions of one"]
    assert run_monitor(trace, False, completions="res") == (Rule.EXTRA_COMPLETION, "res", 2)
    with warnings.catch_warnings():
        # the half-built component is never elaborated: Amaranth would say so when it goes
        # (as tests/hdl/test_params.py does)
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match="completions='done': not one of the streams s, res"):
            ProtocolMonitor({"s": 8, "res": 1}, depth=8)
        gc.collect()


def test_a_violation_is_a_class_of_its_own():
    msg = violation("write", 57, Rule.VALID_DROPPED)
    assert msg == ("protocol violation on write at cycle 57: valid fell before its beat moved "
                   "(it must stay high until ready takes the beat)")
    assert is_violation(msg) and is_violation("instruction 2: " + msg)
    assert not is_violation("output tile 0, row 1, column 2, byte 0 of the element: expected "
                            "0x01, got 0x02")
