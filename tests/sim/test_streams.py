"""The stream drivers (Source, Sink, Monitor, Responder) on a small design: a 4-deep FIFO
between two streams, and a memory answering requests in order.  What goes in must come out,
in order, under any idle/back-pressure pattern, and the patterns follow their seeds."""

import random

import pytest
from amaranth import Module
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.sim.api import run_amaranth, watchdog
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Monitor, Responder, Sink, Source


class Pipe(wiring.Component):
    """i -> a 4-deep FIFO -> o."""
    i: In(stream.Signature(8))
    o: Out(stream.Signature(8))

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = q = fifo.SyncFIFOBuffered(width=8, depth=4)
        wiring.connect(m, wiring.flipped(self.i), q.w_stream)
        wiring.connect(m, q.r_stream, wiring.flipped(self.o))
        return m


def run_pipe(payloads, p_valid, p_ready, seed):
    state = {"cycle": 0, "done": False}
    got, seen, cycles = [], [], []

    def take(bits, cycle):
        got.append(bits)
        cycles.append(cycle)
        if len(got) == len(payloads):
            state["done"] = True

    timed_out = []
    procs = [watchdog(state, 20 * len(payloads) + 50, lambda: timed_out.append(1)),
             Source("i", payloads, state, stall=Stall(seed, 0, p_valid)),
             Monitor("i", state, lambda bits, cycle: seen.append(bits)),
             Sink("o", state, take, stall=Stall(seed, 1, p_ready))]
    run_amaranth(Pipe(), procs)
    assert not timed_out
    return got, seen, cycles, procs[1].accepted


@pytest.mark.parametrize("p_valid,p_ready", [(1.0, 1.0), (0.5, 1.0), (1.0, 0.3), (0.6, 0.6)])
def test_what_goes_in_comes_out_in_order(p_valid, p_ready):
    payloads = [random.Random(3).randrange(256) for _ in range(1)] + list(range(1, 40))
    got, seen, cycles, accepted = run_pipe(payloads, p_valid, p_ready, seed=7)
    assert got == payloads and seen == payloads
    assert len(accepted) == len(payloads) and accepted == sorted(accepted)
    assert all(a < c for a, c in zip(accepted, cycles))       # out after in


def test_without_stalls_one_beat_per_cycle():
    payloads = list(range(30))
    _, _, cycles, accepted = run_pipe(payloads, 1.0, 1.0, seed=0)
    assert accepted == list(range(accepted[0], accepted[0] + 30))
    assert cycles == list(range(cycles[0], cycles[0] + 30))


def test_the_pattern_follows_the_seed():
    payloads = list(range(25))
    a = run_pipe(payloads, 0.5, 0.5, seed=1)
    assert run_pipe(payloads, 0.5, 0.5, seed=1) == a
    assert run_pipe(payloads, 0.5, 0.5, seed=2)[3] != a[3]     # other seed, other accepts


class HeldValid:
    """Records every cycle in which ``valid`` of stream ``name`` fell before a handshake."""

    def __init__(self, name, state, broken):
        self.name, self.state, self.broken = name, state, broken

    async def __call__(self, port):
        was = None
        while not self.state["done"]:
            v, r, bits = await port.tick(*(f"{self.name}__{f}" for f in ("valid", "ready",
                                                                           "payload")))
            if was is not None and not v:
                self.broken.append(self.state["cycle"] - 1)
            was = bits if v and not r else None


def test_source_idles_exactly_where_its_pattern_says():
    """Ready always high: payload k is taken in the first cycle, after payload k-1's, in
    which the source's pattern (stepped once per cycle from cycle 0) lets it go."""
    payloads = list(range(30))
    _, _, _, accepted = run_pipe(payloads, 0.4, 1.0, seed=11)
    model, want, c = Stall(11, 0, 0.4), [], 0
    while len(want) < len(payloads):
        if model.go():
            want.append(c)
        model.step()
        c += 1
    assert [a - accepted[0] for a in accepted] == [w - want[0] for w in want]


class Reader(wiring.Component):
    """Issues the addresses 0..n-1 on ``req`` and passes each answer on to ``out``."""
    req: Out(stream.Signature(8))
    resp: In(stream.Signature(16))
    out: Out(stream.Signature(16))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.req.valid.eq(self.req.payload < 20)
        with m.If(self.req.valid & self.req.ready):
            m.d.sync += self.req.payload.eq(self.req.payload + 1)
        wiring.connect(m, wiring.flipped(self.resp), wiring.flipped(self.out))
        return m


@pytest.mark.parametrize("latency,stall", [(1, 0.0), (3, 0.0), (2, 0.4)])
def test_responder_answers_in_order_after_its_latency(latency, stall):
    state = {"cycle": 0, "done": False}
    asked, got = [], []

    def answer(addr):                   # called after the edge that took the request
        asked.append((addr, state["cycle"] - 1))
        return 1000 + addr

    def take(bits, cycle):
        got.append((bits, cycle))
        if len(got) == 20:
            state["done"] = True

    broken = []
    procs = [watchdog(state, 500, lambda: None),
             Responder("req", "resp", state, answer, latency=latency,
                       ready_stall=Stall(4, 0, 1 - stall), valid_stall=Stall(4, 1, 1 - stall)),
             HeldValid("resp", state, broken),
             Sink("out", state, take)]
    run_amaranth(Reader(), procs)
    assert [a for a, _ in asked] == list(range(20))
    assert [g for g, _ in got] == [1000 + a for a in range(20)]
    assert broken == []                                        # valid held until taken
    waits = [out_at - asked_at for (_, asked_at), (_, out_at) in zip(asked, got)]
    if stall:
        assert min(waits) >= latency and max(waits) > latency
    else:
        assert waits == [latency] * 20
