"""Programs of the tile system (seeds 000 and 002, D15): TLOAD, TSTORE, TADD and TSUB over
the tile register file and global memory, checked against the golden Machine after every
instruction.

A scenario is a program of 1..64 instructions and its scalar registers
(:func:`tilecosim.model.scenarios.random_program`).

Coverage bins (48)
  ``program.layout:LAYOUT``   -- a TLOAD of each layout through the system
  ``program.store:LAYOUT``    -- a TSTORE of each layout
  ``program.store:whole``, ``program.store:partial`` -- a TSTORE of the register's whole
                                 matrix, or of a part of it
  ``program.store_source:S``  -- a TSTORE's source kept (``.reuse``) or released
  ``program.store:readback``  -- a TLOAD whose source covers bytes a TSTORE wrote before it
  ``program.outputs:multi``   -- a TLOAD with 2..8 outputs
  ``program.lane:ESIZE``      -- a TADD/TSUB on each lane width (b4x2, b8, b16, b32, b64)
  ``program.op:OP``           -- TADD, TSUB
  ``program.source:S``        -- a source kept (``.reuse``) or released
  ``program.index:16``        -- a source read as ``Q#16``
  ``program.queue:full``      -- a queue with all 16 registers live
  ``program.queue:wrap``      -- a queue of more than 16 allocations: released registers
                                 pushed out of its 16 names (the ring rule, D7)
  ``program.fault:KIND``      -- each fault a program can end with
                                 (:data:`~tilecosim.model.scenarios.PROGRAM_FAULTS`;
                                 TileAllocation ``full``: 16 live registers, ``ring``:
                                 a live Q#16 with free slots);
                                 ``far``: a TLOAD with operands over 32 bits, whatever
                                 its fault; ``TSTORE/..``: each fault of a TSTORE,
                                 and ``TSTORE/far`` one with operands over 32 bits
                                 (after a legal one-run TSTORE with such a stride)
  ``program.fault_after:N``   -- the fault at instruction 1, 2..8, 9..32, 33..
"""

from __future__ import annotations

import random
import shlex
from dataclasses import dataclass

import numpy as np

from tilecosim.hdl.tiles.system import TileSystem
from tilecosim.hdl.tstore.engine import TStoreEngine
from tilecosim.model.asm import TLoadInsn, TStoreInsn, parse_program
from tilecosim.model.display import seeded_memory
from tilecosim.model.dtypes import dtype
from tilecosim.model.faults import Fault
from tilecosim.model.machine import Machine
from tilecosim.model.scenarios import INT_TYPES, PROGRAM_FAULTS, random_program
from tilecosim.model.tiles import QUEUE_DEPTH
from tilecosim.model.tload import LCFR, TILE_QUEUES, TLoadLayout, plan
from tilecosim.sim.benches.program import ProgramConfig, golden_steps, run_programs

from .base import Operation, Outcome, Top, Unit
from .tload import is_far

__all__ = ["Program", "ProgramItem", "program_bins", "fault_kind", "MEM_SIZE"]

MEM_SIZE = 1 << 16
LCFR_MAX = 4096
LANES = ("b4x2", "b8", "b16", "b32", "b64")
FAULT_AFTER = ("1", "2..8", "9..32", "33..")


@dataclass(frozen=True)
class ProgramItem:
    """One program: its lines and the scalar registers it reads."""
    lines: tuple[str, ...]
    regs: tuple[tuple[str, int], ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def __len__(self):
        return len(self.lines)


def fault_kind(f: Fault, insn=None) -> str:
    """The ``program.fault`` bin of a fault (of the instruction ``insn``)."""
    msg = f.message
    if isinstance(insn, TStoreInsn):
        if f.name == "IllegalParameter":
            return {"DataType": "TSTORE/DataType", "RegSrc1": "TSTORE/overlap"}.get(
                f.field, "TSTORE/shape")
        return f"TSTORE/{f.name}"
    if f.name == "TileReleased":
        return ("TileReleased/never" if "never been written" in msg or "holds no tile" in msg
                else "TileReleased/released")
    if f.name == "IllegalInstruction":
        return "IllegalInstruction/float" if "arithmetic" in msg else "IllegalInstruction/dst"
    if f.name == "IllegalParameter":
        return "IllegalParameter/lcfr" if "LCFR" in msg else "IllegalParameter/shape"
    if f.name == "TileAllocation":
        return "TileAllocation/full" if "is full" in msg else "TileAllocation/ring"
    return f.name


def is_far_store(p) -> bool:
    """Does an operand of the TSTORE ``p`` lie beyond 32 bits?"""
    return max(p.valid_col, p.valid_row, p.col or 0, p.base, p.stride or 0) >= 1 << 32


def _after(n: int) -> str:
    return "1" if n == 1 else "2..8" if n <= 8 else "9..32" if n <= 32 else "33.."


def _lane(dt) -> str:
    return "b4x2" if dt.name.endswith("x2") else f"b{8 * dt.esize}"


def program_bins(item: ProgramItem, mem_size: int = MEM_SIZE) -> tuple[Fault | None, list[str]]:
    """(the fault that ends the program or None, the bins it hits), from the golden Machine."""
    m = Machine(np.zeros(mem_size, np.uint8), dict(item.regs), lcfr=LCFR(256, LCFR_MAX),
                arith="integer")
    bins: set[str] = set()
    allocations = dict.fromkeys(TILE_QUEUES, 0)
    stored = np.zeros(mem_size, dtype=bool)          # bytes a TSTORE wrote so far
    for n, (line, insn) in enumerate(parse_program(item.text), 1):
        src = m.tiles.read(insn.src) if isinstance(insn, TStoreInsn) and \
            m.tiles.is_live(insn.src.queue, insn.src.index) else None
        try:
            step = m.execute(insn, line)
        except Fault as f:
            far = isinstance(insn, TLoadInsn) and is_far(insn.resolve(m.regs))
            kind = "far" if far else fault_kind(f, insn)
            if isinstance(insn, TStoreInsn) and is_far_store(insn.resolve(m.regs)):
                kind = "TSTORE/far"
            bins |= {f"program.fault:{kind}", f"program.fault_after:{_after(n)}"}
            return f, sorted(bins)
        if isinstance(insn, TLoadInsn):
            bins.add(f"program.layout:{insn.layout.name}")
            if len(insn.dsts) > 1:
                bins.add("program.outputs:multi")
            span = plan(step.params, mem_size, m.lcfr).src_span()
            if span is not None and stored[span[0]:span[1] + 1].any():
                bins.add("program.store:readback")
        elif isinstance(insn, TStoreInsn):
            p = step.params
            whole = p.valid_row == src.rows and p.valid_col == src.cols
            bins |= {f"program.store:{insn.layout.name}",
                     f"program.store:{'whole' if whole else 'partial'}",
                     f"program.store_source:{'reuse' if insn.src.reuse else 'release'}"}
            stored[step.stored] = True
        else:
            bins |= {f"program.op:{insn.op}", f"program.lane:{_lane(step.tiles[0].dtype)}"}
            for src in (insn.src0, insn.src1):
                bins.add(f"program.source:{'reuse' if src.reuse else 'release'}")
                if src.index == 16:
                    bins.add("program.index:16")
        if any(m.tiles.free_slots(q) == 0 for q in TILE_QUEUES):
            bins.add("program.queue:full")
        for name in step.names:
            allocations[name[0]] += 1
        if max(allocations.values()) > QUEUE_DEPTH:
            bins.add("program.queue:wrap")
    return None, sorted(bins)


def _config(backend: str, seed: int, stall: float, width: int = 32):
    ok = 1 - stall
    return ProgramConfig(seed=seed, p_req_ready=ok, p_resp_valid=ok, p_record_valid=ok,
                         backend=backend, lcfr=(256, LCFR_MAX), width=width)


def _system(width: int):
    def make(profile: str = "finite"):
        return TileSystem(width=width, profile=profile)
    return make


def _tstore(width: int):
    def make(profile: str = "finite"):
        return TStoreEngine(width=width)
    return make


class Program(Operation):
    name = "program"
    seed_name = "tile system"
    tops = (Top("tstore_engine", _tstore(32), "TSTORE engine, W = 32"),
            Top("tstore_engine_w64", _tstore(64), "TSTORE engine, W = 64"),
            Top("tstore_engine_w128", _tstore(128), "TSTORE engine, W = 128"),
            Top("tile_system", _system(32),
                "tile system: tile register file + TLOAD + TSTORE + TADD/TSUB, W = 32",
                parts=(("store", "TStoreEngine"),)))
    tests = ("tests/hdl/test_tiles.py",)
    # (the tile system's area is the bench's tiles part: system, register file, ALU)
    units = (Unit("TileSystem", "tiles/system.py", proof="system"),
             Unit("RecordAssembler", "tiles/records.py", proof="records", quick=True),
             Unit("TileRegisterFile", "tiles/regfile.py"),
             Unit("ElementwiseALU", "tiles/elementwise.py"),
             Unit("TStoreEngine", "tstore/engine.py", ("tests/hdl/test_tstore.py",),
                  area=(("tstore_engine (W = 32)", {"width": 32}),
                        ("tstore_engine (W = 64)", {"width": 64}),
                        ("tstore_engine (W = 128)", {"width": 128})), proof="tstore"))
    regress = True
    widths = (32, 64, 128)
    regress_default = False         # whole programs are slow: regress --ops program
    batch = 16

    def bins(self) -> list[str]:
        return ([f"program.layout:{lay.name}" for lay in TLoadLayout]
                + ["program.outputs:multi"]
                + [f"program.store:{lay.name}" for lay in TLoadLayout]
                + ["program.store:whole", "program.store:partial", "program.store:readback",
                   "program.store_source:reuse", "program.store_source:release"]
                + [f"program.lane:{e}" for e in LANES]
                + ["program.op:TADD", "program.op:TSUB", "program.source:reuse",
                   "program.source:release", "program.index:16", "program.queue:full",
                   "program.queue:wrap"]
                + [f"program.fault:{k}" for k in PROGRAM_FAULTS]
                + [f"program.fault_after:{a}" for a in FAULT_AFTER])

    def draw(self, rng: random.Random, hint: str | None):
        point, _, value = (hint or "").partition(":")
        kw: dict = {}
        if point == "program.layout":
            kw["layout"] = TLoadLayout[value]
        elif point == "program.store" and value in TLoadLayout.__members__:
            kw.update(layout=TLoadLayout[value], store_layout=TLoadLayout[value])
        elif point in ("program.store", "program.store_source"):
            kw["stores"] = 0.4
        elif point == "program.lane":
            kw["dtype"] = rng.choice([t for t in INT_TYPES if _lane_name(t) == value])
        elif hint == "program.index:16":
            kw.update(index16=True, length=rng.randint(18, 40))
        elif hint == "program.queue:full":
            kw["pressure"] = True
        elif hint == "program.queue:wrap":
            kw["length"] = rng.randint(24, 64)
        elif point == "program.fault":
            kw["fault"] = value
        elif point == "program.fault_after":
            kw["fault"] = rng.choice(PROGRAM_FAULTS if value != "1" else
                                     ("IllegalParameter/lcfr", "OutOfBounds",
                                      "TileReleased/never"))
            lo, hi = {"1": (0, 0), "2..8": (1, 6), "9..32": (8, 30), "33..": (32, 60)}[value]
            kw["length"] = rng.randint(lo, hi)
        elif rng.random() < 0.3:
            # a third of them far: wide operands are what toggles the upper bits of the
            # 64-bit fields, from the record assembler to the decoder; no legal program does
            kw["fault"] = "far" if rng.random() < 1 / 3 else rng.choice(PROGRAM_FAULTS)
        for _ in range(20):
            lines, regs = random_program(rng, MEM_SIZE, lcfr_max=LCFR_MAX, **kw)
            item = ProgramItem(tuple(lines), tuple(sorted(regs.items())))
            fault, bins = program_bins(item)
            if hint is None or hint in bins:
                break
        return item, fault, bins

    def image(self, seed: int):
        return seeded_memory(seed, MEM_SIZE)

    def run(self, items, backend, image, seed, stall) -> Outcome:
        cfg = _config(backend, seed, stall, self.width)
        programs = [golden_steps(parse_program(it.text), dict(it.regs), image, cfg.profile,
                                 cfg.lcfr) for it in items]
        got = run_programs(programs, image, cfg)
        problems, cycles, ideal, waveform = {}, 0, 0, None
        for i, (res, probs) in enumerate(got):
            if probs:
                problems[i] = probs[0] + (f" (and {len(probs) - 1} more)" if len(probs) > 1
                                          else "")
            if res.timed_out:
                waveform = res.waveform
            cycles += res.cycles or 0
            ideal += res.write_cycles
        return Outcome(problems, waveform, cycles, ideal)

    def repro(self, item, backend, mem_seed, image_path, stall, seed) -> str:
        lines = " ".join(shlex.quote(x) for x in item.lines)
        regs = " ".join(f"--reg {k}={v}" for k, v in item.regs)
        tail = f" --stall {stall:g}" if stall else ""
        return (f"printf '%s\\n' {lines} | tilecosim run - {regs} --mem-seed {mem_seed} "
                f"--mem-size {MEM_SIZE} --lcfr 256:{LCFR_MAX} --backend {backend} "
                f"--seed {seed}{tail}" + (f" --width {self.width}" if self.width != 32 else ""))

    def cross_check(self, backend: str, harness: bool = False) -> dict:
        """The seed's example in integer types, a TLOAD of every layout with two outputs,
        TADD/TSUB of every lane, and a program that ends in TileAllocation; with
        back-pressure on every port."""
        texts = _CROSS_PROGRAMS
        mem = seeded_memory(9, MEM_SIZE)
        cfg = _config(backend, 4, 0.2)
        programs = [golden_steps(parse_program(t), dict(_CROSS_REGS), mem, cfg.profile, cfg.lcfr)
                    for t in texts]
        got = run_programs(programs, mem, cfg)
        out = {}
        for k, (res, probs) in enumerate(got):
            assert not probs, "\n".join(probs)
            o = res.first_record_cycle
            out[k] = {"done": [c - o for c in res.done_cycles], "faults": res.faults,
                      "write cycles": res.write_cycles}
        return out


def _lane_name(t: str) -> str:
    return _lane(dtype(t))


_CROSS_REGS = (("a0", 0), ("a1", 512), ("a2", 1024), ("a3", 8192), ("t0", 96))
_CROSS_PROGRAMS = (
    # the seed's tile-register example, in integer types
    "TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [a0], ->T<512>\n"
    "TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [a1], ->T<512>\n"
    "TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [a2], ->T<512>\n"
    "TADD T#2.reuse, T#3, ->U\n"
    "TSUB T#2, T#1, ->U\n",
    # every layout with two outputs, then TADD/TSUB of every lane
    "TLOAD.ND2NZ <LB0:30, LB1:14, LB2:32, S16, Max>, [a0, t0], ->T<512>, U<512>\n"
    "TLOAD.ND2ZN <LB0:64, LB1:30, S8, Min>, [a1], ->M<1KB>, M<1KB>\n"
    "TLOAD.DN2NZ <LB0:8, LB1:32, S32, Null>, [a2], ->N<512>, N<512>\n"
    "TLOAD.DN2ZN <LB0:16, LB1:16, U32, Zero>, [a3], ->T<512>, T<512>\n"
    "TLOAD.NORM <LB0:64, LB1:4, U64, Max>, [a0], ->U<1KB>, U<1KB>\n"
    "TADD M#1.reuse, M#2.reuse, ->T\n"
    "TSUB N#2, N#1, ->T\n"
    "TADD U#1, U#2, ->U\n"
    "TLOAD.NORM <LB0:256, LB1:2, S4x2, Min>, [a1], ->N<256>, N<256>\n"
    "TSUB N#1, N#2.reuse, ->M\n"
    "TADD T#5, T#5.reuse, ->T\n",
    # a queue filled: 16 TLOADs, then one too many
    "".join("TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->M<256>\n" for _ in range(17)),
)
