"""The batch LoadAlign harness: a whole batch of LoadAligns inside the simulated design, so a
simulator runs it without calling Python every cycle.

:class:`BatchLoadAlign` wraps a :class:`~tilecosim.hdl.align.load.LoadAlignUnit`:

* ``ops``: the batch, written once through ``op_we``/``op_waddr``/``op_wdata`` before the
  run, and presented on the unit's ``op`` stream one by one. Before each op the source waits
  for its :class:`~tilecosim.sim.stall.StallGen` pattern, and holds ``valid`` until the op
  is taken, exactly as the Python bench's :class:`~tilecosim.sim.streams.Source` does.
* ``ub``: UB, preloaded from the image (32-byte words). A read at any byte address returns
  the 2*VL bytes from there the cycle after (zeros past the image), as the Python bench's
  UB model does.
* ``res``: ``ready`` as the second pattern says, every result captured with its cycle, and
  the cycle every op was accepted.

``start`` (one cycle) loads the two patterns from ``seed_op``/``seed_res`` and
``threshold_op``/``threshold_res`` and begins the run; cycle 0 of the run is the cycle
after ``start``, as cycle 0 of the Python bench is its first cycle, so both harnesses count
the same cycles for the same ops and seed. ``finished`` rises when ``count`` results are
in. ``rb_addr`` -> ``rb_*`` read one entry back the cycle after.
"""

import numpy as np
from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.align.common import AlignOp
from tilecosim.hdl.align.load import LoadAlignResult, LoadAlignUnit

from .api import memory_words
from .stall import THRESHOLD_BITS, StallGen

__all__ = ["BatchLoadAlign", "batch_load_align_setup", "run_batch_load_align"]

WORD = 32                      # bytes per UB word of the harness


class BatchLoadAlign(wiring.Component):
    """The LoadAlign unit with its batch, UB and result capture inside (module doc).

    Parameters: ``ub`` the UB image (uint8; also the unit's ``ub_size``), ``vl``, and
    ``depth`` the most ops in one batch. One build serves every batch on one image.
    Latency and throughput are the unit's; the harness adds no cycle of its own.
    """

    def __init__(self, ub: np.ndarray, vl: int = 256, depth: int = 1024):
        if not 1 <= depth <= 1 << 16:
            raise ValueError(f"depth={depth}: must be in 1..65536")
        self.ub, self.vl, self.depth = np.asarray(ub, dtype=np.uint8), vl, depth
        self.span = 2 * vl // WORD + 1                 # words one unaligned read touches
        self.ub_words = -(-self.ub.size // WORD) + self.span
        self.res_layout = LoadAlignResult(vl)
        super().__init__({
            "op_we": In(1), "op_waddr": In(range(depth)), "op_wdata": In(AlignOp),
            "count": In(range(depth + 1)),
            "seed_op": In(32), "threshold_op": In(THRESHOLD_BITS),
            "seed_res": In(32), "threshold_res": In(THRESHOLD_BITS),
            "start": In(1), "finished": Out(1), "cycles": Out(32),
            "rb_addr": In(range(depth)),
            "rb_result": Out(self.res_layout), "rb_accept": Out(32), "rb_out": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = LoadAlignUnit(vl=self.vl, ub_size=self.ub.size)
        running, cyc = self._control(m)
        self._source(m, unit, running, cyc)
        self._ub(m, unit)
        self._capture(m, unit, running, cyc)
        return m

    def _control(self, m):
        running, cyc = Signal(), Signal(32)
        with m.If(self.start):
            m.d.sync += [running.eq(1), cyc.eq(0), self.finished.eq(0)]
        with m.Elif(running):
            m.d.sync += cyc.eq(cyc + 1)
        m.d.comb += self.cycles.eq(cyc)
        return running, cyc

    def _source(self, m, unit, running, cyc):
        m.submodules.ops = ops = memory.Memory(shape=AlignOp, depth=self.depth, init=[])
        m.submodules.accepts = acc = memory.Memory(shape=32, depth=self.depth, init=[])
        wp, rp = ops.write_port(), ops.read_port(domain="comb")
        m.d.comb += [wp.en.eq(self.op_we), wp.addr.eq(self.op_waddr), wp.data.eq(self.op_wdata)]
        m.submodules.stall_op = gen = StallGen()
        m.d.comb += [gen.seed.eq(self.seed_op), gen.threshold.eq(self.threshold_op),
                     gen.load.eq(self.start)]
        index, held = Signal(range(self.depth + 1)), Signal()
        more = running & (index < self.count)
        m.d.comb += [rp.addr.eq(index), unit.op.payload.eq(rp.data),
                     unit.op.valid.eq(more & (held | gen.go))]
        aw = acc.write_port()
        m.d.comb += [aw.addr.eq(index), aw.data.eq(cyc)]
        with m.If(self.start):
            m.d.sync += [index.eq(0), held.eq(0)]
        with m.Elif(unit.op.valid & unit.op.ready):
            m.d.comb += aw.en.eq(1)
            m.d.sync += [index.eq(index + 1), held.eq(0)]
        with m.Elif(unit.op.valid):
            m.d.sync += held.eq(1)
        self._accepts = acc

    def _ub(self, m, unit):
        words = memory_words(self.ub, self.ub_words, WORD)
        m.submodules.ub = ub = memory.Memory(shape=8 * WORD, depth=self.ub_words, init=words)
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

    def _capture(self, m, unit, running, cyc):
        m.submodules.outs = outs = memory.Memory(shape=32, depth=self.depth, init=[])
        m.submodules.stall_res = gen = StallGen()
        m.d.comb += [gen.seed.eq(self.seed_res), gen.threshold.eq(self.threshold_res),
                     gen.load.eq(self.start), unit.res.ready.eq(running & gen.go)]
        taken = Signal(range(self.depth + 1))
        ow = outs.write_port()
        write_result, read_result = _wide_memory(m, "results", self.res_layout.size, self.depth)
        m.d.comb += [ow.addr.eq(taken), ow.data.eq(cyc)]
        take = unit.res.valid & unit.res.ready & ~self.start
        write_result(taken, unit.res.payload.as_value(), take)
        with m.If(self.start):
            m.d.sync += taken.eq(0)
        with m.Elif(unit.res.valid & unit.res.ready):
            m.d.comb += ow.en.eq(1)
            m.d.sync += taken.eq(taken + 1)
            with m.If(taken + 1 == self.count):
                m.d.sync += [self.finished.eq(1), running.eq(0)]
        orr, ar = outs.read_port(), self._accepts.read_port()
        m.d.comb += [orr.addr.eq(self.rb_addr), ar.addr.eq(self.rb_addr),
                     self.rb_result.eq(read_result(self.rb_addr)),
                     self.rb_out.eq(orr.data), self.rb_accept.eq(ar.data)]


CHUNK = 512                    # bits per memory of a wide capture


def _wide_memory(m, name: str, width: int, depth: int):
    """A ``width``-bit memory as memories of at most :data:`CHUNK` bits side by side
    (Amaranth's Python simulator compiles a memory's write mask as one expression per bit,
    which Python cannot compile for thousands of bits). Returns ``write(addr, data, en)``
    and ``read(addr) -> data`` (the cycle after), both called once."""
    chunks = []
    for k, lo in enumerate(range(0, width, CHUNK)):
        mem = memory.Memory(shape=min(CHUNK, width - lo), depth=depth, init=[])
        m.submodules[f"{name}_{k}"] = mem
        chunks.append((lo, mem.write_port(), mem.read_port()))

    def write(addr, data, en):
        for lo, wp, _ in chunks:
            m.d.comb += [wp.addr.eq(addr), wp.data.eq(data[lo:lo + len(wp.data)]), wp.en.eq(en)]

    def read(addr):
        for _, _, rp in chunks:
            m.d.comb += rp.addr.eq(addr)
        return Cat(*(rp.data for _, _, rp in chunks))
    return write, read


def batch_load_align_setup(payloads: list, vl: int, seeds: tuple, thresholds: tuple,
                           limit: int):
    """(processes, result) of the batch harness for :func:`tilecosim.sim.runner.run_bench`:
    write the ops, start, wait for ``finished`` in one wait, read everything back."""
    from .benches.align import AlignResult
    res = AlignResult()
    layout = LoadAlignResult(vl)

    async def run(port):
        for k, pl in enumerate(payloads):
            port.set("op_we", 1)
            port.set("op_waddr", k)
            port.set("op_wdata", pl)
            await port.tick()
        port.set("op_we", 0)
        port.set("count", len(payloads))
        for name, v in zip(("seed_op", "seed_res", "threshold_op", "threshold_res"),
                           seeds + thresholds):
            port.set(name, v)
        port.set("start", 1)
        await port.tick()
        port.set("start", 0)
        if not await port.until("finished", limit):
            res.timed_out = True
            return
        port.set("rb_addr", 0)
        await port.tick()
        for k in range(len(payloads)):
            port.set("rb_addr", min(k + 1, len(payloads) - 1))
            bits, acc, out = await port.tick("rb_result", "rb_accept", "rb_out")
            pl = layout.from_bits(int(bits))
            f = pl.fault
            res.results.append((int(pl.dst0).to_bytes(vl, "little"),
                                int(pl.dst1).to_bytes(vl, "little"), int(pl.next_addr),
                                int(getattr(f, "value", f))))
            res.accept.append(int(acc))
            res.out.append(int(out))
    return [run], res


def run_batch_load_align(cases, ub: np.ndarray, vl: int = 256, seed: int = 0,
                         p_op: float = 1.0, p_ready: float = 1.0, backend: str = "amaranth",
                         depth: int = 1024, waves: str | None = None, vcd: str | None = None):
    """Run ``cases`` (at most ``depth``) through the batch harness on ``backend``; returns an
    :class:`~tilecosim.sim.benches.align.AlignResult` like the Python-driven bench's, with
    the same cycles for the same seed (:func:`~tilecosim.sim.benches.align.compare_load_align`
    checks it against the model)."""
    import hashlib
    from tilecosim.sim.api import pack
    from tilecosim.sim.runner import run_bench
    from .stall import seed_state, threshold
    cases = list(cases)
    if not 1 <= len(cases) <= depth:
        raise ValueError(f"{len(cases)} ops: a batch holds 1..{depth}")
    ub = np.asarray(ub, dtype=np.uint8)
    payloads = [pack(AlignOp, c.payload()) for c in cases]
    seeds = (seed_state(seed, 0), seed_state(seed, 1))       # the Python bench's ports 0, 1
    thresholds = (threshold(p_op), threshold(p_ready))
    limit = 10 * len(cases) + 100
    key = repr((hashlib.sha1(ub.tobytes()).hexdigest(), vl, depth))
    return run_bench(backend, lambda: BatchLoadAlign(ub, vl, depth), "batch_load_align",
                     batch_load_align_setup, (payloads, vl, seeds, thresholds, limit),
                     vcd=vcd, waves=waves, key=key)

