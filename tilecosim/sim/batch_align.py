"""The batch LoadAlign and StoreAlign harnesses: whole batches of ops inside the simulated
design, so a simulator runs them without calling Python every cycle.

:class:`BatchLoadAlign` wraps a :class:`~tilecosim.hdl.align.load.LoadAlignUnit`:

* ``op``: the batch (a :class:`~tilecosim.sim.harness.BatchSource` loaded through the ``op``
  port), presented on the unit's ``op`` stream exactly as the Python bench's
  :class:`~tilecosim.sim.streams.Source` does, with the cycle every op was accepted.
* ``ub``: UB, written before the runs through the ``ub`` port (32-byte words). A read
  at any byte address returns the 2*VL bytes from there the cycle after (zeros past the
  image), as the Python bench's UB model does.
* ``res``: ``ready`` as the second stall pattern says, every result captured with its cycle.
* a :class:`~tilecosim.sim.protocol.ProtocolMonitor` on ``res`` (and on StoreAlign's UB
  writes, memory accesses that ``moves`` allows only to ops the model lets store), its first
  violation read back on ``proto``. LoadAlign's UB reads are not checked: the unit reads UB
  in the cycle it takes an op, before its checks are known, and a read has no effect.

``start`` (one cycle) loads the two patterns from the ``stall`` port (``op`` and ``res``) and
begins a run (:class:`~tilecosim.sim.harness.RunControl`); ``finished`` rises when ``count``
results are in. The ``rb`` port reads one entry back the cycle after. One build serves every batch and every UB image of one size; one
simulator start runs many batches.

:class:`BatchStoreAlign` does the same around a
:class:`~tilecosim.hdl.align.store.StoreAlignUnit`: the ops (with their registers and mask)
queued, every UB write (address, 2*VL bytes, byte enables) logged with its cycle, and every
result captured; the bench replays the writes onto the initial UB image, as the Python
bench's UB port applies them.
"""

import numpy as np
from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.align.common import AlignOp
from tilecosim.hdl.align.load import LoadAlignResult, LoadAlignUnit
from tilecosim.hdl.align.store import StoreAlignOp, StoreAlignResult, StoreAlignUnit
from tilecosim.sim.api import pack
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.runner import run_bench

from .api import memory_words
from .benches.align import AlignResult
from .benches.align import store_moves
from .harness import (MemoryLoad, ProtocolReport, Readback, RunControl, WriteLog, batch_source,
                      capture_run, loaded_memory, protocol_monitor, read_entries, read_protocol,
                      run_batch, stall_gens, stall_loads, stream_of, write_words)
from .stall import seed_state, threshold

__all__ = ["BatchLoadAlign", "batch_load_align_setup", "run_batch_load_align",
           "run_load_align_batches", "BatchStoreAlign", "batch_store_align_setup",
           "run_store_align_batches"]

WORD = 32                      # bytes per UB word of the harness
PORTS = ("op", "res")          # stall ports 0 and 1 of the Python bench
LOAD_MONITORED = ("res",)      # the streams each unit drives
STORE_MONITORED = ("res", "ub_wen")


class BatchLoadAlign(wiring.Component):
    """The LoadAlign unit with its batch, UB and result capture inside (module doc).

    Parameters: ``ub_size`` bytes of UB (the unit's ``ub_size``), ``vl``, and ``depth``
    the most ops in one batch. Latency and throughput are the unit's; the harness adds no
    cycle of its own.
    """

    #: for ``regress --coverage``: the unit's instance, and its top name
    coverage_scope = ("unit", "load_align_unit")

    def __init__(self, ub_size: int, vl: int = 256, depth: int = 1024, engine=None):
        if not 1 <= depth <= 1 << 16:
            raise ValueError(f"depth={depth}: must be in 1..65536")
        if not 1 <= ub_size <= 1 << 24:
            raise ValueError(f"ub_size={ub_size}: must be in 1..{1 << 24}")
        self.ub_size, self.vl, self.depth = ub_size, vl, depth
        self.engine = engine or (lambda: LoadAlignUnit(vl=vl))
        self.span = 2 * vl // WORD + 1                 # words one unaligned read touches
        self.ub_words = -(-ub_size // WORD) + self.span
        self.res_layout = LoadAlignResult(vl)
        super().__init__({
            "op": In(MemoryLoad(AlignOp, depth)),
            "ub": In(MemoryLoad(8 * WORD, self.ub_words)),
            "count": In(range(depth + 1)),
            "stall": In(stall_loads(PORTS)),
            "start": In(1), "finished": Out(1),
            "rb": In(Readback(depth, {"result": self.res_layout, "accept": 32, "out": 32})),
            "moves": In(depth), "proto": In(ProtocolReport()),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.engine()
        m.d.comb += unit.ub_size.eq(self.ub_size)
        m.submodules.control = ctl = RunControl()
        m.d.comb += ctl.start.eq(self.start)
        go = stall_gens(m, self.stall, PORTS, self.start)
        src = batch_source(m, self, self.op, unit.op, ctl, go["op"])
        self._ub(m, unit)
        cap = _results(self, m, unit, ctl, go["res"])
        protocol_monitor(m, self, ctl, src, cap, {"res": stream_of(unit.res)}, "res")
        return m

    def _ub(self, m, unit):
        ub = loaded_memory(m, "ub_memory", self.ub, 8 * WORD, self.ub_words)
        word, shift = unit.ub_addr[5:], Signal(5)
        inside = Signal(self.span)
        parts = []
        for k in range(self.span):
            port = ub.read_port()
            m.d.comb += [port.addr.eq(word + k), port.en.eq(unit.ub_en)]
            with m.If(unit.ub_en):
                m.d.sync += inside[k].eq(word + k < self.ub_words)
            parts.append(Mux(inside[k], port.data, 0))
        with m.If(unit.ub_en):
            m.d.sync += shift.eq(unit.ub_addr[:5])
        window = Signal(8 * WORD * self.span)
        m.d.comb += window.eq(Cat(*parts))
        with m.Switch(shift):                     # a case per byte offset: shallow logic
            for k in range(WORD):
                with m.Case(k):
                    m.d.comb += unit.ub_data.eq(window[8 * k:8 * k + 16 * self.vl])


def _results(harness, m, unit, ctl, go):
    """Both align harnesses: ``res`` ready as the second stall pattern says, every result
    and its cycle captured, ``finished`` with the last."""
    m.d.comb += unit.res.ready.eq(ctl.running & go)
    return capture_run(m, "results", harness, ctl, unit.res.valid & unit.res.ready,
                       {"out": ctl.cycle, "result": unit.res.payload})


def _stalls(seeds, thresholds) -> dict:
    """The two stall ports of both align harnesses: the op source and the result sink."""
    return dict(zip(PORTS, zip(seeds, thresholds)))


def batch_load_align_setup(ub: np.ndarray, ub_words: int, vl: int, batches: list):
    """(processes, results) of the batch harness for :func:`tilecosim.sim.runner.run_bench`:
    write UB, then for each batch ``(payloads, seeds, thresholds, limit)`` write its ops,
    start, wait for ``finished`` in one wait and read everything back; one
    :class:`~tilecosim.sim.benches.align.AlignResult` per batch."""
    results = [AlignResult() for _ in batches]
    layout = LoadAlignResult(vl)

    async def run(port):
        await write_words(port, "ub", memory_words(ub, ub_words, WORD))
        for (payloads, seeds, thresholds, limit), res in zip(batches, results):
            finished = await run_batch(port, "op", payloads, _stalls(seeds, thresholds), limit)
            res.error = await read_protocol(port, LOAD_MONITORED)
            if not finished:
                res.timed_out = True
            if res.error or not finished:
                continue
            got = await read_entries(port, "rb", ("result", "accept", "out"), len(payloads))
            for bits, acc, out in got:
                pl = layout.from_bits(int(bits))
                f = pl.fault
                res.results.append((int(pl.dst0).to_bytes(vl, "little"),
                                    int(pl.dst1).to_bytes(vl, "little"), int(pl.next_addr),
                                    int(getattr(f, "value", f))))
                res.accept.append(int(acc))
                res.out.append(int(out))
    return [run], results


def run_load_align_batches(batches, ub: np.ndarray, vl: int = 256, backend: str = "amaranth",
                           depth: int = 1024, waves: str | None = None,
                           vcd: str | None = None, design: Design = BUILTIN) -> list:
    """Run every batch ``(cases, seed, p_op, p_ready)`` (each of at most ``depth`` ops)
    through the harness, in one simulator start; one
    :class:`~tilecosim.sim.benches.align.AlignResult` per batch, like the Python-driven
    bench's, with the same cycles for the same seed
    (:func:`~tilecosim.sim.benches.align.compare_load_align` checks it against the model)."""
    ub = np.asarray(ub, dtype=np.uint8)
    specs = []
    for cases, seed, p_op, p_ready in batches:
        cases = list(cases)
        if not 1 <= len(cases) <= depth:
            raise ValueError(f"{len(cases)} ops: a batch holds 1..{depth}")
        specs.append(([pack(AlignOp, c.payload()) for c in cases],
                      (seed_state(seed, 0), seed_state(seed, 1)),   # the Python bench's ports
                      (threshold(p_op), threshold(p_ready)), 10 * len(cases) + 100))
    ub_words = -(-ub.size // WORD) + 2 * vl // WORD + 1           # BatchLoadAlign.ub_words
    engine = lambda: design.make(lambda: LoadAlignUnit(vl=vl))     # noqa: E731
    return run_bench(backend, lambda: BatchLoadAlign(ub.size, vl, depth, engine),
                     "batch_load_align", batch_load_align_setup, (ub, ub_words, vl, specs),
                     vcd=vcd, waves=waves, key=repr((ub.size, vl, depth)), design=design)


def run_batch_load_align(cases, ub: np.ndarray, vl: int = 256, seed: int = 0,
                         p_op: float = 1.0, p_ready: float = 1.0, backend: str = "amaranth",
                         depth: int = 1024, waves: str | None = None, vcd: str | None = None):
    """One batch (:func:`run_load_align_batches`)."""
    return run_load_align_batches([(cases, seed, p_op, p_ready)], ub, vl, backend, depth,
                                  waves, vcd)[0]


class BatchStoreAlign(wiring.Component):
    """The StoreAlign unit with its batch, a log of its UB writes and its result capture
    inside (module doc).

    Parameters: ``ub_size`` bytes of UB (the unit's), ``vl`` and ``depth`` the most ops in
    one batch (each writes UB at most once: the log holds ``depth`` writes). Latency and
    throughput are the unit's; the harness adds no cycle of its own.
    """

    #: for ``regress --coverage``: the unit's instance, and its top name
    coverage_scope = ("unit", "store_align_unit")

    def __init__(self, ub_size: int, vl: int = 256, depth: int = 1024, engine=None):
        if not 1 <= depth <= 1 << 16:
            raise ValueError(f"depth={depth}: must be in 1..65536")
        self.ub_size, self.vl, self.depth = ub_size, vl, depth
        self.engine = engine or (lambda: StoreAlignUnit(vl=vl))
        self.op_layout = StoreAlignOp(vl)
        super().__init__({
            "op": In(MemoryLoad(self.op_layout, depth)),
            "count": In(range(depth + 1)),
            "stall": In(stall_loads(PORTS)),
            "start": In(1), "finished": Out(1), "nwrites": Out(range(depth + 1)),
            "overflow": Out(1),
            "rb": In(Readback(depth, {"result": StoreAlignResult, "accept": 32, "out": 32})),
            "lb": In(Readback(depth, {"waddr": 32, "wdata": 16 * vl, "wbe": 2 * vl})),
            "moves": In(depth), "proto": In(ProtocolReport()),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.engine()
        m.d.comb += unit.ub_size.eq(self.ub_size)
        m.submodules.control = ctl = RunControl()
        m.d.comb += ctl.start.eq(self.start)
        with m.If(self.start):
            m.d.sync += self.overflow.eq(0)
        go = stall_gens(m, self.stall, PORTS, self.start)
        src = batch_source(m, self, self.op, unit.op, ctl, go["op"])
        lb = self.lb
        m.submodules.writes = log = WriteLog(len(lb.waddr) + len(lb.wdata) + len(lb.wbe),
                                             self.depth)
        m.d.comb += [log.entry.eq(Cat(unit.ub_waddr, unit.ub_wdata, unit.ub_wbe)),
                     log.take.eq(ctl.running & unit.ub_wen), log.start.eq(self.start),
                     log.lb_addr.eq(lb.addr), Cat(lb.waddr, lb.wdata, lb.wbe).eq(log.lb_entries),
                     self.nwrites.eq(log.count)]
        with m.If(log.full):
            m.d.sync += self.overflow.eq(1)
        cap = _results(self, m, unit, ctl, go["res"])
        protocol_monitor(m, self, ctl, src, cap, {
            "res": stream_of(unit.res),
            "ub_wen": (unit.ub_wen, 1, Cat(unit.ub_waddr, unit.ub_wdata, unit.ub_wbe), 1)},
            "res")
        return m


def batch_store_align_setup(vl: int, batches: list):
    """(processes, results) of the StoreAlign harness: for each batch ``(ub, payloads,
    seeds, thresholds, limit)`` write its ops, start, wait for ``finished``, read back the
    results and the write log and replay the writes onto ``ub``; one dict per batch as the
    Python bench's (``mem``, ``results``, ``accept``, ``out``, ``timed_out``, ``error``)."""
    results = [{"mem": b[0].copy(), "results": [], "accept": [], "out": [],
                "timed_out": False, "error": None} for b in batches]

    async def run(port):
        for (ub, payloads, moves, seeds, thresholds, limit), res in zip(batches, results):
            finished = await run_batch(port, "op", payloads, _stalls(seeds, thresholds), limit,
                                       moves)
            res["error"] = await read_protocol(port, STORE_MONITORED)
            if not finished:
                res["timed_out"] = True
            if res["error"] or not finished:
                continue
            nwrites, overflow = await port.tick("nwrites", "overflow")
            if overflow:
                res["error"] = "the unit wrote UB more than once per op"
                continue
            for bits, acc, out in await read_entries(
                    port, "rb", ("result", "accept", "out"), len(payloads)):
                r = StoreAlignResult.from_bits(int(bits))
                f = r.fault
                res["results"].append((int(r.next_addr), int(getattr(f, "value", f))))
                res["accept"].append(acc)
                res["out"].append(out)
            mem = res["mem"]
            for addr, wdata, be in await read_entries(
                    port, "lb", ("waddr", "wdata", "wbe"), nwrites):
                d = np.frombuffer(int(wdata).to_bytes(2 * vl, "little"), np.uint8)
                mask = np.unpackbits(np.frombuffer(int(be).to_bytes(2 * vl // 8, "little"),
                                                   np.uint8), bitorder="little").astype(bool)
                lanes = np.nonzero(mask)[0]
                if lanes.size and addr + lanes[-1] >= mem.size:
                    res["error"] = (f"the unit wrote UB byte {addr + int(lanes[-1]):#x}, past "
                                    f"its end")
                    break
                mem[addr + lanes] = d[lanes]
    return [run], results


def run_store_align_batches(batches, vl: int = 256, backend: str = "amaranth",
                            depth: int = 1024, waves: str | None = None,
                            vcd: str | None = None, design: Design = BUILTIN) -> list:
    """Run every batch ``(cases, ub, seed, p_op, p_ready)`` (the UB images all of one size)
    through the harness, in one simulator start; one dict per batch with the final UB image
    ``mem``, the ``results`` (next address, fault), the ``accept`` and ``out`` cycles,
    ``timed_out`` and ``error`` -- what the Python-driven bench gives for it
    (:func:`~tilecosim.sim.benches.align.compare_store_align` checks it)."""
    specs, sizes = [], set()
    for cases, ub, seed, p_op, p_ready in batches:
        cases, ub = list(cases), np.asarray(ub, dtype=np.uint8)
        if not 1 <= len(cases) <= depth:
            raise ValueError(f"{len(cases)} ops: a batch holds 1..{depth}")
        sizes.add(ub.size)
        specs.append((ub, [pack(StoreAlignOp(vl), c.payload(vl)) for c in cases],
                      store_moves(cases, ub, vl),
                      (seed_state(seed, 0), seed_state(seed, 1)),
                      (threshold(p_op), threshold(p_ready)), 10 * len(cases) + 100))
    if len(sizes) > 1:
        raise ValueError(f"UB images of {len(sizes)} sizes: one harness run takes one size")
    ub_size = sizes.pop()
    engine = lambda: design.make(lambda: StoreAlignUnit(vl=vl))    # noqa: E731
    return run_bench(backend, lambda: BatchStoreAlign(ub_size, vl, depth, engine),
                     "batch_store_align", batch_store_align_setup, (vl, specs), vcd=vcd,
                     waves=waves, key=repr((ub_size, vl, depth)), design=design)
