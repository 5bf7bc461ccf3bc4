"""The bulk TLOAD harness: the engine with its global memory and its tile memory inside the
simulated design, so a simulator runs a whole TLOAD without calling Python every cycle.

:class:`BulkTLoad` wraps a :class:`~tilecosim.hdl.tload.engine.TLoadEngine`:

* ``gm``: global memory, 32-byte words preloaded from the scenario's image (a ROM); a
  request ``{addr, len}`` reads words ``addr >> 5`` .. ``(addr >> 5) + W/32`` on W/32 + 1
  synchronous read ports and shifts them by ``addr & 31`` bytes
  (:func:`~tilecosim.sim.harness.read_bytes`), so any unaligned run of up to W bytes comes
  back in one beat.  The response passes ``latency - 1`` more
  register stages and a FIFO; requests are accepted while fewer than ``DEPTH`` responses
  are outstanding.
* ``tile``: the output tiles, W-byte words with byte enables, output ``k`` of the TLOAD at
  byte ``k * size``; ``written`` keeps one bit per byte (never-written bytes are what Null
  padding leaves alone).
* an issuer hands the same instruction to the engine ``repeat`` times back to back (every
  repetition writes the same tiles; a long run for speed measurements), and counts the
  completions.

Ports: ``instr`` (the TLOAD, :data:`~tilecosim.hdl.tload.types.TLoadInstr`), ``mem_size`` and
``repeat`` are set once before ``start``; ``start`` (pulse) begins the run; ``finished``
rises when every completion is in; ``cycles`` counts the cycles from start to finished;
``fault`` is the fault code of the completions (all equal); the ``rb`` port
(:class:`~tilecosim.sim.harness.Readback`) reads one tile word and its written bits back the
cycle after (for the end-state check).

:func:`bulk_procs` is the simulator-neutral bench: start, wait for ``finished`` (one wait,
no per-cycle Python on a Verilog simulator), read the tiles back.  :func:`run_bulk_tload`
runs it on any backend and compares with the golden model.
"""

import hashlib
import time
from dataclasses import dataclass

import numpy as np
from amaranth import Const, Module, Signal
from amaranth.lib import fifo, memory, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import FaultCode
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.tload.types import TLoadInstr
from tilecosim.model.faults import Fault, fault_label
from tilecosim.model.tload import LCFR, TLoadParams, plan
from tilecosim.sim.api import memory_words, pack
from tilecosim.sim.benches.tload import JUNK, SimResult, compare, instr_payload, min_cycles
from tilecosim.sim.harness import Readback, read_bytes, read_entries
from tilecosim.sim.runner import run_bench

__all__ = ["BulkTLoad", "BulkResult", "bulk_procs", "bulk_setup", "tile_bytes", "run_bulk_tload",
           "compare_bulk"]

DEPTH = 16          # responses outstanding at most (the FIFO's depth)


class BulkTLoad(wiring.Component):
    """The TLOAD engine between a preloaded global memory and a tile memory (module doc).

    Parameters: ``mem`` the global memory image (uint8), ``tile_bytes`` the capacity of
    the tile memory, ``latency`` (>= 1) of the memory responses, and the engine's
    ``width``, ``profile``, ``lcfr``, ``transpose``.  The instruction, the memory size and
    the repeat count are input ports, so one build serves every scenario on one image.
    """

    @property
    def coverage_scope(self) -> tuple[str, str]:
        """For ``regress --coverage``: the engine's instance, and its top name."""
        return ("engine", "tload_engine" if self.width == 32 else f"tload_engine_w{self.width}")

    def __init__(self, mem: np.ndarray, tile_bytes: int, latency: int = 2, width: int = 32,
                 profile: str = "finite", lcfr: tuple[int, int] = (256, 256 * 1024),
                 transpose: str = "square"):
        if latency < 1:
            raise ValueError(f"latency={latency}: the memory answers one cycle after the "
                             f"request at the earliest")
        if not 0 < tile_bytes <= 8 * 256 * 1024:
            raise ValueError(f"tile_bytes={tile_bytes}: must be in 1..{8 * 256 * 1024}")
        self.latency, self.width, self.profile, self.lcfr = latency, width, profile, lcfr
        self.transpose = transpose
        self.mem = np.asarray(mem, dtype=np.uint8)
        self.tile_words = -(-tile_bytes // width)
        self.gm_words = -(-self.mem.size // 32) + 4            # +4: the words past a W-byte answer
        super().__init__({
            "instr": In(TLoadInstr),
            "mem_size": In(64),
            "repeat": In(16),
            "start": In(1),
            "finished": Out(1),
            "cycles": Out(32),
            "fault": Out(FaultCode),
            "rb": In(Readback(self.tile_words, {"data": 8 * width, "written": width})),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.width
        m.submodules.engine = eng = TLoadEngine(width=W, profile=self.profile, lcfr=self.lcfr,
                                                transpose=self.transpose)
        m.d.comb += eng.mem_size.eq(self.mem_size)

        # --- issuer --------------------------------------------------------------------------
        running = Signal()
        issued, completed = Signal(16), Signal(16)
        m.d.comb += [eng.instr.valid.eq(running & (issued != self.repeat)),
                     eng.instr.payload.eq(self.instr),
                     eng.done.ready.eq(1)]
        with m.If(self.start & ~running & ~self.finished):
            m.d.sync += running.eq(1)
        with m.If(eng.instr.valid & eng.instr.ready):
            m.d.sync += issued.eq(issued + 1)
        with m.If(eng.done.valid):
            m.d.sync += [completed.eq(completed + 1), self.fault.eq(eng.done.payload.fault)]
            with m.If(completed + 1 == self.repeat):
                m.d.sync += [self.finished.eq(1), running.eq(0)]
        with m.If(running):
            m.d.sync += self.cycles.eq(self.cycles + 1)

        # --- global memory: W/32 + 1 read ports on 32-byte words, shifted to the request -----
        words = memory_words(self.mem, self.gm_words)
        m.submodules.gm = gm = memory.Memory(shape=256, depth=self.gm_words, init=words)
        m.submodules.resp_fifo = rf = fifo.SyncFIFOBuffered(width=8 * W, depth=DEPTH)
        outstanding = Signal(range(DEPTH + 1))
        accept = eng.req.valid & eng.req.ready
        popped = rf.r_en & rf.r_rdy
        m.d.comb += eng.req.ready.eq(outstanding < DEPTH)
        m.d.sync += outstanding.eq(outstanding + accept - popped)
        valid = Signal()
        m.d.sync += valid.eq(accept)
        beat = read_bytes(m, gm, eng.req.payload.addr, W, domain="sync", en=accept)
        for _ in range(self.latency - 1):                       # more latency, in registers
            d_valid, d_beat = Signal(), Signal(8 * W)
            m.d.sync += [d_valid.eq(valid), d_beat.eq(beat)]
            valid, beat = d_valid, d_beat
        m.d.comb += [rf.w_en.eq(valid), rf.w_data.eq(beat),
                     eng.resp.valid.eq(rf.r_rdy), eng.resp.payload.eq(rf.r_data),
                     rf.r_en.eq(eng.resp.ready)]

        # --- tile memory with byte enables, and the written-byte map -------------------------
        m.submodules.tile = tile = memory.Memory(shape=8 * W, depth=self.tile_words,
                                                 init=[int.from_bytes(bytes([JUNK]) * W, "little")]
                                                 * self.tile_words)
        m.submodules.written = wmap = memory.Memory(shape=W, depth=self.tile_words, init=[])
        tw, ww = tile.write_port(granularity=8), wmap.write_port(granularity=1)
        wr = eng.write.payload
        byte = Signal(22)
        m.d.comb += [eng.write.ready.eq(1), byte.eq(wr.tile * self.instr.sizes[0][:19] + wr.offset),
                     tw.addr.eq(byte // W), tw.data.eq(wr.data), ww.addr.eq(byte // W),
                     ww.data.eq(Const(-1, W))]
        with m.If(eng.write.valid):
            m.d.comb += [tw.en.eq(wr.be), ww.en.eq(wr.be)]
        rt, rw = tile.read_port(), wmap.read_port()
        m.d.comb += [rt.addr.eq(self.rb.addr), rw.addr.eq(self.rb.addr),
                     self.rb.data.eq(rt.data), self.rb.written.eq(rw.data)]
        return m


@dataclass
class BulkResult:
    cycles: int | None = None           # start -> every completion, counted by the design
    fault: int | None = None
    data: np.ndarray = None             # the tile memory
    written: np.ndarray = None          # bool per byte
    seconds: float = 0.0                # wall time of the run proper (start -> finished)
    timed_out: bool = False
    waveform: str | None = None            # written when the watchdog fired


def bulk_procs(instr: int, mem_size: int, repeat: int, tile_words: int, width: int, limit: int,
               res: BulkResult):
    """Set the instruction, start the run, wait for ``finished`` in one wait (at most
    ``limit`` cycles), read the tiles back."""
    async def run(port):
        port.set("instr", instr)
        port.set("mem_size", mem_size)
        port.set("repeat", repeat)
        port.set("start", 1)
        await port.tick()
        port.set("start", 0)
        t0 = time.perf_counter()
        ok = await port.until("finished", limit)
        res.seconds = time.perf_counter() - t0
        if not ok:
            res.timed_out = True
            return
        res.cycles, res.fault = await port.tick("cycles", "fault")
        data, written = bytearray(), []
        for d, w in await read_entries(port, "rb", ("data", "written"), tile_words):
            data += int(d).to_bytes(width, "little")
            written += [(int(w) >> b) & 1 for b in range(width)]
        res.data = np.frombuffer(bytes(data), dtype=np.uint8)
        res.written = np.array(written, dtype=bool)
    return [run]


def bulk_setup(instr: int, mem_size: int, repeat: int, tile_words: int, width: int, limit: int):
    """(processes, result) of the bulk bench, for :func:`tilecosim.sim.runner.run_bench`."""
    res = BulkResult()
    return bulk_procs(instr, mem_size, repeat, tile_words, width, limit, res), res


def tile_bytes(params: TLoadParams) -> int:
    """Bytes of tile memory the outputs of ``params`` need (at least 256)."""
    size = params.outputs[0][1] if params.outputs else 0
    return max(256, len(params.outputs) * size if 0 < size <= 256 * 1024 else 0)


def run_bulk_tload(params: TLoadParams, mem: np.ndarray, backend: str = "amaranth",
                   repeat: int = 1, latency: int = 2, width: int = 32, profile: str = "finite",
                   lcfr: tuple[int, int] = (256, 256 * 1024), transpose: str = "square",
                   waves: str | None = None, vcd: str | None = None,
                   capacity: int | None = None):
    """Run the bulk harness on ``backend``; returns (BulkResult, problems against the model).

    ``capacity``: bytes of tile memory (default: what ``params`` needs); scenarios with the
    same memory image and capacity share one build.  The watchdog is 10 x the cycles the
    engine needs at least + 100 per repetition."""
    mem = np.asarray(mem, dtype=np.uint8)
    try:
        need = max(min_cycles(plan(params, mem.size, LCFR(*lcfr))),
                   len(params.outputs) * params.outputs[0][1] // width)
    except Fault:
        need = 0
    limit = repeat * (10 * need + 100) + 100

    if not 1 <= repeat < 1 << 16:
        raise ValueError(f"repeat={repeat}: must be in 1..65535")
    cap = capacity or tile_bytes(params)
    if cap < tile_bytes(params):
        raise ValueError(f"capacity={cap}: the outputs need {tile_bytes(params)} bytes")

    def make():
        return BulkTLoad(mem, cap, latency, width, profile, lcfr, transpose)
    instr = pack(TLoadInstr, instr_payload(params))
    words = min(-(-cap // width), -(-tile_bytes(params) // width))
    res = run_bench(backend, make, "bulk_tload", bulk_setup,
                    (instr, min(mem.size, (1 << 64) - 1), repeat, words, width, limit),
                    vcd=vcd, waves=waves,
                    key=repr((hashlib.sha1(mem.tobytes()).hexdigest(), cap, latency, width,
                              profile, tuple(lcfr), transpose)))
    return res, compare_bulk(params, mem, res, profile, lcfr)


def compare_bulk(params, mem, res: BulkResult, profile="finite",
                 lcfr=(256, 256 * 1024)) -> list[str]:
    """Disagreements of the end state with the golden model, one line each."""
    if res.timed_out:
        return ["the engine did not finish within the watchdog"]
    problems = []
    try:
        plan(params, mem.size, LCFR(*lcfr))
        code = 0
    except Fault as f:
        code = f.code
    if res.fault != code:
        problems.append(f"fault {fault_label(res.fault)} from the design, "
                        f"{fault_label(code)} from the model")
    if code:
        if res.written is not None and res.written.any():
            problems.append("a faulting instruction wrote the tiles")
        return problems
    size = params.outputs[0][1]
    sim = SimResult()
    for k in range(len(params.outputs)):
        sim.tiles[(0, k)] = res.data[k * size:(k + 1) * size]
        sim.written[(0, k)] = res.written[k * size:(k + 1) * size]
    _, mism = compare(params, mem, sim, profile, LCFR(*lcfr))
    return problems + [str(x) for x in mism]
