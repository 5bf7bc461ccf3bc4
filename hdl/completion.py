"""The completion side of an engine: how many instructions are in flight, and their
completions in instruction order, faults included.

An instruction that moves data *starts* (``started``) and completes with its last write
(``finished``: code NONE).  An instruction that faults -- or moves nothing -- completes
through the ``fault`` stream with its code; the engine offers it only when nothing is in
flight (``idle``), so it cannot overtake the instructions before it.  ``room`` says the
queue can take a completion: an engine lets its last write go only then.

Ports:

* ``started``, ``finished`` in -- pulses, at most one each per cycle
* ``fault`` in (stream) -- the D8 code of an instruction completing without data
* ``idle`` out -- no instruction in flight
* ``room`` out -- a completion can be queued this cycle
* ``done`` out (stream) -- the completions, in order

A finishing instruction takes precedence over a fault in the same cycle (which cannot
happen while the engine keeps faults for ``idle``).  Latency: a completion is on ``done``
the cycle after it is queued; ``depth`` completions wait there under back-pressure.
"""

from amaranth import Module, Signal
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from .common import Completion, FaultCode, check_at_least

__all__ = ["CompletionQueue"]


class CompletionQueue(wiring.Component):
    """The completions of an engine, in instruction order (see the module for the ports).

    Parameters
    ----------
    depth : int
        Completions held on ``done`` under back-pressure (>= 1).
    max_in_flight : int
        Instructions that may have started and not finished (>= 1); sizes the counter.
    """

    def __init__(self, depth: int = 4, max_in_flight: int = 63):
        check_at_least("depth", depth, 1, "completions")
        check_at_least("max_in_flight", max_in_flight, 1, "instructions")
        self.depth = depth
        self.max_in_flight = max_in_flight
        super().__init__({
            "started": In(1),
            "finished": In(1),
            "fault": In(stream.Signature(FaultCode)),
            "idle": Out(1),
            "room": Out(1),
            "done": Out(stream.Signature(Completion)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = queue = fifo.SyncFIFOBuffered(width=FaultCode.as_shape().width,
                                                          depth=self.depth)
        in_flight = Signal(range(self.max_in_flight + 1))
        push, pop = queue.w_stream, queue.r_stream
        m.d.comb += [self.idle.eq(in_flight == 0), self.room.eq(push.ready)]
        with m.If(self.finished):
            m.d.comb += [push.valid.eq(1), push.payload.eq(FaultCode.NONE)]
        with m.Else():
            wiring.connect(m, wiring.flipped(self.fault), push)
        m.d.comb += [self.done.valid.eq(pop.valid), self.done.payload.fault.eq(pop.payload),
                     pop.ready.eq(self.done.ready)]
        with m.If(self.started & ~self.finished):
            m.d.sync += in_flight.eq(in_flight + 1)
        with m.Elif(~self.started & self.finished):
            m.d.sync += in_flight.eq(in_flight - 1)
        return m
