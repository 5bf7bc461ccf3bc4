"""The parts every batch harness is built of (gateware), and the bench steps that drive one.

A batch harness keeps a whole batch inside the simulated design: its memories, its queue of
operations, the stall patterns of every port and the capture of every result, so that a
simulator runs the batch without calling Python once per cycle. The harnesses
(:mod:`~tilecosim.sim.batch_tload`, :mod:`~tilecosim.sim.batch_l1l0`,
:mod:`~tilecosim.sim.batch_align`) are built of these Components:

* :class:`RunControl`: ``start`` (one cycle) begins a run; cycle 0 of the run is the cycle
  after it, as cycle 0 of a Python-driven bench is its first cycle; ``stop`` ends it;
* :class:`BatchSource`: the queue of operations, loaded before the run through a
  :class:`MemoryLoad` port, presented on a stream one by one exactly as the Python
  bench's :class:`~tilecosim.sim.streams.Source` does, with the cycle of every accept;
* :class:`Responder`: a memory port that answers in order after a latency, as the Python
  bench's :class:`~tilecosim.sim.streams.Responder` does;
* :class:`WriteLog`: every beat of a stream with its cycle, for the bench to replay;
* :class:`Capture`: the fields of every completion or result, and ``finished`` with the
  last;
* a :class:`~tilecosim.sim.stall.StallGen` per stalled port (:func:`stall_gens`), loaded at
  ``start`` from a :class:`StallLoad` port;

and the memory helpers :func:`wide_memory` (a memory of any width) and :func:`read_bytes`
(W bytes at any byte address of a memory of 32-byte words: the harnesses' global memory,
L1 and UB).

A harness's ports are these signatures, nested in its own: a queue or a memory is
``In(MemoryLoad(...))``, the patterns are ``In(stall_loads(ports))``, a read-back is
``In(Readback(...))``. The bench side reaches them through the same signatures, by member:
:func:`write_words` (load a memory, one word per clock edge), :func:`run_batch` (queue a
batch, set the patterns, start it, wait for it in one wait), :func:`read_entries` (read a
capture back, one entry per edge) and :func:`read_log` (a log, several entries per edge).
The flat names a Verilog simulator sees are the signature's paths joined by ``__``, as
Amaranth's Verilog back end names the ports (``instr__en``, ``stall__req__seed``,
``rb__accept``).
"""

from amaranth import Cat, Module, Signal, Value
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .api import hang_limit
from .protocol import ProtocolMonitor, Rule, violation
from .stall import THRESHOLD_BITS, StallGen

__all__ = ["MemoryLoad", "StallLoad", "stall_loads", "Readback", "ProtocolReport",
           "protocol_monitor", "read_protocol", "RunControl", "BatchSource",
           "Responder", "WriteLog", "Capture", "stall_gens", "batch_source", "memory_port",
           "capture_run", "completions", "stream_of", "wide_memory", "loaded_memory",
           "read_bytes", "path", "write_words",
           "run_batch", "read_entries", "read_log", "CHUNK"]

CHUNK = 512                    # bits per memory of a wide capture


# --- the signatures of a harness's ports (from the bench's side: it drives what is Out) ---

class MemoryLoad(wiring.Signature):
    """The bench's write port into a harness memory of ``depth`` entries of ``shape``, used
    before a run: ``data`` goes to entry ``addr`` in every cycle ``en`` is high."""

    def __init__(self, shape, depth: int):
        super().__init__({"en": Out(1), "addr": Out(range(depth)), "data": Out(shape)})


class StallLoad(wiring.Signature):
    """A stall pattern's start (:func:`~tilecosim.sim.stall.seed_state`) and go threshold
    (:func:`~tilecosim.sim.stall.threshold`), loaded at ``start``."""

    def __init__(self):
        super().__init__({"seed": Out(32), "threshold": Out(THRESHOLD_BITS)})


def stall_loads(ports) -> wiring.Signature:
    """One :class:`StallLoad` per stalled port, named as the ports."""
    return wiring.Signature({p: Out(StallLoad()) for p in ports})


class Readback(wiring.Signature):
    """Reading a capture back after a run: ``addr`` in, each of ``fields`` (name -> shape)
    of that entry out the cycle after."""

    def __init__(self, depth: int, fields: dict):
        super().__init__({"addr": Out(range(depth)), **{n: In(s) for n, s in fields.items()}})


class ProtocolReport(wiring.Signature):
    """The first protocol violation of a run, read after it
    (:class:`~tilecosim.sim.protocol.ProtocolMonitor`): its ``rule`` (0: none), ``stream``
    (index) and cycle ``at``; ``boot``, a ``valid`` after a reset edge before the first
    run."""

    def __init__(self):
        super().__init__({"rule": In(3), "stream": In(4), "at": In(32), "boot": In(1)})


# --- the pieces -----------------------------------------------------------------------------

class RunControl(wiring.Component):
    """``running`` rises the cycle after ``start`` and falls the cycle after ``stop``;
    ``cycle`` counts from 0 in the first cycle of the run. 33 flip-flops."""

    def __init__(self):
        super().__init__({"start": In(1), "stop": In(1), "running": Out(1), "cycle": Out(32)})

    def elaborate(self, platform):
        m = Module()
        with m.If(self.start):
            m.d.sync += [self.running.eq(1), self.cycle.eq(0)]
        with m.Elif(self.running):
            m.d.sync += self.cycle.eq(self.cycle + 1)
            with m.If(self.stop):
                m.d.sync += self.running.eq(0)
        return m


class BatchSource(wiring.Component):
    """The queue of up to ``depth`` operations of ``shape``, presented on ``o``.

    ``load`` writes the queue before a run; from ``start`` the first ``count`` operations
    go out in order while ``running``: before each the source waits for ``go`` (its stall
    pattern), then holds ``valid`` until the operation is taken, as the Python bench's
    :class:`~tilecosim.sim.streams.Source`. The ``cycle`` of every accept is kept;
    ``rb_addr`` -> ``rb_accept`` reads it back the cycle after. No latency of its own: an
    operation is offered in the cycle its pattern lets it go. ``index`` counts the
    operations taken since ``start``.
    """

    def __init__(self, shape, depth: int):
        self.shape, self.depth = shape, depth
        super().__init__({
            "load": In(MemoryLoad(shape, depth)),
            "count": In(range(depth + 1)), "go": In(1),
            "start": In(1), "running": In(1), "cycle": In(32),
            "o": Out(stream.Signature(shape)),
            "rb_addr": In(range(depth)), "rb_accept": Out(32),
            "index": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        wdata = Value.cast(self.load.data)
        write, read = wide_memory(m, "queue", len(wdata), self.depth, read_domain="comb")
        write(self.load.addr, wdata, self.load.en)
        m.submodules.accepts = acc = memory.Memory(shape=32, depth=self.depth, init=[])
        index, held = self.index, Signal()
        more = self.running & (index < self.count)
        m.d.comb += [self.o.payload.eq(read(index)), self.o.valid.eq(more & (held | self.go))]
        aw = acc.write_port()
        m.d.comb += [aw.addr.eq(index), aw.data.eq(self.cycle)]
        with m.If(self.start):
            m.d.sync += [index.eq(0), held.eq(0)]
        with m.Elif(self.o.valid & self.o.ready):
            m.d.comb += aw.en.eq(1)
            m.d.sync += [index.eq(index + 1), held.eq(0)]
        with m.Elif(self.o.valid):
            m.d.sync += held.eq(1)
        ar = acc.read_port()
        m.d.comb += [ar.addr.eq(self.rb_addr), self.rb_accept.eq(ar.data)]
        return m


class Responder(wiring.Component):
    """The Python bench's :class:`~tilecosim.sim.streams.Responder` in gateware, less the
    answer.

    A request on ``req`` is taken while ``running`` and ``go_ready`` (its pattern) let it,
    and queued (up to ``queue``) with its due cycle, ``latency`` after ``cycle``. ``resp``
    becomes valid once the head is due, in a cycle ``go_valid`` lets it go, then holds until
    taken; its payload is ``answer``, which the harness computes from ``head`` (the queued
    request). ``take`` is high in the cycle a request is taken; ``overflow`` when one
    arrives with ``queue`` waiting. ``start`` empties the queue.
    """

    def __init__(self, req_shape, resp_shape, latency: int, queue: int = 32):
        self.latency, self.queue = latency, queue
        self.req_shape = req_shape
        super().__init__({
            "start": In(1), "running": In(1), "cycle": In(32),
            "go_ready": In(1), "go_valid": In(1),
            "req": In(stream.Signature(req_shape)),
            "resp": Out(stream.Signature(resp_shape)),
            "head": Out(req_shape), "answer": In(resp_shape),
            "take": Out(1), "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        queue = self.queue
        shape = data.StructLayout({"req": self.req_shape, "due": 32})
        m.submodules.pending = pend = memory.Memory(shape=shape, depth=queue, init=[])
        pw, pr = pend.write_port(), pend.read_port(domain="comb")
        head, tail = Signal(range(queue)), Signal(range(queue))
        used, shown = Signal(range(queue + 1)), Signal()
        m.d.comb += self.req.ready.eq(self.running & self.go_ready)
        take_req = self.req.valid & self.req.ready
        m.d.comb += [pw.addr.eq(tail), pw.en.eq(take_req), pw.data.req.eq(self.req.payload),
                     pw.data.due.eq(self.cycle + self.latency), pr.addr.eq(head)]
        show = self.running & (used != 0) & (pr.data.due <= self.cycle) & \
            (shown | self.go_valid)
        m.d.comb += [self.resp.valid.eq(show), self.resp.payload.eq(self.answer),
                     self.head.eq(pr.data.req), self.take.eq(take_req)]
        take_resp = show & self.resp.ready
        m.d.comb += self.overflow.eq(take_req & (used == queue) & ~take_resp)
        with m.If(take_req):
            m.d.sync += tail.eq(tail + 1)
        with m.If(take_resp):
            m.d.sync += head.eq(head + 1)
        m.d.sync += [shown.eq(show & ~self.resp.ready), used.eq(used + take_req - take_resp)]
        with m.If(self.start):
            m.d.sync += [head.eq(0), tail.eq(0), used.eq(0), shown.eq(0)]
        return m


class WriteLog(wiring.Component):
    """Every ``entry`` (``width`` bits) in a cycle ``take`` is high, in order, up to
    ``capacity``; ``count`` of them so far (``start`` clears it), ``full`` when one arrives
    on a full log.

    The log is ``lanes`` memories side by side, entry i in memory i % lanes, so that one
    read returns ``lanes`` entries: ``lb_addr`` = g gives entries g*lanes ..
    g*lanes+lanes-1 on ``lb_entries`` (the first in the low bits) the cycle after.
    """

    def __init__(self, width: int, capacity: int, lanes: int = 1):
        self.width, self.capacity, self.lanes = width, capacity, lanes
        self.rows = -(-capacity // lanes)
        super().__init__({
            "entry": In(width), "take": In(1), "start": In(1),
            "count": Out(range(capacity + 1)), "full": Out(1),
            "lb_addr": In(range(self.rows)), "lb_entries": Out(lanes * width),
        })

    def elaborate(self, platform):
        m = Module()
        lanes, count = self.lanes, self.count
        lane = count % lanes if lanes > 1 else 0
        room = count < self.capacity
        reads = []
        for k in range(lanes):
            write, read = wide_memory(m, f"lane{k}", self.width, self.rows)
            write(count // lanes if lanes > 1 else count, self.entry,
                  self.take & room & (lane == k))
            reads.append(read(self.lb_addr))
        m.d.comb += [self.lb_entries.eq(Cat(*reads)), self.full.eq(self.take & ~room)]
        with m.If(self.start):
            m.d.sync += count.eq(0)
        with m.Elif(self.take & room):
            m.d.sync += count.eq(count + 1)
        return m


class Capture(wiring.Component):
    """The ``fields`` (a dict name -> shape) of every cycle ``take`` is high, entry n for the
    n-th take, up to ``depth``; ``last`` with the ``count``-th take, and ``finished`` from
    the cycle after it until the next ``start``. ``rb_addr`` -> ``rb`` reads an entry back
    the cycle after; ``taken`` counts the takes since ``start``."""

    def __init__(self, fields: dict, depth: int):
        self.layout = data.StructLayout(fields)
        self.depth = depth
        super().__init__({
            "fields": In(self.layout), "take": In(1), "start": In(1),
            "count": In(range(depth + 1)), "last": Out(1), "finished": Out(1),
            "rb_addr": In(range(depth)), "rb": Out(self.layout),
            "taken": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        taken = self.taken
        for name in self.layout.members:
            value = Value.cast(getattr(self.fields, name))
            write, read = wide_memory(m, name, len(value), self.depth)
            write(taken, value, self.take)
            m.d.comb += Value.cast(getattr(self.rb, name)).eq(read(self.rb_addr))
        m.d.comb += self.last.eq(self.take & (taken + 1 == self.count))
        with m.If(self.start):
            m.d.sync += [taken.eq(0), self.finished.eq(0)]
        with m.Elif(self.take):
            m.d.sync += taken.eq(taken + 1)
            with m.If(self.last):
                m.d.sync += self.finished.eq(1)
        return m


def stall_gens(m, loads, ports, start) -> dict:
    """A :class:`~tilecosim.sim.stall.StallGen` per port of ``ports``, loaded at ``start``
    from the harness's ``loads`` (``In(stall_loads(ports))``); port -> its ``go``."""
    go = {}
    for p in ports:
        m.submodules[f"stall_{p}"] = gen = StallGen()
        load = getattr(loads, p)
        m.d.comb += [gen.seed.eq(load.seed), gen.threshold.eq(load.threshold),
                     gen.load.eq(start)]
        go[p] = gen.go
    return go


def batch_source(m, harness, load, stream_, ctl, go) -> BatchSource:
    """A :class:`BatchSource` of ``harness.depth`` operations, loaded through the harness's
    ``load`` port and presented on ``stream_`` (an engine's input stream) in the run of
    ``ctl`` (a :class:`RunControl`) as ``go`` lets it; ``harness.count`` of them, their
    accept cycles read back on ``harness.rb.accept``."""
    m.submodules.source = src = BatchSource(stream_.payload.shape(), harness.depth)
    wiring.connect(m, wiring.flipped(load), src.load)
    wiring.connect(m, src.o, stream_)
    m.d.comb += [src.count.eq(harness.count), src.go.eq(go), src.start.eq(harness.start),
                 src.running.eq(ctl.running), src.cycle.eq(ctl.cycle),
                 src.rb_addr.eq(harness.rb.addr), harness.rb.accept.eq(src.rb_accept)]
    return src


def memory_port(m, harness, req, resp, ctl, go_ready, go_valid, queue: int) -> Responder:
    """A :class:`Responder` between an engine's request stream ``req`` and its response
    stream ``resp``, answering ``harness.latency`` cycles later in the run of ``ctl`` as the
    patterns ``go_ready`` and ``go_valid`` let it; the harness drives its ``answer`` from its
    ``head``."""
    m.submodules.responder = rsp = Responder(req.payload.shape(), resp.payload.shape(),
                                             harness.latency, queue)
    wiring.connect(m, req, rsp.req)
    wiring.connect(m, rsp.resp, resp)
    m.d.comb += [rsp.start.eq(harness.start), rsp.running.eq(ctl.running),
                 rsp.cycle.eq(ctl.cycle), rsp.go_ready.eq(go_ready), rsp.go_valid.eq(go_valid)]
    return rsp


def capture_run(m, name: str, harness, ctl, take, fields: dict) -> Capture:
    """A :class:`Capture` of ``fields`` (name -> value) in every cycle ``take`` is high, each
    read back through the harness's ``rb`` member of the same name; ``harness.count`` of them
    end the run of ``ctl`` and raise ``harness.finished``."""
    m.submodules[name] = cap = Capture({n: v.shape() for n, v in fields.items()},
                                       harness.depth)
    m.d.comb += [cap.take.eq(take), cap.start.eq(harness.start), cap.count.eq(harness.count),
                 cap.rb_addr.eq(harness.rb.addr), ctl.stop.eq(cap.last),
                 harness.finished.eq(cap.finished)]
    for n, v in fields.items():
        m.d.comb += [getattr(cap.fields, n).eq(v), getattr(harness.rb, n).eq(getattr(cap.rb, n))]
    return cap


def completions(m, done, ctl, harness, go) -> Capture:
    """An engine's ``done`` stream (one :data:`~tilecosim.hdl.common.Completion` per
    operation), ``ready`` as ``go`` (its stall pattern) says: the fault code and cycle of
    every completion captured (``accept`` stays the source's), read back through the
    harness's ``rb``; the run stops with the ``count``-th."""
    m.d.comb += done.ready.eq(ctl.running & go)
    return capture_run(m, "completions", harness, ctl, done.valid & done.ready,
                       {"done": ctl.cycle, "fault": done.payload.fault})


def protocol_monitor(m, harness, ctl, src: BatchSource, cap: Capture, streams: dict,
                     completions: str = "done") -> ProtocolMonitor:
    """A :class:`~tilecosim.sim.protocol.ProtocolMonitor` on ``streams`` (name -> (valid,
    ready, payload, access): what the design drives, and whether a beat is a memory access),
    with the instructions of ``src`` and the completions of ``cap`` (the stream named
    ``completions``); which instructions move
    data comes from the harness's ``moves`` (a bit per instruction of the batch), the report
    goes out on its ``proto`` (``In(ProtocolReport())``)."""
    m.submodules.protocol = mon = ProtocolMonitor(
        {n: len(Value.cast(p)) for n, (_, _, p, _) in streams.items()}, harness.depth,
        completions)
    for n, (valid, ready, payload, access) in streams.items():
        m.d.comb += [getattr(mon, f"{n}_valid").eq(valid), getattr(mon, f"{n}_ready").eq(ready),
                     getattr(mon, f"{n}_payload").eq(payload),
                     getattr(mon, f"{n}_access").eq(access)]
    moves = harness.moves
    m.d.comb += [mon.start.eq(harness.start), mon.running.eq(ctl.running),
                 mon.cycle.eq(ctl.cycle),
                 mon.accepted.eq(src.o.valid & src.o.ready),
                 mon.accepted_moves.eq(moves.bit_select(src.index, 1)),
                 mon.completed.eq(cap.take),
                 mon.completed_moves.eq(moves.bit_select(cap.taken, 1)),
                 mon.taken.eq(src.index), mon.done.eq(cap.taken),
                 harness.proto.rule.eq(mon.rule), harness.proto.stream.eq(mon.stream),
                 harness.proto.at.eq(mon.at), harness.proto.boot.eq(mon.boot)]
    return mon


def stream_of(s, access: bool = False) -> tuple:
    """(valid, ready, payload, access) of a stream, for :func:`protocol_monitor`."""
    return (s.valid, s.ready, Value.cast(s.payload), int(access))


def wide_memory(m, name: str, width: int, depth: int, read_domain: str = "sync"):
    """A ``width``-bit memory as memories of at most :data:`CHUNK` bits side by side
    (Amaranth's Python simulator compiles a memory's write mask as one expression per bit,
    which Python cannot compile for thousands of bits). Returns ``write(addr, data, en)``
    and ``read(addr) -> data`` (the cycle after; at once with ``read_domain="comb"``), both
    called once."""
    chunks = []
    for k, lo in enumerate(range(0, width, CHUNK)):
        mem = memory.Memory(shape=min(CHUNK, width - lo), depth=depth, init=[])
        m.submodules[f"{name}_{k}"] = mem
        chunks.append((lo, mem.write_port(), mem.read_port(domain=read_domain)))

    def write(addr, data, en):
        for lo, wp, _ in chunks:
            m.d.comb += [wp.addr.eq(addr), wp.data.eq(data[lo:lo + len(wp.data)]), wp.en.eq(en)]

    def read(addr):
        for _, _, rp in chunks:
            m.d.comb += rp.addr.eq(addr)
        return Cat(*(rp.data for _, _, rp in chunks))
    return write, read


def loaded_memory(m, name: str, load, width: int, depth: int):
    """A memory of ``depth`` words of ``width`` bits that the bench writes through ``load``
    (an ``In(MemoryLoad(...))`` port of the harness) before the runs."""
    m.submodules[name] = mem = memory.Memory(shape=width, depth=depth, init=[])
    wp = mem.write_port()
    m.d.comb += [wp.en.eq(load.en), wp.addr.eq(load.addr), wp.data.eq(load.data)]
    return mem


def read_bytes(m, mem, addr, nbytes: int, domain: str = "comb", en=None,
               aligned: bool = False):
    """``nbytes`` (a multiple of 32) from byte ``addr`` of ``mem`` (32-byte words): the
    words from ``addr // 32`` on, read through nbytes/32 + 1 read ports (nbytes/32 when
    ``aligned``: ``addr`` is a multiple of 32) and shifted by ``addr % 32`` bytes.  With
    ``domain="sync"`` the bytes come the cycle after the address (and ``en``); the shift
    is registered with it.  The memory needs nbytes/32 words past its last address read."""
    nwords = nbytes // 32 + (0 if aligned else 1)
    ports = [mem.read_port(domain=domain) for _ in range(nwords)]
    for k, port in enumerate(ports):
        m.d.comb += port.addr.eq(addr[5:] + k)
        if en is not None:
            m.d.comb += port.en.eq(en)
    out = Signal(8 * nbytes)
    if aligned:
        m.d.comb += out.eq(Cat(port.data for port in ports))
        return out
    shift = Signal(5)
    if domain == "comb":
        m.d.comb += shift.eq(addr[:5])
    else:
        m.d.sync += shift.eq(addr[:5])
    m.d.comb += out.eq(Cat(port.data for port in ports) >> (shift * 8))
    return out


# --- the bench side: a port is reached by its path in the harness's signature --------------

def path(*members: str) -> str:
    """The flat name of a port at ``members`` (a path through nested signatures), as
    Amaranth's Verilog back end names it and the bench ports resolve it."""
    return "__".join(members)


async def write_words(port, load: str, words) -> None:
    """Write ``words`` to entries 0.. of the memory behind the harness's ``load`` port (an
    ``In(MemoryLoad(...))`` member), one per clock edge; ``en`` is low afterwards."""
    en, addr, value = (path(load, n) for n in MemoryLoad(1, 1).members)
    for k, w in enumerate(words):
        port.set(en, 1)
        port.set(addr, k)
        port.set(value, w)
        await port.tick()
    port.set(en, 0)


async def read_entries(port, readback: str, fields: tuple, count: int) -> list[tuple]:
    """Entries 0..count-1 of the harness's ``readback`` port (an ``In(Readback(...))``
    member): the ``fields`` of each, one entry per clock edge."""
    out = []
    if count <= 0:
        return out
    addr, names = path(readback, "addr"), tuple(path(readback, f) for f in fields)
    port.set(addr, 0)
    await port.tick()
    for k in range(count):
        port.set(addr, min(k + 1, count - 1))
        out.append(await port.tick(*names))
    return out


async def read_log(port, readback: str, field: str, count: int, lanes: int,
                   width: int) -> list:
    """The first ``count`` entries (``width`` bits each) of a :class:`WriteLog` read through
    the harness's ``readback`` port, ``lanes`` per clock edge."""
    mask = (1 << width) - 1
    out = []
    for (group,) in await read_entries(port, readback, (field,), -(-count // lanes)):
        out += [(int(group) >> (k * width)) & mask for k in range(lanes)]
    return out[:count]


async def read_protocol(port, streams) -> str | None:
    """The first protocol violation of the run just ended (the harness's ``proto`` port), as
    its message, with ``streams`` the names the monitor was given in order; None when there
    was none."""
    rule, index, at, boot = await port.tick(*(path("proto", f) for f in
                                              ProtocolReport().members))
    names = list(streams)
    if rule:
        return violation(names[index] if index < len(names) else f"stream {index}", at,
                         Rule(rule))
    if boot:
        return violation("a stream", "before the first run", Rule.VALID_IN_RESET)
    return None


async def run_batch(port, queue: str, payloads, stalls: dict, limit: int,
                    moves=None) -> bool:
    """One run of a harness: write ``payloads`` to its ``queue`` (a :class:`MemoryLoad`
    member), set ``count`` and each stall pattern (``stalls``: port -> (seed state,
    threshold), on the harness's ``stall`` member, :func:`stall_loads`), pulse ``start`` and
    wait for ``finished`` in one wait of at most ``limit`` cycles (its
    :func:`~tilecosim.sim.api.hang_limit`). ``moves``: one bool per payload, whether the
    model says it moves data (set as the harness's ``moves`` bits, for its protocol
    monitor; None: all clear). Returns whether it finished."""
    await write_words(port, queue, payloads)
    port.set("count", len(payloads))
    port.set("moves", sum(1 << i for i, mv in enumerate(moves or ()) if mv))
    seed, threshold = StallLoad().members
    for name, (state, th) in stalls.items():
        port.set(path("stall", name, seed), state)
        port.set(path("stall", name, threshold), th)
    port.set("start", 1)
    await port.tick()
    port.set("start", 0)
    return await port.until("finished", hang_limit(limit))
