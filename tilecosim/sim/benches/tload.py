"""Simulating the TLOAD engine against the golden model (Amaranth's simulator).

The bench around :class:`tilecosim.hdl.tload.engine.TLoadEngine`:

* a driver that hands over the instructions;
* a memory model backed by the numpy global memory: in-order responses after a
  configurable latency, random stalls on ``req.ready`` and gaps on ``resp.valid``;
* a tile collector that builds each output tile's byte image from the writes
  (random back-pressure on ``write.ready``), and a completion collector;
* the idle/back-pressure patterns come from one logged seed.

:func:`compare` holds the result against the golden model: every byte the model
defines must be written with the model's value; bytes the model marks don't-care
(Null padding) are ignored, and nothing else is.  A mismatch report names the output
tile, the logical row and column, the expected and actual bytes and a command that
reproduces it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import numpy as np

from tilecosim.hdl.common import Completion
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.tload.types import MemRequest, TileWrite, TLoadInstr
from tilecosim.model.asm import params_to_asm
from tilecosim.model.faults import Fault, completion_label, fault_label
from tilecosim.model.layouts import tile_offsets
from tilecosim.model.tload import LCFR, TLoadLayout, TLoadParams, plan, tload
from tilecosim.sim.api import pack, stretched, unpack, watchdog
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.runner import run_bench
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Responder, Sink, Source, in_flight

__all__ = ["instr_payload", "memory_answer", "SimConfig", "SimResult", "TileCollector", "budget", "simulate_tload", "compare", "Mismatch",
           "run_and_compare", "repro_command", "tload_setup"]

QUEUE_CODES = {"T": 0, "U": 1, "M": 2, "N": 3, "ACC": 4, "S": 5}
MASK64 = (1 << 64) - 1
JUNK = 0xCD                  # initial tile content: Null padding must leave it alone


def instr_payload(p: TLoadParams) -> dict:
    """The engine's ``instr`` payload for a TLOAD."""
    outs = list(p.outputs)
    queues = [QUEUE_CODES.get(q, 7) for q, _ in outs] + [0] * (8 - len(outs))
    sizes = [s & MASK64 for _, s in outs] + [0] * (8 - len(outs))
    return {
        "layout": int(p.layout), "dtype": p.dtype.code, "pad": int(p.pad),
        "valid_col": p.valid_col & MASK64, "valid_row": p.valid_row & MASK64,
        "col": (p.valid_col if p.col is None else p.col) & MASK64,
        "base": p.base & MASK64, "stride": (p.stride or 0) & MASK64,
        "stride_given": int(p.stride is not None), "n": min(len(outs), 15),
        "queues": queues[:8], "sizes": sizes[:8],
    }


@dataclass
class SimConfig:
    width: int = 32
    latency: int = 2               # memory response latency, cycles
    seed: int = 0                  # back-pressure / idle patterns
    p_req_ready: float = 1.0       # probability that memory accepts a request in a cycle
    p_resp_valid: float = 1.0      # probability that a due response is presented
    p_write_ready: float = 1.0     # probability that the tile side accepts a write
    p_instr_valid: float = 1.0     # probability that the driver presents its instruction
    profile: str = "finite"
    lcfr: tuple[int, int] = (256, 256 * 1024)
    transpose: str = "square"
    depth: int = 16
    vcd: str | None = None         # Amaranth waveform
    max_cycles: int | None = None
    backend: str = "amaranth"      # or "icarus" / "verilator" (cocotb on the generated Verilog)
    reset_after: int | None = None # assert rst for 2 cycles this many cycles after the first
                                   # accept (instruction 0 is aborted; the rest must be right)
    waves: str | None = None       # FST waveform of a Verilog simulator
    design: Design = BUILTIN       # the engine under test (D16: --dut)


@dataclass
class SimResult:
    tiles: dict = field(default_factory=dict)       # (instruction, tile) -> uint8 image
    written: dict = field(default_factory=dict)     # (instruction, tile) -> bool per byte
    beats: list = field(default_factory=list)       # write beats per instruction
    faults: list = field(default_factory=list)      # one code per instruction, in order
    accept_cycles: list = field(default_factory=list)
    done_cycles: list = field(default_factory=list)
    last_write_cycle: int | None = None
    first_write_cycle: int | None = None
    cycles: int | None = None                       # accept of the first -> last write
    requests: int = 0
    timed_out: bool = False
    waveform: str | None = None            # written when the watchdog fired
    error: str | None = None               # what a batch harness found wrong (the Python
                                           # bench raises AssertionError instead)


def min_cycles(pl) -> int:
    """Cycles the engine needs at least: one per source run (32-byte lines; NORM rows
    narrower than 32 bytes are one run each; a transpose group of L lines takes S runs)."""
    p = pl.params
    e, size, n = p.esize, p.outputs[0][1], pl.n
    row_bytes = pl.out_cols * e
    if p.layout is TLoadLayout.NORM:
        return n * size // min(row_bytes, 32)
    if not p.layout.transposing:
        return n * size // 32
    extent = pl.out_rows if p.layout.source_dn else pl.out_cols
    lines = min(32 // e, extent)
    return n * (size // 32) // lines * (32 // e)


def _bytes_of(value: int, n: int) -> np.ndarray:
    return np.frombuffer(int(value).to_bytes(n, "little"), dtype=np.uint8)


def budget(plist, mem, cfg: SimConfig, res: SimResult) -> int:
    """Fill ``res.beats`` (the write beats each instruction owns: the writes of instruction
    i are the next n*Size/W beats after those of i-1) and return the watchdog's limit: 10 x
    the cycles the instructions need at least + 100 + 50 per instruction."""
    floor = 0
    for p in plist:
        try:
            pl = plan(p, mem.size, LCFR(*cfg.lcfr))
            res.beats.append(len(p.outputs) * p.outputs[0][1] // cfg.width)
            floor += max(res.beats[-1], min_cycles(pl))
        except Fault:
            res.beats.append(0)
    return cfg.max_cycles or (stretched(10 * floor, cfg.p_req_ready, cfg.p_resp_valid,
                                        cfg.p_write_ready, cfg.p_instr_valid)
                              + 100 + 50 * len(plist))


class TileCollector:
    """Builds each output tile's byte image from the write beats of a run of ``plist``.

    A beat belongs to the instruction that owns it by count (``res.beats``, from
    :func:`budget`: the writes of instruction i are the next n*Size/W beats after those of
    i-1); beats past the last instruction's go to instruction ``len(plist)``, which the
    comparison reports. Bytes never written keep :data:`JUNK`. The fields of a beat are cut
    from its flat bits directly: this runs for every beat of every regression."""

    def __init__(self, plist, res: SimResult, width: int):
        self.res, self.width, self.ninstr = res, width, len(plist)
        self.owner = [i for i, b in enumerate(res.beats) for _ in range(b)]
        self.sizes = [p.outputs[0][1] if b else 0 for p, b in zip(plist, res.beats)]
        fields = {name: (f.offset, f.width) for name, f in TileWrite(width)}
        self.cut = [fields[k] for k in ("tile", "offset", "data", "be")]
        self.beats = 0

    def record(self, bits: int, cycle: int) -> None:
        """One beat (flat ``TileWrite`` bits) taken at ``cycle``."""
        bits, W, res = int(bits), self.width, self.res
        t, off, data, be = (bits >> lo & ((1 << n) - 1) for lo, n in self.cut)
        n = self.beats
        self.beats += 1
        owner = self.owner[n] if n < len(self.owner) else self.ninstr
        key = (owner, t)
        img = res.tiles.get(key)
        if img is None or img.size < off + W:
            size = max(self.sizes[owner] if owner < self.ninstr else 1 << 18, off + W)
            img = _grown(img, size, JUNK, np.uint8)
            res.tiles[key] = img
            res.written[key] = _grown(res.written.get(key), size, False, bool)
        mask = np.unpackbits(np.frombuffer(be.to_bytes(W // 8, "little"), np.uint8),
                             bitorder="little").astype(bool)
        img[off:off + W][mask] = _bytes_of(data, W)[mask]
        res.written[key][off:off + W] |= mask
        res.last_write_cycle = cycle
        if res.first_write_cycle is None:
            res.first_write_cycle = cycle


def _grown(arr, size: int, fill, dtype):
    out = np.full(size, fill, dtype=dtype)
    if arr is not None:
        out[:arr.size] = arr
    return out


def _driver(source, payloads, mem, cfg: SimConfig, res: SimResult, state, collector):
    """Hands the instructions over; with ``cfg.reset_after``, resets the design that many
    cycles after the first accept (instruction 0 is aborted; 1.. follow)."""
    async def driver(port):
        port.set("mem_size", min(mem.size, MASK64))
        if cfg.reset_after is None:
            await source.send(port, payloads)
            return
        await source.send(port, payloads[:1])
        for _ in range(cfg.reset_after):
            await port.tick()
        port.set("rst", 1)                      # the memory system resets along
        state["in_reset"] = True
        await port.tick()
        await port.tick()
        port.set("rst", 0)
        state["in_reset"] = False
        collector.beats = res.beats[0]          # instruction 0 is gone; 1.. follow
        if not res.faults:
            res.faults.append(None)
            res.done_cycles.append(None)
        await source.send(port, payloads[1:])
    return driver


def memory_answer(mem: np.ndarray, width: int, who: str, base=lambda: 0):
    """The global memory's answer to a request (flat ``MemRequest`` bits): W bytes, the
    ``len`` requested from ``addr`` first, filler after them; the memory's byte 0 is at
    address ``base()``.  A request outside the memory or longer than a beat raises
    AssertionError naming ``who`` made it."""
    junk = bytes([0xA5]) * width

    def read(bits):
        q = unpack(MemRequest(width), bits)
        at, n = int(q.addr), int(q.len)
        addr = at - base()
        if not 1 <= n <= width or addr < 0 or addr + n > mem.size:
            raise AssertionError(f"{who} requested {n} B at {at:#x}, outside the "
                                 f"{mem.size}-byte memory at {base():#x}")
        return int.from_bytes(mem[addr:addr + n].tobytes() + junk[:width - n], "little")
    return read


def tload_procs(plist: list[TLoadParams], mem: np.ndarray, cfg: SimConfig, res: SimResult):
    """The TLOAD bench, simulator-neutral (see :mod:`tilecosim.sim.api`): the instruction
    source, the global memory (a :class:`~tilecosim.sim.streams.Responder`), the tile
    collector and the completion sink.

    Each process draws its idle/back-pressure pattern from its own generator seeded from
    ``cfg.seed``, so the pattern does not depend on the order in which a simulator
    resumes the processes within a cycle.
    """
    W = cfg.width
    state = {"cycle": 0, "done": False}
    clock = watchdog(state, budget(plist, mem, cfg, res),
                     lambda: setattr(res, "timed_out", True))
    collector = TileCollector(plist, res, W)
    payloads = [pack(TLoadInstr, instr_payload(p)) for p in plist]
    source = Source("instr", payloads, state, stall=Stall(cfg.seed, 0, cfg.p_instr_valid),
                    accepted=res.accept_cycles)
    answer = memory_answer(mem, W, "engine")
    moving = in_flight(res.accept_cycles, res.faults, [b > 0 for b in res.beats])

    def read(bits):
        res.requests += 1
        return answer(bits)

    def write(bits, cycle):
        if not state.get("in_reset"):
            collector.record(bits, cycle)

    def complete(bits, cycle):
        if state.get("in_reset"):
            return
        f = unpack(Completion, bits).fault
        res.faults.append(int(getattr(f, "value", f)))
        res.done_cycles.append(cycle)
        if len(res.faults) == len(plist):
            state["done"] = True

    return [clock, _driver(source, payloads, mem, cfg, res, state, collector),
            Responder("req", "resp", state, read, latency=cfg.latency,
                      ready_stall=Stall(cfg.seed, 1, cfg.p_req_ready),
                      valid_stall=Stall(cfg.seed, 2, cfg.p_resp_valid), allowed=moving),
            Sink("write", state, write, stall=Stall(cfg.seed, 3, cfg.p_write_ready),
                 allowed=moving),
            Sink("done", state, complete, stall=Stall(cfg.seed, 4, cfg.p_write_ready),
                 most=lambda: len(res.accept_cycles))]


def finish(res: SimResult) -> SimResult:
    if res.accept_cycles and res.last_write_cycle is not None:
        res.cycles = res.last_write_cycle - res.accept_cycles[0] + 1
    return res


def tload_setup(plist: list[TLoadParams], mem: np.ndarray, cfg: SimConfig):
    """(processes, result) of the TLOAD bench, for :func:`tilecosim.sim.runner.run_bench`."""
    res = SimResult()
    return tload_procs(plist, mem, cfg, res), res


def simulate_tload(params: list[TLoadParams] | TLoadParams, mem: np.ndarray,
                   cfg: SimConfig = SimConfig(), timing: dict | None = None) -> SimResult:
    """Run one or several TLOADs back to back through the engine on ``cfg.backend``."""
    plist = [params] if isinstance(params, TLoadParams) else list(params)
    mem = np.asarray(mem, dtype=np.uint8)
    def make():
        return cfg.design.make(lambda: TLoadEngine(width=cfg.width, profile=cfg.profile,
                                                   lcfr=cfg.lcfr, depth=cfg.depth,
                                                   transpose=cfg.transpose))

    res = run_bench(cfg.backend, make, "tload_engine", tload_setup, (plist, mem, cfg),
                    vcd=cfg.vcd, waves=cfg.waves, timing=timing,
                    key=repr((cfg.width, cfg.profile, tuple(cfg.lcfr), cfg.depth, cfg.transpose)),
                    design=cfg.design)
    return finish(res)


@dataclass
class Mismatch:
    output: int
    row: int
    col: int
    byte: int
    expected: int
    actual: int | None          # None: the byte was never written

    def __str__(self):
        act = "unwritten" if self.actual is None else f"{self.actual:#04x}"
        return (f"output tile {self.output}, row {self.row}, column {self.col}, byte {self.byte} "
                f"of the element: expected {self.expected:#04x}, got {act}")


def compare(p: TLoadParams, mem: np.ndarray, res: SimResult, profile: str = "finite",
            lcfr: LCFR = LCFR(), instr: int = 0) -> tuple[int | None, list[Mismatch]]:
    """(model fault code or None, mismatches) for instruction ``instr`` of the run."""
    try:
        want = tload(mem, p, profile, lcfr)
    except Fault as f:
        return f.code, []
    out = []
    for k, img in enumerate(want):
        got = res.tiles.get((instr, k))
        wr = res.written.get((instr, k))
        e = img.dtype.esize
        if wr is None:
            bad = np.nonzero(img.valid)[0]
        else:
            bad = np.nonzero(img.valid & (~wr[:img.size] | (got[:img.size] != img.data)))[0]
        if bad.size:
            offs = tile_offsets(img.layout, img.rows, img.cols, esize=e)
            for b in bad[:8]:
                elem, byte = divmod(int(b), e)
                r, c = map(int, np.argwhere(offs == elem)[0])
                actual = None if wr is None or not wr[b] else int(got[b])
                out.append(Mismatch(k, r, c, byte, int(img.data[b]), actual))
    return None, out


def run_and_compare(p: TLoadParams | list[TLoadParams], mem: np.ndarray,
                    cfg: SimConfig = SimConfig(), result: SimResult | None = None):
    """Simulate one TLOAD (or several back to back) and compare with the model.

    Returns (result, model fault code of the first instruction, mismatches, problems);
    ``problems`` lists disagreements of another kind: a fault code different from the
    model's, a timeout, writes or requests by a faulting instruction, extra writes.  With
    ``cfg.reset_after`` the first instruction is aborted by a reset and not compared.
    ``result``: the run of another harness to compare instead of simulating here.
    """
    plist = [p] if isinstance(p, TLoadParams) else list(p)
    res = simulate_tload(plist, mem, cfg) if result is None else result
    problems, mism, codes = [], [], []
    if res.timed_out:
        problems.append("the engine did not complete within the watchdog (10 x the cycles "
                        "it needs at least + 100 + 50 per instruction); waveform: "
                        f"{res.waveform or cfg.vcd or cfg.waves}")
    for i, q in enumerate(plist):
        code, mm = compare(q, mem, res, cfg.profile, LCFR(*cfg.lcfr), instr=i)
        codes.append(code)
        if i == 0 and cfg.reset_after is not None:      # aborted by the reset
            continue
        where = f"instruction {i}: " if len(plist) > 1 else ""
        mism += mm
        got = res.faults[i] if i < len(res.faults) else None
        if got != (code or 0):
            problems.append(f"{where}{completion_label(got)} from the design, "
                            f"{fault_label(code)} from the model")
    if any((len(plist), t) in res.tiles for t in range(8)):
        problems.append("writes beyond those of the instructions")
    if all(codes) and res.requests:
        problems.append(f"faulting instructions made {res.requests} memory requests")
    return res, codes[0], mism, problems


def repro_command(p: TLoadParams, cfg: SimConfig, mem_seed: int, mem_size: int) -> str:
    """The ``tilecosim tload`` line that reruns this scenario on the Amaranth backend."""
    text, regs = params_to_asm(p)
    parts = ["tilecosim", "tload", shlex.quote(text)]
    parts += [f"--reg {k}={v}" for k, v in regs.items()]
    parts += [f"--mem-seed {mem_seed}", f"--mem-size {mem_size}", f"--backend {cfg.backend}",
              f"--width {cfg.width}", f"--latency {cfg.latency}", f"--seed {cfg.seed}"]
    stall = 1 - min(cfg.p_req_ready, cfg.p_resp_valid, cfg.p_write_ready, cfg.p_instr_valid)
    if stall:
        parts.append(f"--stall {stall:g}")
    if cfg.profile != "finite":
        parts.append(f"--profile {cfg.profile}")
    if cfg.transpose != "square":
        parts.append(f"--transpose {cfg.transpose}")
    return " ".join(parts)
