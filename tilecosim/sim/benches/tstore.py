"""Simulating the TSTORE engine against the golden model, on any simulator.

The bench around :class:`tilecosim.hdl.tstore.engine.TStoreEngine`:

* a driver that hands over the instructions (the source register's size and element size
  beside each);
* the source register: a synchronous read port over the instruction's tile image (the word
  addressed in a cycle is on ``tile_data`` in the next); the instruction whose tile is read
  is the one after the last completed (the engine runs one at a time);
* the global memory: writes applied as they are taken (seeded back-pressure on
  ``wr.ready``), a write outside memory an error;
* the completion sink.

:func:`compare_tstore` holds the final memory against the model's after the same
instructions: every byte must be equal, so a byte written outside a footprint is caught as
surely as a footprint byte missed.  A mismatch names the instruction, the memory row (or
column), the element and its byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilecosim.hdl.common import Completion
from tilecosim.hdl.tstore.engine import MemWrite, TileRead, TStoreEngine, TStoreInstr
from tilecosim.model.faults import Fault
from tilecosim.model.tload import TileImage
from tilecosim.model.tstore import TStoreParams, plan_tstore, tstore
from tilecosim.sim.api import pack, stretched, unpack, watchdog
from tilecosim.sim.runner import run_bench
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Sink, Source

__all__ = ["TStoreConfig", "TStoreResult", "tstore_payload", "simulate_tstore",
           "compare_tstore", "tstore_setup", "ideal_beats"]

MASK64 = (1 << 64) - 1


@dataclass
class TStoreConfig:
    width: int = 32
    seed: int = 0
    p_wr_ready: float = 1.0
    p_instr_valid: float = 1.0
    backend: str = "amaranth"
    vcd: str | None = None
    waves: str | None = None
    max_cycles: int | None = None


@dataclass
class TStoreResult:
    memory: np.ndarray | None = None
    faults: list = field(default_factory=list)
    accept_cycles: list = field(default_factory=list)
    done_cycles: list = field(default_factory=list)
    first_write_cycle: int | None = None
    last_write_cycle: int | None = None
    writes: int = 0
    reads: int = 0
    cycles: int | None = None            # first accept -> last write
    timed_out: bool = False
    waveform: str | None = None
    error: str | None = None


def tstore_payload(p: TStoreParams, src: TileImage) -> dict:
    """The engine's ``instr`` payload for a TSTORE of ``src``."""
    return {"layout": int(p.layout), "dtype": p.dtype.code,
            "valid_col": p.valid_col & MASK64, "valid_row": p.valid_row & MASK64,
            "col": (p.valid_col if p.col is None else p.col) & MASK64,
            "base": p.base & MASK64, "stride": (p.stride or 0) & MASK64,
            "stride_given": int(p.stride is not None),
            "log2_size": src.size.bit_length() - 1,
            "src_log2_esize": src.dtype.esize.bit_length() - 1}


def ideal_beats(p: TStoreParams, src: TileImage, mem_size: int, width: int) -> int:
    """The W-byte beats a TSTORE moves at least: its footprint's bytes / W, rounded up
    (0 for a faulting one)."""
    try:
        pl = plan_tstore(p, src, mem_size)
    except Fault:
        return 0
    return -(-pl.footprint_bytes() // width)


def _procs(cases, mem: np.ndarray, cfg: TStoreConfig, res: TStoreResult):
    W = cfg.width
    state = {"cycle": 0, "done": False}
    floor = sum(max(ideal_beats(p, t, mem.size, W), t.size // 32) + 40 for p, t in cases)
    limit = cfg.max_cycles or stretched(10 * floor + 200, cfg.p_wr_ready, cfg.p_instr_valid)
    clock = watchdog(state, limit, lambda: setattr(res, "timed_out", True))
    memory = np.array(mem, dtype=np.uint8)
    res.memory = memory
    words = [np.concatenate([np.asarray(t.data, np.uint8),
                             np.zeros(W, np.uint8)]) for _, t in cases]
    rd = TileRead(W)
    rd_fields = {name: (f.offset, f.width) for name, f in rd}
    payloads = [pack(TStoreInstr, tstore_payload(p, t)) for p, t in cases]
    source = Source("instr", payloads, state, stall=Stall(cfg.seed, 0, cfg.p_instr_valid),
                    accepted=res.accept_cycles)

    async def driver(port):
        port.set("mem_size", min(mem.size, MASK64))
        await source.send(port, payloads)

    async def tile_port(port):
        while not state["done"]:
            (bits,) = await port.tick("tile_rd")
            bits = int(bits or 0)
            en = bits >> rd_fields["en"][0] & 1
            if en:
                word = bits >> rd_fields["word"][0] & ((1 << rd_fields["word"][1]) - 1)
                k = min(len(res.faults), len(cases) - 1)
                img = words[k]
                off = word * W
                if off >= cases[k][1].size:
                    raise AssertionError(f"TSTORE {k} read word {word} of its source, past "
                                         f"its {cases[k][1].size} bytes")
                res.reads += 1
                port.set("tile_data", int.from_bytes(img[off:off + W].tobytes(), "little"))
    tile_port.background = True

    fields = {name: (f.offset, f.width) for name, f in MemWrite(W)}

    def write(bits, cycle):
        bits = int(bits)
        addr, data, be = (bits >> fields[k][0] & ((1 << fields[k][1]) - 1)
                          for k in ("addr", "data", "be"))
        mask = np.unpackbits(np.frombuffer(be.to_bytes(W // 8, "little"), np.uint8),
                             bitorder="little").astype(bool)
        idx = np.flatnonzero(mask)
        if len(res.faults) >= len(res.accept_cycles):
            raise AssertionError(f"write of {idx.size} B at {addr:#x} after TSTORE "
                                 f"{len(res.faults) - 1} completed, before the next was "
                                 f"accepted (a completion must follow its last write)")
        if idx.size and addr + int(idx[-1]) >= memory.size:
            raise AssertionError(f"write of {idx.size} B at {addr:#x}, past the end of the "
                                 f"{memory.size}-byte memory")
        memory[addr + idx] = np.frombuffer(data.to_bytes(W, "little"), np.uint8)[idx]
        res.writes += 1
        res.last_write_cycle = cycle
        if res.first_write_cycle is None:
            res.first_write_cycle = cycle

    def complete(bits, cycle):
        f = unpack(Completion, bits).fault
        res.faults.append(int(getattr(f, "value", f)))
        res.done_cycles.append(cycle)
        if len(res.faults) == len(cases):
            state["done"] = True

    return [clock, driver, tile_port,
            Sink("wr", state, write, stall=Stall(cfg.seed, 3, cfg.p_wr_ready)),
            Sink("done", state, complete, stall=Stall(cfg.seed, 4, cfg.p_wr_ready),
                 most=lambda: len(res.accept_cycles))]


def tstore_setup(cases, mem, cfg: TStoreConfig):
    res = TStoreResult()
    return _procs(cases, mem, cfg, res), res


def simulate_tstore(cases: list[tuple[TStoreParams, TileImage]], mem: np.ndarray,
                    cfg: TStoreConfig = TStoreConfig()) -> TStoreResult:
    """Run TSTOREs of (params, source image) back to back through the engine."""
    mem = np.asarray(mem, dtype=np.uint8)
    res = run_bench(cfg.backend, lambda: TStoreEngine(width=cfg.width), "tstore_engine",
                    tstore_setup, (list(cases), mem, cfg), vcd=cfg.vcd, waves=cfg.waves,
                    key=repr((cfg.width,)))
    if res.accept_cycles and res.last_write_cycle is not None:
        res.cycles = res.last_write_cycle - res.accept_cycles[0] + 1
    return res


def compare_tstore(cases, mem: np.ndarray, res: TStoreResult) -> list[str]:
    """The disagreements of a run with the model: faults, and every byte of the final
    memory, each named by its instruction, memory row/column, element and byte."""
    want = np.array(mem, dtype=np.uint8)
    problems = []
    owner = np.full(want.size, -1, dtype=np.int64)
    codes = []
    for k, (p, src) in enumerate(cases):
        try:
            addrs = tstore(want, p, src)
            owner[addrs] = k
            codes.append(0)
        except Fault as f:
            codes.append(f.code)
    if res.timed_out:
        problems.append(f"the engine hung: {len(res.faults)} of {len(cases)} completions")
    for k, (a, b) in enumerate(zip(codes, res.faults)):
        if a != b:
            problems.append(f"TSTORE {k}: fault code {b}, the model's {a}")
    if res.memory is None:
        return problems
    bad = np.flatnonzero(res.memory != want)
    for addr in bad[:8]:
        k = int(owner[addr])
        if k < 0:
            problems.append(f"memory byte {addr:#x}: written ({res.memory[addr]:#04x}), but "
                            f"it is outside every footprint (keeps {want[addr]:#04x})")
            continue
        p = cases[k][0]
        e = p.esize
        stride = plan_tstore(p, cases[k][1], want.size).stride
        off = int(addr) - p.base
        run, rest = (off // stride, off % stride) if stride else (0, off)
        elem, byte = divmod(rest, e)
        what = "column" if p.layout.source_dn else "row"
        problems.append(f"TSTORE {k} ({p.layout.name}): memory byte {addr:#x}, {what} {run}, "
                        f"element {elem}, byte {byte}: expected {want[addr]:#04x}, got "
                        f"{res.memory[addr]:#04x}")
    if bad.size > 8:
        problems.append(f"... {bad.size - 8} more bytes differ")
    return problems
