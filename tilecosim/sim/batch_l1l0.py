"""The batch LoadDataWithTranspose harness: whole batches of L1 -> L0 calls inside the simulated
design, cycle-equal to the Python-driven bench
(:mod:`tilecosim.sim.benches.load_data_with_transpose`) under the same stall seed.

:class:`BatchL1L0` wraps an :class:`~tilecosim.hdl.l1l0.engine.L1L0Engine`:

* ``op``: the batch (a :class:`~tilecosim.sim.harness.BatchSource` loaded through the ``op``
  port, stall port 0), with the cycle every call was accepted.
* L1: 32-byte rows written before the runs through the ``l1`` port, behind a
  :class:`~tilecosim.sim.harness.Responder` (stall ports 1 and 2), W bytes a read from W/32
  read ports; a read that is not W bytes from a row inside ``l1_size`` sets ``bad_read`` and
  keeps its address.
* L0: ``wr`` ready as stall port 3 says; every W-byte write is logged with its cycle (a
  write that is not W-aligned inside ``l0_size`` sets ``bad_write``), eight read back per
  clock edge (the ``lb`` port).
* ``done``: ``ready`` as stall port 4 says; every completion's fault code and cycle
  captured, read back with the accept cycles through the ``rb`` port.
* a :class:`~tilecosim.sim.protocol.ProtocolMonitor` on ``rd``, ``wr`` and ``done`` (reads
  and writes are memory accesses; ``moves`` says which calls of the batch the model lets
  move data), its first violation read back on ``proto``.

The bench side replays the log onto the initial L0 image, so both harnesses give the same
:class:`~tilecosim.sim.benches.load_data_with_transpose.L1L0Result`. One build serves every
batch and every L1 image of up to ``l1_bytes`` bytes; one simulator start runs many
batches.
"""

from __future__ import annotations

import numpy as np
from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import FaultCode, check_width
from tilecosim.hdl.l1l0.engine import L1L0Engine, LdtOp
from tilecosim.sim.api import pack
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.runner import run_bench

from .api import memory_words
from .benches.load_data_with_transpose import L1L0Result, l1l0_limit, l1l0_moves, l1l0_plans
from .harness import (MemoryLoad, ProtocolReport, Readback, RunControl, WriteLog, batch_source,
                      completions, loaded_memory, memory_port, protocol_monitor, read_bytes,
                      read_entries, read_log, read_protocol, run_batch, stall_gens, stall_loads,
                      stream_of, write_words)
from .stall import seed_state, threshold

__all__ = ["BatchL1L0", "batch_l1l0_setup", "run_l1l0_batches"]

WORD = 32                          # bytes per L1 row
QUEUE = 32                         # reads pending at most (the engine keeps <= depth)
PORTS = ("op", "rd", "rd_data", "wr", "done")      # stall ports 0..4 of the Python bench
MONITORED = ("rd", "wr", "done")                   # the streams the engine drives
LANES = 8                          # logged writes read back per clock edge
MASK32 = (1 << 32) - 1


def entry_bits(width: int) -> int:
    """A logged write: address, W bytes of data, cycle."""
    return 32 + 8 * width + 32


class BatchL1L0(wiring.Component):
    """The L1 -> L0 engine with its batch, L1, L0 write log and completion capture inside
    (module doc).

    Parameters: ``l1_bytes`` the largest L1 image, ``depth`` the most calls and ``beats``
    the most L0 writes of one batch, ``latency`` (>= 1) of the L1 reads, and the engine's
    ``width`` and ``transpose``. Latency and throughput are the engine's under the patterns; the harness
    adds no cycle of its own.
    """

    def __init__(self, l1_bytes: int = 1 << 15, depth: int = 256, beats: int = 16384,
                 latency: int = 2, transpose: str = "square", width: int = 32, engine=None):
        check_width(width)
        if not 1 <= latency <= 256:
            raise ValueError(f"latency={latency}: must be in 1..256")
        for name, v, hi in (("l1_bytes", l1_bytes, 1 << 24), ("depth", depth, 1 << 16),
                            ("beats", beats, 1 << 20)):
            if not 1 <= v <= hi:
                raise ValueError(f"{name}={v}: must be in 1..{hi}")
        self.latency, self.transpose, self.depth, self.beats = latency, transpose, depth, beats
        self.width = width
        #: makes the engine inside (default the built-in one; a design of the contract)
        self.engine = engine or (lambda: L1L0Engine(width=width, transpose=transpose))
        self.l1_words = -(-l1_bytes // WORD)
        super().__init__({
            "op": In(MemoryLoad(LdtOp, depth)),
            "l1": In(MemoryLoad(8 * WORD, self.l1_words)),
            "count": In(range(depth + 1)),
            "l1_size": In(32), "l0_size": In(32),
            "stall": In(stall_loads(PORTS)),
            "start": In(1), "finished": Out(1),
            "nbeats": Out(range(beats + 1)), "reads": Out(32), "overflow": Out(1),
            "bad_read": Out(1), "bad_write": Out(1), "bad_addr": Out(32),
            "rb": In(Readback(depth, {"accept": 32, "done": 32, "fault": FaultCode})),
            "lb": In(Readback(-(-beats // LANES), {"entries": LANES * entry_bits(width)})),
            "moves": In(depth), "proto": In(ProtocolReport()),
        })

    @property
    def coverage_scope(self):
        """For ``regress --coverage``: the engine's instance, and its top name."""
        return ("engine", "l1l0_engine" if self.width == 32 else f"l1l0_engine_w{self.width}")

    def elaborate(self, platform):
        m = Module()
        m.submodules.engine = eng = self.engine()
        m.d.comb += [eng.l1_size.eq(self.l1_size), eng.l0_size.eq(self.l0_size)]
        m.submodules.control = ctl = RunControl()
        m.d.comb += ctl.start.eq(self.start)
        with m.If(self.start):
            m.d.sync += [self.overflow.eq(0), self.bad_read.eq(0), self.bad_write.eq(0),
                         self.reads.eq(0)]
        go = stall_gens(m, self.stall, PORTS, self.start)
        src = batch_source(m, self, self.op, eng.op, ctl, go["op"])
        self._l1(m, eng, ctl, go)
        self._l0(m, eng, ctl, go)
        cap = completions(m, eng.done, ctl, self, go["done"])
        protocol_monitor(m, self, ctl, src, cap, {
            "rd": stream_of(eng.rd, access=True), "wr": stream_of(eng.wr, access=True),
            "done": stream_of(eng.done)})
        return m

    def _bad(self, m, flag, addr):
        with m.If(~self.bad_read & ~self.bad_write):
            m.d.sync += [flag.eq(1), self.bad_addr.eq(addr)]

    def _l1(self, m, eng, ctl, go):
        """The Responder, with L1 behind its head."""
        l1 = loaded_memory(m, "l1", self.l1, 8 * WORD, self.l1_words)
        rsp = memory_port(m, self, eng.rd, eng.rd_data, ctl, go["rd"], go["rd_data"], QUEUE)
        head, take, full = rsp.head, rsp.take, rsp.overflow
        addr = eng.rd.payload.addr
        with m.If(take):
            m.d.sync += self.reads.eq(self.reads + 1)
            with m.If((addr[:5] != 0) | (addr + self.width > self.l1_size)):
                self._bad(m, self.bad_read, addr)
        with m.If(full):
            m.d.sync += self.overflow.eq(1)
        m.d.comb += rsp.answer.eq(read_bytes(m, l1, head.addr, self.width, aligned=True))

    def _l0(self, m, eng, ctl, go):
        """L0: ``ready`` as the pattern says; every line logged with its cycle."""
        m.d.comb += eng.wr.ready.eq(ctl.running & go["wr"])
        take = eng.wr.valid & eng.wr.ready
        wr = eng.wr.payload
        low = wr.addr[:(self.width.bit_length() - 1)]
        with m.If(take & ((low != 0) | (wr.addr + self.width > self.l0_size))):
            self._bad(m, self.bad_write, wr.addr)
        m.submodules.log = log = WriteLog(entry_bits(self.width), self.beats, LANES)
        m.d.comb += [log.entry.eq(Cat(wr.addr, wr.data, ctl.cycle)), log.take.eq(take),
                     log.start.eq(self.start), log.lb_addr.eq(self.lb.addr),
                     self.lb.entries.eq(log.lb_entries), self.nbeats.eq(log.count)]
        with m.If(log.full):
            m.d.sync += self.overflow.eq(1)


def batch_l1l0_setup(l1: np.ndarray, l1_words: int, width: int, batches: list):
    """(processes, results) of the batch harness for :func:`tilecosim.sim.runner.run_bench`:
    write L1, then for each batch ``(calls, l0_init, payloads, seeds, thresholds, limit,
    moves)``
    write its calls, start, wait for ``finished`` in one wait, read back the completions and
    the L0 log and replay the log onto ``l0_init``; one
    :class:`~tilecosim.sim.benches.load_data_with_transpose.L1L0Result` per batch."""
    results = [L1L0Result(l0=b[1].copy()) for b in batches]

    async def run(port):
        await write_words(port, "l1", memory_words(l1, l1_words, WORD))
        port.set("l1_size", l1.size)
        for (calls, l0_init, payloads, seeds, thresholds, limit, moves), res in zip(batches,
                                                                                    results):
            port.set("l0_size", l0_init.size)
            res.timed_out = not await run_batch(port, "op", payloads,
                                                dict(zip(PORTS, zip(seeds, thresholds))), limit,
                                                moves)
            res.error = await read_protocol(port, MONITORED)
            nbeats, reads, overflow, bad_read, bad_write, bad_addr = await port.tick(
                "nbeats", "reads", "overflow", "bad_read", "bad_write", "bad_addr")
            if res.error:
                continue
            if overflow:
                res.error = ("the batch overflowed the harness's L0 log: run fewer calls per "
                             "batch")
            elif bad_read:
                res.error = f"the engine read L1 at {bad_addr:#x}, outside the rows of L1"
            elif bad_write:
                res.error = f"the engine wrote L0 at {bad_addr:#x}, outside L0"
            if res.error:
                continue
            res.reads = reads
            for acc, done, fault in await read_entries(
                    port, "rb", ("accept", "done", "fault"), len(payloads)):
                res.accept.append(acc)
                res.done.append(done)
                res.faults.append(fault)
            W = width
            for entry in await read_log(port, "lb", "entries", nbeats, LANES, entry_bits(W)):
                addr, cycle = entry & MASK32, entry >> 32 + 8 * W
                line = entry >> 32 & ((1 << 8 * W) - 1)
                res.l0[addr:addr + W] = np.frombuffer(line.to_bytes(W, "little"), np.uint8)
                res.last_write = cycle
                if res.first_write is None:
                    res.first_write = cycle
    return [run], results


def run_l1l0_batches(batches, l1: np.ndarray, backend: str = "amaranth", latency: int = 2,
                     transpose: str = "square", depth: int = 256, beats: int = 16384,
                     l1_bytes: int | None = None, waves: str | None = None,
                     vcd: str | None = None, width: int = 32,
                     design: Design = BUILTIN) -> list:
    """Run every batch ``(calls, l0_init, seed, stall)`` (the Python bench's arguments)
    through the harness (engine of W = ``width``) on ``backend``, in one simulator start. Returns one
    :class:`~tilecosim.sim.benches.load_data_with_transpose.L1L0Result` per batch, equal to
    what :func:`~tilecosim.sim.benches.load_data_with_transpose.simulate_l1l0` returns for
    it."""
    l1 = np.asarray(l1, dtype=np.uint8)
    l1_bytes = l1_bytes or max(1 << 15, l1.size)
    if l1.size > l1_bytes:
        raise ValueError(f"a {l1.size}-byte L1 image: the harness holds {l1_bytes}")
    specs = []
    for calls, l0_init, seed, stall in batches:
        calls = list(calls)
        if not 1 <= len(calls) <= depth:
            raise ValueError(f"{len(calls)} calls: a batch holds 1..{depth}")
        l0_init = np.asarray(l0_init, dtype=np.uint8)
        plans = l1l0_plans(calls, l1, l0_init.size)
        specs.append((calls, l0_init, [pack(LdtOp, c.payload()) for c in calls],
                      tuple(seed_state(seed, k) for k in range(len(PORTS))),
                      (threshold(1 - stall),) * len(PORTS), l1l0_limit(plans),
                      l1l0_moves(plans)))
    l1_words = -(-l1_bytes // WORD)                        # BatchL1L0.l1_words
    engine = lambda: design.make(lambda: L1L0Engine(width=width, transpose=transpose))  # noqa: E731
    return run_bench(backend,
                     lambda: BatchL1L0(l1_bytes, depth, beats, latency, transpose, width,
                                       engine),
                     "batch_l1l0", batch_l1l0_setup, (l1, l1_words, width, specs), vcd=vcd,
                     waves=waves, key=repr((l1_bytes, depth, beats, latency, transpose, width)),
                     design=design)
