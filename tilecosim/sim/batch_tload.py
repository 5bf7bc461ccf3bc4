"""The batch TLOAD harness: whole batches of TLOADs inside the simulated design, so a simulator
runs them without calling Python every cycle, cycle-equal to the Python-driven bench
(:mod:`tilecosim.sim.benches.tload`) under the same stall seed.

:class:`BatchTLoad` wraps a :class:`~tilecosim.hdl.tload.engine.TLoadEngine`:

* ``instr``: the batch (a :class:`~tilecosim.sim.harness.BatchSource` loaded through the
  ``instr`` port), handed over exactly as the Python bench's
  :class:`~tilecosim.sim.streams.Source` does (stall port 0), with the cycle every
  instruction was accepted.
* global memory: 32-byte words written before the runs through the ``gm`` port, and a
  :class:`~tilecosim.sim.harness.Responder`, the Python bench's one in gateware: a request is
  taken when stall port 1 lets it, queued with its due cycle (``latency`` later), and
  presented once due in a cycle stall port 2 lets it go, then held until taken. The answer
  is the ``len`` bytes from ``addr`` and 0xA5 after them, as the Python bench's. A request
  outside ``mem_size`` (or of a length outside 1..32) sets ``bad_req`` and keeps the first
  such request in ``bad_addr``/``bad_len``.
* ``write``: ``ready`` as stall port 3 says; every write beat logged with its cycle.
* ``done``: ``ready`` as stall port 4 says; every completion's fault code and cycle
  captured.
* a :class:`~tilecosim.sim.protocol.ProtocolMonitor` on ``req``, ``write`` and ``done``
  (requests and writes are memory accesses; ``moves`` says which instructions of the batch
  the model lets move data), its first violation read back on ``proto``.

``start`` (one cycle) loads the four patterns (the ``stall`` port) and begins a run;
``finished`` rises with the completion of the ``count``-th instruction. The ``rb`` port
reads an instruction's accept cycle, completion cycle and fault code back, the ``lb`` port
eight logged write beats with their cycles, the cycle after. The bench side replays the
logged beats through the Python bench's
own tile collector (:class:`~tilecosim.sim.benches.tload.TileCollector`), so both harnesses
give the same :class:`~tilecosim.sim.benches.tload.SimResult` and the same comparison.

One build serves every batch and every memory image of up to ``mem_bytes`` bytes; one
simulator start runs many batches.
"""

from __future__ import annotations

import numpy as np
from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import FaultCode
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.tload.types import TileWrite, TLoadInstr
from tilecosim.sim.api import pack
from tilecosim.sim.runner import run_bench

from .api import memory_words
from .benches.tload import SimResult, TileCollector, budget, finish, instr_payload
from .harness import (MemoryLoad, ProtocolReport, Readback, RunControl, WriteLog, batch_source,
                      completions, loaded_memory, memory_port, protocol_monitor, read_bytes,
                      read_entries, read_log, read_protocol, run_batch, stall_gens, stall_loads,
                      stream_of, write_words)
from .stall import seed_state, threshold

__all__ = ["BatchTLoad", "batch_tload_setup", "run_tload_batches", "run_batch_tload"]

WORD = 32                          # bytes per global-memory word of the harness
QUEUE = 32                         # responses pending at most (the engine keeps <= depth)
LANES = 8                          # logged beats read back per clock edge
JUNK_BYTE = 0xA5                   # the Python bench's bytes past a response's length
PORTS = ("instr", "req", "resp", "write", "done")    # stall ports 0..4 of the Python bench
MONITORED = ("req", "write", "done")                # the streams the engine drives

class BatchTLoad(wiring.Component):
    """The TLOAD engine with its batch, global memory, tile-write log and completion capture
    inside (module doc).

    Parameters: ``mem_bytes`` the largest memory image, ``depth`` the most instructions
    and ``beats`` the most write beats of one batch, ``latency`` (>= 1) of the memory
    responses, and the engine's ``width``, ``profile``, ``lcfr``, ``transpose`` and
    ``engine_depth``. Latency and throughput are the engine's under the patterns; the
    harness adds no cycle of its own.
    """

    @property
    def coverage_scope(self) -> tuple[str, str]:
        """For ``regress --coverage``: the engine's instance, and its top name."""
        return ("engine", "tload_engine" if self.width == 32 else f"tload_engine_w{self.width}")

    def __init__(self, mem_bytes: int = 1 << 16, depth: int = 256, beats: int = 16384,
                 latency: int = 2, width: int = 32, profile: str = "finite",
                 lcfr: tuple[int, int] = (256, 256 * 1024), transpose: str = "square",
                 engine_depth: int = 16, engine=None):
        if not 1 <= latency <= 256:
            raise ValueError(f"latency={latency}: must be in 1..256")
        for name, v, hi in (("mem_bytes", mem_bytes, 1 << 26), ("depth", depth, 1 << 16),
                            ("beats", beats, 1 << 20)):
            if not 1 <= v <= hi:
                raise ValueError(f"{name}={v}: must be in 1..{hi}")
        self.latency, self.width, self.profile, self.lcfr = latency, width, profile, lcfr
        self.transpose, self.engine_depth = transpose, engine_depth
        #: makes the engine inside (default the built-in one; a design of the contract)
        self.engine = engine or (lambda: TLoadEngine(width=width, profile=profile, lcfr=lcfr,
                                                     depth=engine_depth, transpose=transpose))
        self.depth, self.beats = depth, beats
        self.gm_words = -(-mem_bytes // WORD) + 4       # +4: the words past a W-byte answer
        self.write_layout = TileWrite(width)
        self.entry_bits = self.write_layout.size + 32             # a beat and its cycle
        super().__init__({
            "instr": In(MemoryLoad(TLoadInstr, depth)),
            "gm": In(MemoryLoad(8 * WORD, self.gm_words)),
            "count": In(range(depth + 1)),
            "mem_size": In(64),
            "stall": In(stall_loads(PORTS)),
            "start": In(1), "finished": Out(1),
            "nbeats": Out(range(beats + 1)), "requests": Out(32), "overflow": Out(1),
            "bad_req": Out(1), "bad_addr": Out(64), "bad_len": Out(8),
            "rb": In(Readback(depth, {"accept": 32, "done": 32, "fault": FaultCode})),
            "lb": In(Readback(-(-beats // LANES), {"entries": LANES * self.entry_bits})),
            "moves": In(depth), "proto": In(ProtocolReport()),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.engine = eng = self.engine()
        m.d.comb += eng.mem_size.eq(self.mem_size)
        m.submodules.control = ctl = RunControl()
        m.d.comb += ctl.start.eq(self.start)
        with m.If(self.start):
            m.d.sync += [self.overflow.eq(0), self.bad_req.eq(0), self.requests.eq(0)]
        go = stall_gens(m, self.stall, PORTS, self.start)
        src = batch_source(m, self, self.instr, eng.instr, ctl, go["instr"])
        self._memory(m, eng, ctl, go)
        self._writes(m, eng, ctl, go)
        cap = completions(m, eng.done, ctl, self, go["done"])
        protocol_monitor(m, self, ctl, src, cap, {
            "req": stream_of(eng.req, access=True), "write": stream_of(eng.write, access=True),
            "done": stream_of(eng.done)})
        return m

    def _memory(self, m, eng, ctl, go):
        """The Responder, with the global memory behind its head."""
        gm = loaded_memory(m, "gm", self.gm, 8 * WORD, self.gm_words)
        rsp = memory_port(m, self, eng.req, eng.resp, ctl, go["req"], go["resp"], QUEUE)
        head, take, full = rsp.head, rsp.take, rsp.overflow
        req = eng.req.payload
        end = Signal(65)
        m.d.comb += end.eq(req.addr + req.len)
        bad = (req.len == 0) | (req.len > self.width) | (end > self.mem_size)
        with m.If(take):
            m.d.sync += self.requests.eq(self.requests + 1)
            with m.If(bad & ~self.bad_req):
                m.d.sync += [self.bad_req.eq(1), self.bad_addr.eq(req.addr),
                             self.bad_len.eq(req.len)]
        with m.If(full):
            m.d.sync += self.overflow.eq(1)

        # the answer: W bytes from the head's address, 0xA5 past its length
        shifted = read_bytes(m, gm, head.addr, self.width)
        m.d.comb += rsp.answer.eq(Cat(
            *(Mux(k < head.len, shifted[8 * k:8 * k + 8], JUNK_BYTE) for k in range(self.width))))

    def _writes(self, m, eng, ctl, go):
        """The tile side: ``ready`` as the pattern says; every beat logged with its cycle."""
        m.d.comb += eng.write.ready.eq(ctl.running & go["write"])
        m.submodules.log = log = WriteLog(self.entry_bits, self.beats, LANES)
        m.d.comb += [log.entry.eq(Cat(eng.write.payload.as_value(), ctl.cycle)),
                     log.take.eq(eng.write.valid & eng.write.ready), log.start.eq(self.start),
                     log.lb_addr.eq(self.lb.addr), self.lb.entries.eq(log.lb_entries),
                     self.nbeats.eq(log.count)]
        with m.If(log.full):
            m.d.sync += self.overflow.eq(1)


def batch_tload_setup(mem: np.ndarray, gm_words: int, width: int, batches: list):
    """(processes, results) of the batch harness for :func:`tilecosim.sim.runner.run_bench`:
    write global memory, then for each batch ``(plist, payloads, seeds, thresholds, limit)``
    write its instructions, start, wait for ``finished`` in one wait, read back the
    completions and the write log, and replay the log through the Python bench's tile
    collector; one :class:`~tilecosim.sim.benches.tload.SimResult` per batch."""
    results = [SimResult() for _ in batches]

    async def run(port):
        await write_words(port, "gm", memory_words(mem, gm_words, WORD))
        port.set("mem_size", min(mem.size, (1 << 64) - 1))
        for (plist, cfg, payloads, seeds, thresholds), res in zip(batches, results):
            limit = budget(plist, mem, cfg, res)
            res.timed_out = not await run_batch(port, "instr", payloads,
                                                dict(zip(PORTS, zip(seeds, thresholds))), limit,
                                                [b > 0 for b in res.beats])
            res.error = await read_protocol(port, MONITORED)
            nbeats, requests, overflow, bad, bad_addr, bad_len = await port.tick(
                "nbeats", "requests", "overflow", "bad_req", "bad_addr", "bad_len")
            if res.error:
                continue
            if overflow:
                res.error = ("the batch overflowed the harness's write log: run fewer "
                             "instructions per batch")
            elif bad:
                res.error = (f"engine requested {bad_len} B at {bad_addr:#x}, outside the "
                             f"{mem.size}-byte memory")
            if res.error:
                continue
            res.requests = requests
            got = await read_entries(port, "rb", ("accept", "done", "fault"), len(payloads))
            collector = TileCollector(plist, res, width)
            size = TileWrite(width).size
            for entry in await read_log(port, "lb", "entries", nbeats, LANES, size + 32):
                collector.record(entry & ((1 << size) - 1), entry >> size)
            for acc, done, fault in got:
                res.accept_cycles.append(acc)
                res.done_cycles.append(done)
                res.faults.append(fault)
            finish(res)
    return [run], results


def run_tload_batches(batches, mem: np.ndarray, backend: str = "amaranth",
                      depth: int = 256, beats: int = 16384, mem_bytes: int | None = None,
                      waves: str | None = None, vcd: str | None = None) -> list:
    """Run every batch ``(plist, cfg)`` (``cfg`` a
    :class:`~tilecosim.sim.benches.tload.SimConfig`: its seed and probabilities are the stall
    patterns; width, latency, profile, lcfr, transpose and depth must be equal across the
    batches) through the harness on ``backend``, in one simulator start. Returns one
    :class:`~tilecosim.sim.benches.tload.SimResult` per batch, equal to what
    :func:`~tilecosim.sim.benches.tload.simulate_tload` returns for it."""
    mem = np.asarray(mem, dtype=np.uint8)
    mem_bytes = mem_bytes or max(1 << 16, mem.size)
    if mem.size > mem_bytes:
        raise ValueError(f"a {mem.size}-byte memory image: the harness holds {mem_bytes}")
    if not batches:
        return []
    cfg0 = batches[0][1]
    shape = (cfg0.width, cfg0.latency, cfg0.profile, tuple(cfg0.lcfr), cfg0.transpose,
             cfg0.depth)
    specs = []
    for plist, cfg in batches:
        plist = list(plist)
        if (cfg.width, cfg.latency, cfg.profile, tuple(cfg.lcfr), cfg.transpose,
                cfg.depth) != shape or cfg.design != cfg0.design:
            raise ValueError("every batch of one harness run needs the same width, latency, "
                             "profile, lcfr, transpose and depth")
        if not 1 <= len(plist) <= depth:
            raise ValueError(f"{len(plist)} instructions: a batch holds 1..{depth}")
        probs = (cfg.p_instr_valid, cfg.p_req_ready, cfg.p_resp_valid, cfg.p_write_ready,
                 cfg.p_write_ready)
        specs.append((plist, cfg, [pack(TLoadInstr, instr_payload(p)) for p in plist],
                      tuple(seed_state(cfg.seed, k) for k in range(len(PORTS))),
                      tuple(threshold(p) for p in probs)))
    gm_words = -(-mem_bytes // WORD) + 4                 # BatchTLoad.gm_words
    width, latency, profile, lcfr, transpose, edepth = shape

    design = cfg0.design

    def make():
        engine = lambda: design.make(           # noqa: E731
            lambda: TLoadEngine(width=width, profile=profile, lcfr=lcfr, depth=edepth,
                                transpose=transpose))
        return BatchTLoad(mem_bytes, depth, beats, latency, width, profile, lcfr, transpose,
                          edepth, engine)
    return run_bench(backend, make, "batch_tload", batch_tload_setup,
                     (mem, gm_words, width, specs), vcd=vcd, waves=waves,
                     key=repr((mem_bytes, depth, beats) + shape), design=design)


def run_batch_tload(plist, mem: np.ndarray, cfg, **kw):
    """One batch (:func:`run_tload_batches`); what the harness found wrong (``error``)
    raises AssertionError, as the Python-driven bench does."""
    res = run_tload_batches([(plist, cfg)], mem, cfg.backend, **kw)[0]
    if res.error:
        raise AssertionError(res.error)
    return res
