"""The binary block records of the tile system, and the payloads its units share.

An instruction enters the tile system as its block template (docs/design.md D9), one record per
beat of :data:`RecordBeat`, the values of the scalar registers the record names beside it
(the scalar core, which would read them, is out of scope).  The last record of a block
carries ``end``.

==============  ===========================  ======================================
record          fields                       values
==============  ===========================  ======================================
BSTART.TMA      f0 = TLOAD (0) or TSTORE     --
                (3), f1 = dtype
BSTART.TEW      f0 = TADD (1) / TSUB (2)     --
B.DATR          f0 = Layout, f1 = PadValue   -- (a TSTORE's f1 is 0)
B.DIM           f0 = LB index 0..2, imm      value0 = the register (0 for ``zero``)
B.IOT           f0 = queue, f1 = last,       value0 = the size register's value when
                f2 = size in a register,     f2 = 1
                imm = literal size
B.IOR           f2 = RegSrc1 given           value0 = RegSrc0, value1 = RegSrc1
B.IOD           (dependencies: ignored)      --
B.IOS           f0 = queue, f1 = index,      --
                f2 = .reuse
==============  ===========================  ======================================

Codes: data types, layouts and pads of D9; queues T 0, U 1, M 2, N 3, ACC 4, S 5.
A TSTORE's source (the text's ``B.IOT last, T#1``) is a B.IOS record in binary, as a TADD
source is: ``BSTART.TMA TSTORE``, ``B.DATR``, ``B.DIM`` x 3, ``B.IOS T#1``, ``B.IOR``.
BSTART.TEW and B.IOS (a tile-register source) are this project's spelling for TADD/TSUB:
the seeds give no block template for them.  ``TADD T#2.reuse, T#3, ->U`` is
``BSTART.TEW TADD``, ``B.IOS T#2.reuse``, ``B.IOS T#3``, ``B.IOT last, ->U``.
"""

from amaranth.lib import data, enum

from tilecosim.model import tiles as _tiles
from tilecosim.model.asm import REG_MASK, ElementwiseInsn, TLoadInsn, TStoreInsn

__all__ = ["RecordKind", "Opcode", "Record", "RecordBeat", "TileMeta", "LookupStatus",
           "DebugAddr", "QUEUE_CODES", "QUEUE_NAMES", "record_beats", "QUEUE_DEPTH",
           "TILE_LAYOUT_CODES"]

QUEUE_DEPTH = _tiles.QUEUE_DEPTH
QUEUE_NAMES = ("T", "U", "M", "N", "ACC", "S")
QUEUE_CODES = {q: k for k, q in enumerate(QUEUE_NAMES)}
#: the storage layout of a tile register, as the RTL keeps it: a TLOAD's destination layout
TILE_LAYOUT_CODES = {"ND": 0, "NZ": 1, "ZN": 2}


class RecordKind(enum.Enum, shape=4):
    """The kind of a block-template record (D9): the header of a TLOAD (BSTART_TMA) or of a
    TADD/TSUB (BSTART_TEW), then its B.* records."""
    BSTART_TMA = 0
    BSTART_TEW = 1
    B_DATR = 2
    B_DIM = 3
    B_IOT = 4
    B_IOR = 5
    B_IOD = 6
    B_IOS = 7


class Opcode(enum.Enum, shape=2):
    """The instruction an assembled block is."""
    TLOAD = 0
    TADD = 1
    TSUB = 2
    TSTORE = 3


Record = data.StructLayout({
    "kind": RecordKind,
    "f0": 5,
    "f1": 5,
    "f2": 1,
    "imm": 64,
})

#: one beat of the record stream
RecordBeat = data.StructLayout({
    "record": Record,
    "value0": 64,
    "value1": 64,
    "end": 1,
})

#: what the register file keeps of each live tile (TADD/TSUB compare and use it)
TileMeta = data.StructLayout({
    "dtype": 5,
    "layout": 2,          # TILE_LAYOUT_CODES
    "log2_rows": 5,
    "log2_cols": 5,
    "log2_size": 5,
})


class LookupStatus(enum.Enum, shape=2):
    """A relative name resolved: LIVE, RELEASED (TileReleased), NEVER (written: TileReleased
    too, and also ACC and S, which hold no tile), ILLEGAL (not a register: IllegalInstruction)."""
    LIVE = 0
    RELEASED = 1
    NEVER = 2
    ILLEGAL = 3


#: the debug read port's address: a word of a tile register by relative name
DebugAddr = data.StructLayout({"queue": 3, "index": 5, "word": 13})


def _reg(regs, name: str) -> int:
    if name in ("zero", "x0"):
        return 0
    return int(regs[name]) & REG_MASK


def record_beats(insn, regs) -> list[dict]:
    """The record beats (dicts of :data:`RecordBeat`) of a TLOAD, TSTORE or TADD/TSUB, the scalar
    register values taken from ``regs`` (a RegisterError names a missing one: resolve the
    instruction first)."""
    if isinstance(insn, TLoadInsn):
        insn.resolve(regs)                      # raises RegisterError for an unset register
        beats = [{"record": {"kind": RecordKind.BSTART_TMA, "f0": Opcode.TLOAD.value,
                             "f1": insn.dtype.code}},
                 {"record": {"kind": RecordKind.B_DATR, "f0": int(insn.layout),
                             "f1": int(insn.pad)}}]
        for k, op in enumerate((insn.valid_col, insn.valid_row, insn.col)):
            beats.append({"record": {"kind": RecordKind.B_DIM, "f0": k,
                                     "imm": op.imm & REG_MASK},
                          "value0": _reg(regs, op.reg)})
        for k, (q, size) in enumerate(insn.dsts):
            in_reg = isinstance(size, str)
            beats.append({"record": {"kind": RecordKind.B_IOT, "f0": QUEUE_CODES[q],
                                     "f1": int(k == len(insn.dsts) - 1), "f2": int(in_reg),
                                     "imm": 0 if in_reg else size & REG_MASK},
                          "value0": _reg(regs, size) if in_reg else 0})
        beats.append({"record": {"kind": RecordKind.B_IOR, "f2": int(insn.stride is not None)},
                      "value0": _reg(regs, insn.base),
                      "value1": _reg(regs, insn.stride) if insn.stride else 0})
        if insn.dep_srcs or insn.dep_dst:
            beats.append({"record": {"kind": RecordKind.B_IOD}})
    elif isinstance(insn, TStoreInsn):
        insn.resolve(regs)                      # raises RegisterError for an unset register
        beats = [{"record": {"kind": RecordKind.BSTART_TMA, "f0": Opcode.TSTORE.value,
                             "f1": insn.dtype.code}},
                 {"record": {"kind": RecordKind.B_DATR, "f0": int(insn.layout)}}]
        for k, op in enumerate((insn.valid_col, insn.valid_row, insn.col)):
            beats.append({"record": {"kind": RecordKind.B_DIM, "f0": k,
                                     "imm": op.imm & REG_MASK},
                          "value0": _reg(regs, op.reg)})
        src = insn.src
        beats.append({"record": {"kind": RecordKind.B_IOS, "f0": QUEUE_CODES[src.queue],
                                 "f1": src.index or 0, "f2": int(src.reuse)}})
        beats.append({"record": {"kind": RecordKind.B_IOR, "f2": int(insn.stride is not None)},
                      "value0": _reg(regs, insn.base),
                      "value1": _reg(regs, insn.stride) if insn.stride else 0})
        if insn.dep_srcs or insn.dep_dst:
            beats.append({"record": {"kind": RecordKind.B_IOD}})
    elif isinstance(insn, ElementwiseInsn):
        beats = [{"record": {"kind": RecordKind.BSTART_TEW, "f0": Opcode[insn.op].value}}]
        for src in (insn.src0, insn.src1):
            beats.append({"record": {"kind": RecordKind.B_IOS, "f0": QUEUE_CODES[src.queue],
                                     "f1": src.index or 0, "f2": int(src.reuse)}})
        beats.append({"record": {"kind": RecordKind.B_IOT, "f0": QUEUE_CODES[insn.dst],
                                 "f1": 1}})
    else:
        raise TypeError(f"not an instruction: {insn!r}")
    for b in beats:
        b.setdefault("value0", 0)
        b.setdefault("value1", 0)
        b["end"] = 0
    beats[-1]["end"] = 1
    return beats
