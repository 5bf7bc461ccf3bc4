"""The completion queue: completions leave in instruction order, faults included.

The environment is an engine as the queue's contract describes it: an instruction starts
(``started``) and later finishes (``finished``, only while ``room``), or completes at once
through the ``fault`` stream, offered only while nothing is in flight.  Pulses, fault codes
and the back-pressure on ``done`` are arbitrary otherwise.

The proof tracks any one completion (the ``n``-th, a free constant): the ``n``-th that leaves
on ``done`` must carry the code of the ``n``-th queued (NONE for a finished instruction), and
nothing leaves that was not queued.
"""

from __future__ import annotations

from amaranth import Signal

from tilecosim.hdl.common import FaultCode
from tilecosim.hdl.completion import CompletionQueue

from .common import AnyConst, Harness

COUNT_BITS = 6


def completion_order(depth: int = 4) -> Harness:
    h = Harness()
    m = h.m
    m.submodules.dut = dut = CompletionQueue(depth=depth, max_in_flight=7)
    h.free(dut.started, dut.finished, dut.fault.valid, dut.fault.payload, dut.done.ready)
    h.stream(dut.fault, "in", "fault")
    h.stream(dut.done, "out", "done")

    # the engine: at most max_in_flight in flight, a finish only for one that started and
    # only with room, a fault only when nothing is in flight (and nothing starts meanwhile)
    in_flight = Signal(4, name="in_flight")
    with m.If(~h.live):
        h.assume(~dut.started & ~dut.finished, "quiet_in_reset")
    h.assume(~dut.finished | ((in_flight != 0) & dut.room), "finish_started_with_room")
    h.assume(~dut.started | (in_flight < 7), "in_flight_bounded")
    with m.If(dut.fault.valid):
        h.assume((in_flight == 0) & ~dut.started & ~dut.finished, "fault_when_idle")
        h.assume(dut.fault.payload != FaultCode.NONE, "fault_has_a_code")
    with m.If(dut.started & ~dut.finished):
        m.d.sync += in_flight.eq(in_flight + 1)
    with m.Elif(~dut.started & dut.finished):
        m.d.sync += in_flight.eq(in_flight - 1)
    with m.If(h.live):
        h.check(dut.idle == (in_flight == 0), "idle_when_nothing_in_flight")

    # completions queued (in instruction order) and completions out
    queued = dut.finished | (dut.fault.valid & dut.fault.ready)
    code = Signal(FaultCode, name="queued_code")
    m.d.comb += code.eq(FaultCode.NONE)
    with m.If(~dut.finished):
        m.d.comb += code.eq(dut.fault.payload)
    n_in, n_out = Signal(COUNT_BITS, name="n_in"), Signal(COUNT_BITS, name="n_out")
    m.d.sync += n_in.eq(n_in + queued)
    out = dut.done.valid & dut.done.ready
    m.d.sync += n_out.eq(n_out + out)

    n = AnyConst(COUNT_BITS)
    tracked, seen = Signal(FaultCode, name="tracked_code"), Signal(name="tracked_seen")
    with m.If(queued & (n_in == n)):
        m.d.sync += [tracked.eq(code), seen.eq(1)]
    with m.If(h.live & dut.done.valid):
        h.check(n_out < n_in, "nothing_out_that_was_not_queued")
        with m.If(n_out == n):
            h.check(seen & (dut.done.payload.fault == tracked), "completion_in_order")

    # not vacuous: a fault leaves after finished instructions queued behind back-pressure
    h.cover(h.live & out & (n_out == 3) & (dut.done.payload.fault != FaultCode.NONE)
            & (n_in == 4), "fault_after_three_in_a_full_queue")
    h.cover(h.live & dut.started & (in_flight == 3), "three_in_flight")
    h.cover(h.live & ~dut.room & (n_in - n_out == depth), "queue_full")
    return h
