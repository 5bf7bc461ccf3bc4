"""The golden machine: global memory, scalar registers and the tile register file.

:meth:`Machine.execute` runs one instruction atomically: it evaluates the
operands, checks the instruction (faults first: decode and parameters, then
the memory range, then tile allocation), computes the result, and only then
commits it to the register file.  A faulting instruction changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .asm import ElementwiseInsn, TLoadInsn, TStoreInsn, parse_line, parse_program
from .dtypes import PadValue, Profile
from .faults import Fault, IllegalInstruction
from .tiles import TileRegisterFile
from .tload import LCFR, TileImage, TLoadParams, tload, tload_reference
from .tstore import TStoreParams, plan_tstore, tstore, tstore_reference
from .vector import ARITH, elementwise

__all__ = ["Machine", "StepResult"]


@dataclass
class StepResult:
    insn: object
    params: TLoadParams | TStoreParams | None = None
    tiles: list[TileImage] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    #: a TSTORE's memory writes: the addresses it wrote (each once), and their count
    stored: np.ndarray | None = None


class Machine:
    """Global memory + scalar registers + tile register file.

    ``impl`` selects the TLOAD and TSTORE models: ``"fast"`` (vectorized, default) or
    ``"reference"`` (the seed's loops).  ``arith`` selects the TADD/TSUB arithmetic:
    ``"full"`` (default) or ``"integer"`` (the RTL tile system's: the floating-point forms
    are IllegalInstruction).
    """

    def __init__(self, memory: np.ndarray | bytes | int = 1 << 20, regs: dict | None = None,
                 profile: Profile | str = Profile.FINITE, lcfr: LCFR = LCFR(),
                 impl: str = "fast", arith: str = "full"):
        if isinstance(memory, int):
            memory = np.zeros(memory, dtype=np.uint8)
        self.memory = np.frombuffer(bytes(memory), dtype=np.uint8).copy() \
            if isinstance(memory, (bytes, bytearray)) else np.array(memory, dtype=np.uint8)
        # (a copy: TSTORE writes it, and the caller's image stays the initial memory)
        #: which memory bytes are defined: a TSTORE of bytes Null padding left undefined
        #: (D5) leaves its footprint's copies of them undefined
        self.defined = np.ones(self.memory.size, dtype=bool)
        self.regs: dict[str, int] = dict(regs or {})
        self.profile = Profile(profile)
        self.lcfr = lcfr
        self.tiles = TileRegisterFile(lcfr)
        if impl not in ("fast", "reference"):
            raise ValueError(f"impl={impl!r}: choose 'fast' or 'reference'")
        self._tload = tload if impl == "fast" else tload_reference
        self._tstore = tstore if impl == "fast" else tstore_reference
        if arith not in ARITH:
            raise ValueError(f"arith={arith!r}: choose one of {', '.join(map(repr, ARITH))}")
        self.arith = arith
        self._count = 0             # instructions run

    def execute(self, insn: TLoadInsn | TStoreInsn | ElementwiseInsn | str,
                line: int | None = None) -> StepResult:
        """Run one instruction.  ``line``: its line in the program, which a later
        TileAllocation fault names (default: its position among the instructions this
        machine has run, 1 for the first)."""
        if isinstance(insn, str):
            insn = parse_line(insn)
        self._count += 1
        line = self._count if line is None else line
        if isinstance(insn, TLoadInsn):
            params = insn.resolve(self.regs)
            images = self._tload(self.memory, params, self.profile, self.lcfr)
            if not self.defined.all():
                self._undefined_reads(params, images)
            names = self.tiles.commit([], images, line)
            return StepResult(insn, params, images, names)
        if isinstance(insn, TStoreInsn):
            # the source first (TileReleased), then every rule of the store, then memory
            # and the release at commit: a fault writes nothing and releases nothing
            params = insn.resolve(self.regs)
            src = self.tiles.read(insn.src)
            name = f"the source {insn.src.queue}#{insn.src.index}"
            plan_tstore(params, src, self.memory.size, name)
            stored = np.unique(np.asarray(self._tstore(self.memory, params, src, name,
                                                       self.defined), dtype=np.int64))
            self.tiles.commit([insn.src], [], line)
            return StepResult(insn, params, [], [], stored)
        if isinstance(insn, ElementwiseInsn):
            a = self.tiles.read(insn.src0)
            b = self.tiles.read(insn.src1)
            if insn.dst not in ("T", "U", "M", "N"):
                raise IllegalInstruction("dst", insn.dst, f"{insn.op} writes T, U, M or N")
            out = elementwise(insn.op, a, b, insn.dst, self.arith)
            names = self.tiles.commit([insn.src0, insn.src1], [out], line)
            return StepResult(insn, None, [out], names)
        raise TypeError(f"not an instruction: {insn!r}")

    def _undefined_reads(self, params: TLoadParams, images: list[TileImage]) -> None:
        """Tile bytes loaded from undefined memory bytes become undefined: the same TLOAD,
        Null-padded, of the defined flags shows where each loaded byte came from."""
        flags = tload(self.defined.astype(np.uint8), replace(params, pad=PadValue.Null),
                      self.profile, self.lcfr)
        for img, f in zip(images, flags):
            img.valid = img.valid & ~(f.valid & (f.data == 0))

    def run(self, program: str) -> list[StepResult]:
        """Run every line; a fault stops the program and is re-raised with its line."""
        results = []
        for lineno, insn in parse_program(program):
            try:
                results.append(self.execute(insn, lineno))
            except Fault as f:
                f.lineno = lineno
                raise
        return results
