"""Programs on the RTL tile system, checked against the golden Machine after every
instruction.

The bench around :class:`tilecosim.hdl.tiles.system.TileSystem`:

* a record source that sends each instruction's block records (seeded idle between beats)
  and, with ``check="each"``, waits for its completion and then checks the architectural
  state before it sends the next;
* the global memory, as in the TLOAD bench: in-order responses after a latency, seeded
  stalls on ``req.ready`` and gaps on ``resp.valid``;
* a completion sink.

The check after an instruction compares, with the golden :class:`~tilecosim.model.machine.Machine`
(``arith="integer"``) after the same instruction:

* the fault: its D8 code (the model's name and message are reported beside it);
* the live registers of every queue by relative name (the ``live`` port);
* every defined byte of every live tile, read word by word through the debug port (bytes
  the model leaves undefined, Null padding, are ignored; nothing else is).

A mismatch names the instruction's line, the register, the row, the column and the byte.
``check="end"`` streams the whole program and checks the final state once (the performance
bench).  The program stops at its first fault, as ``tilecosim run`` does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from tilecosim.hdl.common import Completion
from tilecosim.hdl.tiles.system import TileSystem
from tilecosim.hdl.tstore.engine import MemWrite
from tilecosim.hdl.tiles.types import (QUEUE_CODES, DebugAddr, LookupStatus, RecordBeat,
                                       RecordKind,
                                       record_beats)
from tilecosim.model.asm import RegisterError, parse_program
from tilecosim.model.faults import Fault, completion_label, fault_label
from tilecosim.model.layouts import tile_offsets
from tilecosim.model.machine import Machine
from tilecosim.model.tload import LCFR, TILE_QUEUES
from tilecosim.sim.api import pack, stretched, unpack, watchdog
from tilecosim.sim.benches.tload import memory_answer
from tilecosim.sim.runner import run_bench
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Responder, Sink, Source

__all__ = ["ProgramConfig", "ProgramResult", "GoldenStep", "golden_steps", "simulate_programs", "program_text_steps",
           "run_program", "run_programs", "compare_program", "program_setup", "DEFAULT_LCFR"]

DEFAULT_LCFR = (256, 4096)
MASK64 = (1 << 64) - 1
MAX_REPORTED = 8                   # mismatching bytes reported per register


@dataclass
class ProgramConfig:
    width: int = 32
    latency: int = 2
    seed: int = 0
    p_req_ready: float = 1.0
    p_resp_valid: float = 1.0
    p_record_valid: float = 1.0
    profile: str = "finite"
    lcfr: tuple[int, int] = DEFAULT_LCFR
    depth: int = 16
    backend: str = "amaranth"
    check: str = "each"                # or "end"
    vcd: str | None = None
    waves: str | None = None
    max_cycles: int | None = None
    #: where the RTL sees global memory (:func:`memory_window`): True, a base drawn from the
    #: seed and the program; False, at 0
    window: bool = True


#: a program whose values reach this (a far operand, an extent past any memory) runs with
#: its memory at 0: a window must not make its addresses wrap
WINDOW_LIMIT = 1 << 20


def memory_window(steps: list[GoldenStep], seed: int) -> int:
    """The address at which the RTL sees the program's global memory: a multiple of 64 KB
    below 2**63, drawn from the bench seed and the program's text (the same alone and in a
    batch), so that the engines' address bits above the 64 KB of the bench's memory move.
    The model's addresses are the RTL's minus it: the bench adds it to every base register
    value (the B.IOR record), adds it to ``mem_size``, and subtracts it from every memory
    request and write; the engines are translation-invariant (their bounds checks compare
    base + footprint with ``mem_size``).  0 for a program with a value of WINDOW_LIMIT or
    more (``far`` operands: there a window could make an address wrap at 2**64)."""
    for s in steps:
        for bits in s.beats:
            b = unpack(RecordBeat, bits)
            if max(int(b.value0), int(b.value1), int(b.record.imm)) >= WINDOW_LIMIT:
                return 0
    digest = hashlib.sha1(f"{seed}/{[s.text for s in steps]}".encode()).digest()
    return (int.from_bytes(digest[:8], "little") % ((1 << 47) - 1) + 1) << 16


#: (offset, width) of a record beat's ``value0``
_VALUE0 = next((f.offset, f.width) for name, f in RecordBeat if name == "value0")


def _at_window(bits: int, base: int) -> int:
    """A record beat with ``base`` added to a B.IOR's register value (RegSrc0)."""
    b = unpack(RecordBeat, bits)
    if int(getattr(b.record.kind, "value", b.record.kind)) != RecordKind.B_IOR.value:
        return bits
    offset, width = _VALUE0
    mask = (1 << width) - 1
    value = ((bits >> offset & mask) + base) & mask
    return bits & ~(mask << offset) | value << offset


@dataclass
class GoldenStep:
    """One instruction as the golden Machine executes it."""
    line: int
    text: str
    beats: list                         # record beats (flat bits)
    fault: dict | None                  # {"name", "code", "message"} (a Fault does not pickle)
    names: list[str]
    live: list                          # [(name, TileImage)] after it
    write_bytes: int = 0                # bytes of the tiles it writes
    #: a TSTORE's global-memory writes: (addresses int64[], their bytes after it uint8[],
    #: whether each is defined bool[]: not when it came from a Null-padded tile byte)
    stored: tuple | None = None
    #: a TSTORE's footprint: (RegSrc0, stride, element bytes, "row" or "column")
    footprint: tuple | None = None


@dataclass
class ProgramResult:
    faults: list = field(default_factory=list)         # HDL fault code per instruction
    done_cycles: list = field(default_factory=list)
    record_cycles: list = field(default_factory=list)  # cycle its last record was taken
    first_writes: list = field(default_factory=list)   # its first tile write (None: it
                                                        # writes nothing)
    write_cycles: int = 0                               # cycles with a tile write
    last_write_cycle: int | None = None
    first_record_cycle: int | None = None
    mismatches: list = field(default_factory=list)     # strings, in program order
    checked: int = 0                                    # instructions checked
    cycles: int | None = None
    timed_out: bool = False
    waveform: str | None = None
    error: str | None = None
    window: int = 0                                     # where the RTL saw global memory


def golden_steps(program, regs: dict, mem: np.ndarray, profile: str = "finite",
                 lcfr: tuple[int, int] = DEFAULT_LCFR, arith: str = "integer",
                 records: bool = True, machine_out: list | None = None) -> list[GoldenStep]:
    """Run ``program`` ([(line, insn)]) on the Machine, up to and including its first
    fault.  A RegisterError (an unset scalar register) propagates, its message starting
    with the line.  ``records``: encode each instruction's block records (for the RTL).
    ``machine_out``: a list the Machine is appended to (its final memory and registers)."""
    machine = Machine(np.asarray(mem, dtype=np.uint8), regs, profile, LCFR(*lcfr), arith=arith)
    if machine_out is not None:
        machine_out.append(machine)
    steps = []
    for line, insn in program:
        try:
            beats = ([pack(RecordBeat, b) for b in record_beats(insn, machine.regs)]
                     if records else [])
            step = machine.execute(insn, line)
        except RegisterError as e:
            raise RegisterError(f"PROGRAM line {line}: {e}") from None
        except Fault as f:
            steps.append(GoldenStep(line, insn.text(), beats,
                                    {"name": f.name, "code": f.code, "message": f.message},
                                    [], machine.tiles.live()))
            break
        stored = footprint = None
        if step.stored is not None:
            stored = (step.stored, machine.memory[step.stored], machine.defined[step.stored])
            p = step.params
            dn = p.layout.source_dn
            dense = (p.valid_row if dn else p.valid_col) * p.esize
            footprint = (p.base, dense if p.stride is None else p.stride, p.esize,
                         "column" if dn else "row")
        steps.append(GoldenStep(line, insn.text(), beats, None, step.names,
                                machine.tiles.live(), sum(t.size for t in step.tiles), stored,
                                footprint))
    return steps


def _budget(programs, cfg: ProgramConfig) -> int:
    """The watchdog: 10 x (records + beats written + beats read back after each instruction)
    + 200 per instruction + 500 per program."""
    W = cfg.width
    steps = [s for prog in programs for s in prog]
    work = sum(len(s.beats) + s.write_bytes // W
               + (0 if s.stored is None else 2 * len(s.stored[0]) // 32 + 40)
               + (cfg.check == "each") * sum(img.size // W for _, img in s.live)
               for s in steps)
    return cfg.max_cycles or (stretched(10 * work, cfg.p_req_ready, cfg.p_resp_valid,
                                        cfg.p_record_valid)
                              + 200 * len(steps) + 500 * len(programs))


def _live_bits(live) -> dict[str, set[int]]:
    out = {q: set() for q in TILE_QUEUES}
    for name, _ in live:
        if "#" in name:
            q, k = name.split("#")
            out[q].add(int(k))
    return out


def _describe(q: str, idxs) -> str:
    return ", ".join(f"{q}#{k}" for k in sorted(idxs)) or "none"


def program_procs(programs: list[list[GoldenStep]], mem: np.ndarray, cfg: ProgramConfig,
                  results: list[ProgramResult]):
    """The bench processes (simulator-neutral, :mod:`tilecosim.sim.api`): the programs one
    after the other, the design reset for 2 cycles before each but the first."""
    W = cfg.width
    state = {"cycle": 0, "done": False, "in_reset": False}
    cur = {"res": results[0], "k": 0, "base": 0}
    clock = watchdog(state, _budget(programs, cfg),
                     lambda: setattr(cur["res"], "timed_out", True))
    source = Source("records", [], state, stall=Stall(cfg.seed, 0, cfg.p_record_valid))
    memory = np.array(mem, dtype=np.uint8)        # global memory: TSTOREs write it
    expected = np.array(mem, dtype=np.uint8)      # the machine's, after the checked step
    defined = np.ones(memory.size, dtype=bool)     # its defined bytes (the others: any value)
    read = memory_answer(memory, W, "the system", lambda: cur["base"])
    wr_fields = {name: (f.offset, f.width) for name, f in MemWrite(W)}

    def mem_write(bits, cycle):
        """A TSTORE's write, applied as it is taken: the next read sees it."""
        if state["in_reset"]:
            return
        bits = int(bits)
        addr, data, be = (bits >> wr_fields[k][0] & ((1 << wr_fields[k][1]) - 1)
                          for k in ("addr", "data", "be"))
        idx = np.flatnonzero(np.unpackbits(np.frombuffer(be.to_bytes(W // 8, "little"),
                                                         np.uint8), bitorder="little"))
        at, addr = addr, addr - cur["base"]
        if idx.size and (addr < 0 or addr + int(idx[-1]) >= memory.size):
            raise AssertionError(f"the system wrote {idx.size} B at {at:#x}, outside the "
                                 f"{memory.size}-byte memory at {cur['base']:#x}")
        memory[addr + idx] = np.frombuffer(data.to_bytes(W, "little"), np.uint8)[idx]

    def check_memory(where: str, res, step: GoldenStep) -> None:
        bad = np.flatnonzero((memory != expected) & defined)
        mine = set() if step.stored is None else set(step.stored[0][
            np.isin(step.stored[0], bad[:MAX_REPORTED])].tolist())
        for a in bad[:MAX_REPORTED]:
            a = int(a)
            what = ""
            if a in mine:                          # its footprint: which element
                base, stride, e, run = step.footprint
                k, rest = divmod(a - base, stride) if stride else (0, a - base)
                what = f" ({run} {k}, element {rest // e}, byte {rest % e} of the footprint)"
            elif step.stored is not None:
                what = " (outside the footprint)"
            res.mismatches.append(f"{where}: global memory byte {a:#x}{what}: expected "
                                  f"{int(expected[a]):#04x}, got {int(memory[a]):#04x}")
        if bad.size > MAX_REPORTED:
            res.mismatches.append(f"{where}: global memory: {bad.size - MAX_REPORTED} more "
                                  f"bytes differ")

    def complete(bits, cycle):
        if state["in_reset"]:
            return
        res = cur["res"]
        f = unpack(Completion, bits).fault
        res.faults.append(int(getattr(f, "value", f)))
        res.done_cycles.append(cycle)

    async def writes(port):
        """Counts the cycles with a tile write, and notes each instruction's first one: the
        writes come in program order, W bytes each, as many as the model's tiles have."""
        while not state["done"]:
            (w,) = await port.tick("wr_active")
            res = cur["res"]
            if w and not state["in_reset"]:
                cyc = state["cycle"] - 1
                steps = programs[cur["k"]]
                while (len(res.first_writes) < len(steps)
                       and steps[len(res.first_writes)].write_bytes == 0):
                    res.first_writes.append(None)
                if len(res.first_writes) < len(steps) and res.write_cycles == sum(
                        s.write_bytes // W for s in steps[:len(res.first_writes)]):
                    res.first_writes.append(cyc)
                res.write_cycles += 1
                res.last_write_cycle = cyc
    writes.background = True

    async def check(port, step: GoldenStep):
        res = cur["res"]
        where = f"after line {step.line} ({step.text})"
        check_memory(where, res, step)
        (bits,) = await port.tick("live")
        want = _live_bits(step.live)
        for q in TILE_QUEUES:
            got = {k + 1 for k in range(16) if bits >> (16 * QUEUE_CODES[q] + k) & 1}
            if got != want[q]:
                res.mismatches.append(f"{where}: queue {q}: live registers {_describe(q, got)}, "
                                      f"the model has {_describe(q, want[q])}")
        for name, img in step.live:
            if "#" not in name:
                continue
            q, k = name.split("#")
            words = img.size // W
            got = bytearray()
            status = None
            for w in range(words + 1):
                if w < words:
                    port.set("dbg_addr", pack(DebugAddr, {"queue": QUEUE_CODES[q],
                                                          "index": int(k), "word": w}))
                d, s = await port.tick("dbg_data", "dbg_status")
                if w == 0:
                    status = s
                if w > 0:
                    got += int(d or 0).to_bytes(W, "little")
            if status != LookupStatus.LIVE.value:
                res.mismatches.append(f"{where}: register {name}: the debug port says "
                                      f"{LookupStatus(status).name if status is not None else 'X'}, "
                                      f"the model has it live")
                continue
            got = np.frombuffer(bytes(got), dtype=np.uint8)
            bad = np.nonzero(img.valid & (got[:img.size] != img.data))[0]
            if bad.size:
                e = img.dtype.esize
                offs = tile_offsets(img.layout, img.rows, img.cols, esize=e)
                for b in bad[:MAX_REPORTED]:
                    elem, byte = divmod(int(b), e)
                    r, c = map(int, np.argwhere(offs == elem)[0])
                    res.mismatches.append(
                        f"{where}: register {name}, row {r}, column {c}, byte {byte}: "
                        f"expected {int(img.data[b]):#04x}, got {int(got[b]):#04x}")
                if bad.size > MAX_REPORTED:
                    res.mismatches.append(f"{where}: register {name}: "
                                          f"{bad.size - MAX_REPORTED} more bytes differ")
        res.checked += 1

    async def wait_done(port, n):
        while len(cur["res"].faults) < n and not state["done"]:
            await port.tick()

    async def driver(port):
        for k, steps in enumerate(programs):
            if k:
                state["in_reset"] = True
                port.set("rst", 1)
                await port.tick()
                await port.tick()
                port.set("rst", 0)
                state["in_reset"] = False
            cur["res"], cur["k"] = results[k], k
            cur["base"] = memory_window(steps, cfg.seed) if cfg.window else 0
            results[k].window = cur["base"]
            port.set("mem_size", min(mem.size + cur["base"], MASK64))
            memory[:] = mem                     # each program starts from the same memory
            expected[:] = mem
            defined[:] = True
            await run_one(port, steps, results[k])
            if state["done"]:
                return
        state["done"] = True

    async def run_one(port, steps, res):
        for i, step in enumerate(steps):
            accepted = []
            source.accepted = accepted
            await source.send(port, [_at_window(b, cur["base"]) for b in step.beats])
            if state["done"]:
                return
            res.record_cycles.append(accepted[-1])
            if res.first_record_cycle is None:
                res.first_record_cycle = accepted[0]
            if step.stored is not None:
                expected[step.stored[0]] = step.stored[1]
                defined[step.stored[0]] = step.stored[2]
            if cfg.check == "each":
                await wait_done(port, i + 1)
                if state["done"]:
                    return
                await check(port, step)
        await wait_done(port, len(steps))
        if cfg.check == "end" and steps and not state["done"]:
            await check(port, steps[-1])

    return [clock, writes, driver,
            Responder("req", "resp", state, read, latency=cfg.latency,
                      ready_stall=Stall(cfg.seed, 1, cfg.p_req_ready),
                      valid_stall=Stall(cfg.seed, 2, cfg.p_resp_valid)),
            Sink("mem_wr", state, mem_write, stall=Stall(cfg.seed, 4, cfg.p_req_ready)),
            Sink("done", state, complete, stall=Stall(cfg.seed, 5, cfg.p_req_ready))]


def program_setup(programs, mem, cfg: ProgramConfig):
    """(processes, results) for :func:`tilecosim.sim.runner.run_bench`."""
    results = [ProgramResult() for _ in programs]
    return program_procs(programs, mem, cfg, results), results


def simulate_programs(programs: list[list[GoldenStep]], mem: np.ndarray,
                      cfg: ProgramConfig = ProgramConfig(), timing: dict | None = None):
    """Run the golden steps' records of each program through the tile system on
    ``cfg.backend``, in one simulator start; one result per program."""
    mem = np.asarray(mem, dtype=np.uint8)

    def make():
        return TileSystem(width=cfg.width, profile=cfg.profile, lcfr=cfg.lcfr, depth=cfg.depth)
    results = run_bench(cfg.backend, make, "tile_system", program_setup, (programs, mem, cfg),
                        vcd=cfg.vcd, waves=cfg.waves, timing=timing,
                        key=repr((cfg.width, cfg.profile, tuple(cfg.lcfr), cfg.depth)))
    for res in results:
        if res.first_record_cycle is not None and res.last_write_cycle is not None:
            res.cycles = res.last_write_cycle - res.first_record_cycle + 1
    return results


def run_programs(programs: list[list[GoldenStep]], mem: np.ndarray,
                 cfg: ProgramConfig = ProgramConfig(), timing: dict | None = None):
    """Simulate and compare each program: [(result, problems)]."""
    results = simulate_programs(programs, mem, cfg, timing)
    return [(res, compare_program(steps, res, cfg)) for steps, res in zip(programs, results)]


def run_program(steps: list[GoldenStep], mem: np.ndarray, cfg: ProgramConfig = ProgramConfig(),
                timing: dict | None = None) -> tuple[ProgramResult, list[str]]:
    """Simulate one program and compare: (result, problems)."""
    return run_programs([steps], mem, cfg, timing)[0]


def compare_program(steps: list[GoldenStep], res: ProgramResult,
                    cfg: ProgramConfig) -> list[str]:
    """Every disagreement in program order -- fault codes, live registers, tile bytes, a
    time-out, a missing or an extra completion."""
    problems = []
    for i, step in enumerate(steps):
        want = step.fault["code"] if step.fault else 0
        got = res.faults[i] if i < len(res.faults) else None
        if got != want:
            problems.append(f"line {step.line} ({step.text}): {completion_label(got)} from the "
                            f"design, {fault_label(want)} from the model")
    problems += res.mismatches
    if len(res.faults) > len(steps):
        problems.append(f"{len(res.faults) - len(steps)} completions more than instructions")
    if res.timed_out:
        problems.append("the tile system did not finish within the watchdog; waveform: "
                        f"{res.waveform or cfg.vcd or cfg.waves}")
    return problems


def program_text_steps(text: str, regs: dict, mem, cfg: ProgramConfig) -> list[GoldenStep]:
    """Parse and run a program's text on the Machine."""
    return golden_steps(parse_program(text), regs, mem, cfg.profile, cfg.lcfr)

