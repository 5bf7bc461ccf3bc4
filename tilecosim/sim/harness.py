"""The parts every batch harness is built of (gateware), and the bench steps that drive one.

A batch harness keeps a whole batch inside the simulated design: its memories, its queue of
operations, the stall patterns of every port and the capture of every result, so that a
simulator runs the batch without calling Python once per cycle. The harnesses
(:mod:`~tilecosim.sim.batch_tload`, :mod:`~tilecosim.sim.batch_l1l0`,
:mod:`~tilecosim.sim.batch_align`) share:

* :func:`control`: ``start`` (one cycle) begins a run; cycle 0 of the run is the cycle after
  it, as cycle 0 of a Python-driven bench is its first cycle;
* :func:`stall_gen`: a :class:`~tilecosim.sim.stall.StallGen` loaded at ``start``;
* :func:`batch_source`: the queue of operations, written before the run through
  ``<name>_we/_waddr/_wdata``, presented on a stream one by one exactly as the Python
  bench's :class:`~tilecosim.sim.streams.Source` does, with the cycle of every accept;
* :func:`responder`: a memory port that answers in order after a latency, as the Python
  bench's :class:`~tilecosim.sim.streams.Responder` does;
* :func:`write_log`: every beat of a stream with its cycle, for the bench to replay;
* :func:`capture`: the fields of every completion or result, and ``finished`` with the last;
* :func:`wide_memory`: a capture memory of any width;
* :func:`read_bytes`: W bytes at any byte address of a memory of 32-byte words (the
  harnesses' global memory and L1);

and on the bench side :func:`write_words` (load a memory through its write port, one word
per clock edge), :func:`run_batch` (queue a batch, start it, wait for it in one wait) and
:func:`read_entries` (read a capture back, one entry per edge), :func:`read_log` (a log,
several entries per edge).
"""

from amaranth import Cat, Signal, Value
from amaranth.lib import data, memory

from .stall import StallGen

__all__ = ["control", "stall_gen", "batch_source", "responder", "write_log", "capture",
           "completions", "wide_memory", "read_bytes",
           "write_words", "run_batch", "read_entries", "read_log", "CHUNK"]

CHUNK = 512                    # bits per memory of a wide capture


def control(m, start):
    """(running, cycle): ``running`` rises the cycle after ``start`` and the cycle counter
    starts at 0 there. The harness clears ``running`` when its batch is done."""
    running, cyc = Signal(name="running"), Signal(32, name="cycle")
    with m.If(start):
        m.d.sync += [running.eq(1), cyc.eq(0)]
    with m.Elif(running):
        m.d.sync += cyc.eq(cyc + 1)
    return running, cyc


def stall_gen(m, name: str, seed, threshold, start):
    """The ``go`` of a stall pattern loaded from ``seed``/``threshold`` at ``start``."""
    m.submodules[f"stall_{name}"] = gen = StallGen()
    m.d.comb += [gen.seed.eq(seed), gen.threshold.eq(threshold), gen.load.eq(start)]
    return gen.go


def batch_source(m, name: str, stream, shape, depth: int, we, waddr, wdata, count, go,
                 start, running, cyc, rb_addr):
    """The queue ``name`` of ``depth`` operations of ``shape``, presented on ``stream``
    (valid/ready/payload): before each the source waits for ``go``, then holds ``valid``
    until the operation is taken. Returns the accept cycle of operation ``rb_addr``, the
    cycle after."""
    wdata = Value.cast(wdata)
    write, read = wide_memory(m, name, len(wdata), depth, read_domain="comb")
    acc = memory.Memory(shape=32, depth=depth, init=[])
    m.submodules[f"{name}_accepts"] = acc
    write(waddr, wdata, we)
    index, held = Signal(range(depth + 1), name=f"{name}_index"), Signal(name=f"{name}_held")
    more = running & (index < count)
    m.d.comb += [stream.payload.eq(read(index)), stream.valid.eq(more & (held | go))]
    aw = acc.write_port()
    m.d.comb += [aw.addr.eq(index), aw.data.eq(cyc)]
    with m.If(start):
        m.d.sync += [index.eq(0), held.eq(0)]
    with m.Elif(stream.valid & stream.ready):
        m.d.comb += aw.en.eq(1)
        m.d.sync += [index.eq(index + 1), held.eq(0)]
    with m.Elif(stream.valid):
        m.d.sync += held.eq(1)
    ar = acc.read_port()
    m.d.comb += ar.addr.eq(rb_addr)
    return ar.data


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


async def write_words(port, prefix: str, words) -> None:
    """Write ``words`` to entries 0.. of the memory behind ``<prefix>_we/_waddr/_wdata``, one
    per clock edge; ``_we`` is low afterwards."""
    for k, w in enumerate(words):
        port.set(f"{prefix}_we", 1)
        port.set(f"{prefix}_waddr", k)
        port.set(f"{prefix}_wdata", w)
        await port.tick()
    port.set(f"{prefix}_we", 0)


async def read_entries(port, addr: str, names: tuple, count: int) -> list[tuple]:
    """Entries 0..count-1 of the capture read through ``addr`` -> ``names`` (read ports
    with their data the cycle after the address), one per clock edge."""
    out = []
    if count <= 0:
        return out
    port.set(addr, 0)
    await port.tick()
    for k in range(count):
        port.set(addr, min(k + 1, count - 1))
        out.append(await port.tick(*names))
    return out


def responder(m, name: str, req, resp, start, running, cyc, go_ready, go_valid,
              latency: int, queue: int = 32):
    """The Python bench's :class:`~tilecosim.sim.streams.Responder` in gateware, less the
    answer: ``req`` is taken while ``go_ready`` lets it, queued with its due cycle
    (``latency`` later), and ``resp.valid`` rises once the head is due in a cycle ``go_valid``
    lets it go, then holds until taken. Returns (the head request, the accept of a request,
    1 when a request arrives with ``queue`` waiting); the caller drives ``resp.payload``
    from the head."""
    shape = data.StructLayout({"req": req.payload.shape(), "due": 32})
    pend = memory.Memory(shape=shape, depth=queue, init=[])
    m.submodules[f"{name}_pending"] = pend
    pw, pr = pend.write_port(), pend.read_port(domain="comb")
    head, tail = Signal(range(queue)), Signal(range(queue))
    used, shown = Signal(range(queue + 1)), Signal()
    m.d.comb += req.ready.eq(running & go_ready)
    take_req = req.valid & req.ready
    m.d.comb += [pw.addr.eq(tail), pw.en.eq(take_req), pw.data.req.eq(req.payload),
                 pw.data.due.eq(cyc + latency), pr.addr.eq(head)]
    show = running & (used != 0) & (pr.data.due <= cyc) & (shown | go_valid)
    m.d.comb += resp.valid.eq(show)
    take_resp = show & resp.ready
    with m.If(take_req):
        m.d.sync += tail.eq(tail + 1)
    with m.If(take_resp):
        m.d.sync += head.eq(head + 1)
    m.d.sync += [shown.eq(show & ~resp.ready), used.eq(used + take_req - take_resp)]
    with m.If(start):
        m.d.sync += [head.eq(0), tail.eq(0), used.eq(0), shown.eq(0)]
    return pr.data.req, take_req, take_req & (used == queue) & ~take_resp


def write_log(m, name: str, entry, take, start, capacity: int, count, lb_addr, lanes: int = 1):
    """Log ``entry`` (a Value) in every cycle ``take`` is high, at index ``count`` (a register
    the log counts, cleared by ``start``), up to ``capacity`` entries. The log is ``lanes``
    memories side by side, entry i in memory i % lanes, so that one read returns ``lanes``
    entries: ``lb_addr`` = g gives entries g*lanes .. g*lanes+lanes-1 (the first in the low
    bits) the cycle after. Returns (that read, 1 when an entry arrives on a full log)."""
    width, rows = len(entry), -(-capacity // lanes)
    lane = count % lanes if lanes > 1 else 0
    reads = []
    room = count < capacity
    for k in range(lanes):
        write, read = wide_memory(m, f"{name}_lane{k}", width, rows)
        write(count // lanes if lanes > 1 else count, entry, take & room & (lane == k))
        reads.append(read(lb_addr))
    with m.If(start):
        m.d.sync += count.eq(0)
    with m.Elif(take & room):
        m.d.sync += count.eq(count + 1)
    return Cat(*reads), take & ~room


def capture(m, fields: dict, take, start, running, finished, count, depth: int, rb_addr) -> dict:
    """Capture ``fields`` (name -> a value) in every cycle ``take`` is high, entry n for the
    n-th take; ``finished`` rises and ``running`` falls with the ``count``-th (``start``
    clears ``finished``). Returns name -> the entry at ``rb_addr``, the cycle after."""
    taken = Signal(range(depth + 1))
    out = {}
    for name, value in fields.items():
        value = Value.cast(value)
        write, read = wide_memory(m, name, len(value), depth)
        write(taken, value, take)
        out[name] = read(rb_addr)
    with m.If(start):
        m.d.sync += [taken.eq(0), finished.eq(0)]
    with m.Elif(take):
        m.d.sync += taken.eq(taken + 1)
        with m.If(taken + 1 == count):
            m.d.sync += [finished.eq(1), running.eq(0)]
    return out


def completions(m, harness, done, running, cyc) -> None:
    """An engine's ``done`` stream (one :data:`~tilecosim.hdl.common.Completion` per
    operation, always taken): every fault code and cycle captured, read back on the
    harness's ``rb_fault``/``rb_done`` at ``rb_addr``; ``finished`` with the ``count``-th."""
    m.d.comb += done.ready.eq(1)
    got = capture(m, {"done_cycles": cyc, "faults": done.payload.fault}, running & done.valid,
                  harness.start, running, harness.finished, harness.count, harness.depth,
                  harness.rb_addr)
    m.d.comb += [harness.rb_done.eq(got["done_cycles"]), harness.rb_fault.eq(got["faults"])]


async def read_log(port, addr: str, name: str, count: int, lanes: int, width: int) -> list:
    """The first ``count`` entries (``width`` bits each) of a :func:`write_log` read through
    ``addr`` -> ``name``, ``lanes`` per clock edge."""
    mask = (1 << width) - 1
    out = []
    for (group,) in await read_entries(port, addr, (name,), -(-count // lanes)):
        out += [(int(group) >> (k * width)) & mask for k in range(lanes)]
    return out[:count]


async def run_batch(port, queue: str, payloads, stalls: dict, limit: int) -> bool:
    """One run of a harness: write ``payloads`` to the queue ``queue``, set ``count`` and
    each stall pattern (``stalls``: port name -> (seed state, threshold), on
    ``seed_<port>``/``threshold_<port>``), pulse ``start`` and wait for ``finished`` in one
    wait of at most ``limit`` cycles. Returns whether it finished."""
    await write_words(port, queue, payloads)
    port.set("count", len(payloads))
    for name, (seed, th) in stalls.items():
        port.set(f"seed_{name}", seed)
        port.set(f"threshold_{name}", th)
    port.set("start", 1)
    await port.tick()
    port.set("start", 0)
    return await port.until("finished", limit)
