"""TLOAD and TSTORE assembler and disassembler (seed 000; docs/design.md D9, D15), and the
program-line parser.

Assembly syntax of the seed::

    TLOAD.Layout <LB0:ValidCol, LB1:ValidRow, LB2:Col, DataType, PadValue>,
                 [RegSrc0, RegSrc1], DepSrc0, DepSrc1, DepSrc2,
                 ->DstTile0<Size>, ..., DstTile7<Size>, DepDst

* ``.Layout`` defaults to NORM; ``LB1`` to 1; ``LB2`` to ValidCol; PadValue to Null;
  ``RegSrc1`` to "dense".  LB fields may come in any order, each at most once.
* An LB operand is what ``B.DIM reg, imm`` can hold: ``100``, ``a0``, ``a1+10``, ``a1-2``.
* A size is a literal (``2048``, ``2KB``, ``0x800``) or a register (``a1``).
* Numbers are 64-bit fields: a literal above 2**64-1 is an error, not wrapped; ``reg+imm``
  is a 64-bit add (it wraps, as the register arithmetic does).
* The arrow may also be repeated before each destination, as the block template writes
  ``B.IOT ->T<8KB>`` once per output: ``->T<8KB>, ->T<8KB>`` = ``->T<8KB>, T<8KB>``.  The
  canonical text (:meth:`TLoadInsn.text`) writes it once.
* Dependencies (our spelling; the seed gives none) are ``D<n>`` labels: up to
  three before the destinations, one (DepDst) after them.
* Comments start with ``;`` or with a ``#`` that does not follow a name
  (``T#2`` is a tile register).

TSTORE (D15) reads one tile register and writes memory::

    TSTORE.Layout <LB0:ValidCol, LB1:ValidRow, LB2:Col, DataType>, T#k[.reuse],
                  [RegSrc0, RegSrc1], DepSrc0, DepSrc1, DepSrc2, ->DepDst

* the same selectors, LB fields, defaults and operands as TLOAD; no PadValue and no
  destination register; the comma after ``>`` is optional, as the Linx LLVM toolchain writes
  ``TSTORE.NORM <...> T#1, [a1, a2]``;
* up to three dependencies after the sources, and DepDst after an arrow (``->d``, the
  toolchain's spelling, or ``->D7``).

The block template (D9) is a list of :class:`BlockRecord`; :func:`disassemble`
turns the records back into the same :class:`TLoadInsn`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from .dtypes import DTYPES, DataType, PadValue, dtype as _dtype
from .tiles import TileRef, QUEUE_DEPTH, parse_tile_ref
from .tload import MAX_OUTPUTS, TLoadLayout, TLoadParams
from .tstore import TStoreParams

__all__ = ["AsmError", "RegisterError", "Operand", "TLoadInsn", "TStoreInsn", "ElementwiseInsn",
           "BlockRecord", "assemble", "disassemble", "parse_line", "parse_tload", "parse_block",
           "parse_program", "parse_transfer", "SCALAR_REGS", "format_size", "records_text", "params_to_asm",
           "parse_int"]

REG_BITS = 64
REG_MASK = (1 << REG_BITS) - 1
SCALAR_REGS = frozenset(
    ["zero", "ra", "sp", "gp", "tp", "fp"]
    + [f"x{i}" for i in range(32)] + [f"a{i}" for i in range(8)]
    + [f"t{i}" for i in range(7)] + [f"s{i}" for i in range(12)])
QUEUES = ("T", "U", "M", "N", "ACC", "S")


def parse_int(text: str) -> int:
    """An integer as a user types it, in assembly and on the command line alike: decimal
    (leading zeros allowed: ``016`` is 16), ``0x``, ``0o`` or ``0b``, with ``_`` between
    digits; ValueError otherwise."""
    text = text.strip()
    try:
        return int(text, 0)
    except ValueError:
        return int(text, 10)


class AsmError(ValueError):
    """A malformed line: the message quotes the line and points at the column."""

    def __init__(self, message: str, line: str, col: int, lineno: int | None = None):
        self.reason = message
        self.line = line
        self.col = col
        self.lineno = lineno
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"line {self.lineno}, " if self.lineno else ""
        return (f"{where}column {self.col + 1}: {self.reason}\n"
                f"  {self.line}\n  {' ' * self.col}^")


class RegisterError(ValueError):
    """An operand names a scalar register that has no value."""


# --- operands ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Operand:
    """``reg + imm`` -- the value a ``B.DIM reg, imm`` record holds."""
    reg: str = "zero"
    imm: int = 0

    def value(self, regs: Mapping[str, int]) -> int:
        return (_reg_value(self.reg, regs) + self.imm) & REG_MASK

    def __str__(self) -> str:
        if self.reg == "zero":
            return str(self.imm)
        if self.imm == 0:
            return self.reg
        return f"{self.reg}{'+' if self.imm > 0 else '-'}{abs(self.imm)}"


def _reg_value(reg: str, regs: Mapping[str, int]) -> int:
    if reg in ("zero", "x0"):
        return 0
    if reg not in regs:
        raise RegisterError(f"register {reg} has no value (set it, e.g. --reg {reg}=64)")
    return int(regs[reg]) & REG_MASK


def format_size(size: int | str) -> str:
    if isinstance(size, str):
        return size
    return f"{size // 1024}KB" if size % 1024 == 0 and size else str(size)


@dataclass(frozen=True)
class TLoadInsn:
    """A TLOAD as written: operands are registers and immediates, not yet values."""
    layout: TLoadLayout
    dtype: DataType
    valid_col: Operand
    dsts: tuple[tuple[str, int | str], ...]      # (queue, size literal or register)
    base: str
    valid_row: Operand = Operand("zero", 1)
    col: Operand | None = None                   # None only while parsing: = valid_col
    pad: PadValue = PadValue.Null
    stride: str | None = None
    dep_srcs: tuple[str, ...] = ()
    dep_dst: str | None = None

    def __post_init__(self):
        if self.col is None:
            object.__setattr__(self, "col", self.valid_col)

    def resolve(self, regs: Mapping[str, int]) -> TLoadParams:
        """Evaluate every operand with the scalar register values."""
        outputs = tuple((q, s if isinstance(s, int) else _reg_value(s, regs))
                        for q, s in self.dsts)
        return TLoadParams(layout=self.layout, dtype=self.dtype, pad=self.pad,
                           valid_col=self.valid_col.value(regs),
                           valid_row=self.valid_row.value(regs),
                           col=self.col.value(regs),
                           base=_reg_value(self.base, regs),
                           stride=None if self.stride is None else _reg_value(self.stride, regs),
                           outputs=outputs)

    def text(self) -> str:
        """Canonical assembly text."""
        src = f"[{self.base}" + (f", {self.stride}]" if self.stride else "]")
        deps = "".join(f", {d}" for d in self.dep_srcs)
        dsts = ", ".join(f"{q}<{format_size(s)}>" for q, s in self.dsts)
        tail = f", {self.dep_dst}" if self.dep_dst else ""
        return (f"TLOAD.{self.layout.name} <LB0:{self.valid_col}, LB1:{self.valid_row}, "
                f"LB2:{self.col}, {self.dtype.name}, {self.pad.name}>, {src}{deps}, "
                f"->{dsts}{tail}")

    __str__ = text

    def fields(self) -> dict:
        """Decoded fields, by the seed's names."""
        return {"Layout": self.layout.name, "DataType": self.dtype.name,
                "PadValue": self.pad.name, "ValidCol": str(self.valid_col),
                "ValidRow": str(self.valid_row), "Col": str(self.col),
                "RegSrc0": self.base, "RegSrc1": self.stride or "(dense)",
                **{f"DstTile{k}": f"{q}<{format_size(s)}>" for k, (q, s) in enumerate(self.dsts)},
                "DepSrc": ", ".join(self.dep_srcs) or "(none)", "DepDst": self.dep_dst or "(none)"}

    def records(self) -> list["BlockRecord"]:
        return assemble(self)


@dataclass(frozen=True)
class TStoreInsn:
    """A TSTORE as written (D15): operands are registers and immediates, not yet values."""
    layout: TLoadLayout
    dtype: DataType
    valid_col: Operand
    src: TileRef
    base: str
    valid_row: Operand = Operand("zero", 1)
    col: Operand | None = None                   # None only while parsing: = valid_col
    stride: str | None = None
    dep_srcs: tuple[str, ...] = ()
    dep_dst: str | None = None

    def __post_init__(self):
        if self.col is None:
            object.__setattr__(self, "col", self.valid_col)

    def resolve(self, regs: Mapping[str, int]) -> TStoreParams:
        """Evaluate every operand with the scalar register values (the source register is
        resolved by the tile register file)."""
        return TStoreParams(layout=self.layout, dtype=self.dtype,
                            valid_col=self.valid_col.value(regs),
                            valid_row=self.valid_row.value(regs), col=self.col.value(regs),
                            base=_reg_value(self.base, regs),
                            stride=None if self.stride is None else _reg_value(self.stride, regs))

    def text(self) -> str:
        """Canonical assembly text."""
        src = f"[{self.base}" + (f", {self.stride}]" if self.stride else "]")
        deps = "".join(f", {d}" for d in self.dep_srcs)
        tail = f", ->{self.dep_dst}" if self.dep_dst else ""
        return (f"TSTORE.{self.layout.name} <LB0:{self.valid_col}, LB1:{self.valid_row}, "
                f"LB2:{self.col}, {self.dtype.name}>, {self.src}, {src}{deps}{tail}")

    __str__ = text

    def fields(self) -> dict:
        """Decoded fields, by the manual's names."""
        return {"Layout": self.layout.name, "DataType": self.dtype.name,
                "ValidCol": str(self.valid_col), "ValidRow": str(self.valid_row),
                "Col": str(self.col), "SrcTile": str(self.src),
                "RegSrc0": self.base, "RegSrc1": self.stride or "(dense)",
                "DepSrc": ", ".join(self.dep_srcs) or "(none)", "DepDst": self.dep_dst or "(none)"}

    def records(self) -> list["BlockRecord"]:
        return assemble(self)


@dataclass(frozen=True)
class ElementwiseInsn:
    """``TADD T#2.reuse, T#3, ->U`` (and TSUB)."""
    op: str
    src0: TileRef
    src1: TileRef
    dst: str

    def text(self) -> str:
        return f"{self.op} {self.src0}, {self.src1}, ->{self.dst}"

    __str__ = text


@dataclass(frozen=True)
class BlockRecord:
    """One instruction of the block template, e.g. ``B.DIM a1, 10, ->LB2``."""
    op: str
    args: tuple[str, ...] = field(default_factory=tuple)

    def text(self) -> str:
        return f"{self.op} {', '.join(self.args)}".rstrip()

    __str__ = text


# --- tokenizer ----------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<arrow>->)
  | (?P<num>0[xX][0-9a-fA-F_]*|0[bB][01][01_]*|0[oO][0-7][0-7_]*|\d[\d_]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[<>,\[\]:+\-.#])
""", re.VERBOSE)


@dataclass
class _Tok:
    kind: str
    text: str
    col: int


def _tokenize(line: str, lineno: int | None) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(line):
        ch = line[pos]
        if ch == ";" or (ch == "#" and (pos == 0 or not (line[pos - 1].isalnum()
                                                       or line[pos - 1] == "_"))):
            break                                   # comment to end of line
        m = _TOKEN.match(line, pos)
        if not m:
            raise AsmError(f"unexpected character {ch!r}", line, pos, lineno)
        if m.lastgroup != "ws":
            toks.append(_Tok(m.lastgroup, m.group(), pos))
        pos = m.end()
    toks.append(_Tok("end", "", len(line.rstrip())))
    return toks


class _Parser:
    def __init__(self, line: str, lineno: int | None = None):
        self.line, self.lineno = line, lineno
        self.toks = _tokenize(line, lineno)
        self.i = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def error(self, msg: str, tok: _Tok | None = None):
        tok = tok or self.tok
        raise AsmError(msg, self.line, tok.col, self.lineno)

    def next(self) -> _Tok:
        t = self.tok
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        return self.tok.text == text

    def expect(self, text: str, what: str) -> _Tok:
        if not self.at(text):
            found = self.tok.text or "end of line"
            self.error(f"expected '{text}' {what}, found '{found}'")
        return self.next()

    def number(self, what: str) -> int:
        if self.tok.kind != "num":
            self.error(f"expected a number for {what}, found '{self.tok.text or 'end of line'}'")
        t = self.next()
        try:
            value = parse_int(t.text)
        except ValueError:
            if t.text.isdigit():         # beyond Python's 4300-digit conversion limit
                self.error(f"{what} {t.text[:20]}... does not fit a 64-bit field "
                           f"(0..{REG_MASK})", t)
            self.error(f"malformed number '{t.text}' for {what} (decimal, 0x, 0o or 0b)", t)
        if value > REG_MASK:
            self.error(f"{what} {value} does not fit a 64-bit field (0..{REG_MASK})", t)
        return value

    def register(self, what: str) -> str:
        t = self.tok
        if t.kind != "name" or t.text not in SCALAR_REGS:
            self.error(f"expected a scalar register for {what} (a0..a7, t0..t6, s0..s11, "
                       f"x0..x31, zero), found '{t.text or 'end of line'}'")
        return self.next().text

    def operand(self, what: str) -> Operand:
        """``imm`` | ``reg`` | ``reg+imm`` | ``reg-imm``."""
        t = self.tok
        if t.kind == "num":
            return Operand("zero", self.number(what))
        reg = self.register(what)
        if self.at("+") or self.at("-"):
            sign = 1 if self.next().text == "+" else -1
            return Operand(reg, sign * self.number(what))
        return Operand(reg, 0)

    def size(self, what: str) -> int | str:
        t = self.tok
        if t.kind == "name" and t.text in SCALAR_REGS:
            return self.next().text
        if t.kind != "num":
            self.error(f"expected a size for {what} (e.g. 2KB, 512, or a register)")
        value = self.number(what)
        unit = self.tok
        if unit.kind == "name" and unit.col == t.col + len(t.text):
            mult = {"B": 1, "K": 1024, "KB": 1024, "M": 1 << 20, "MB": 1 << 20}.get(unit.text.upper())
            if mult is None:
                self.error(f"unknown size unit '{unit.text}' (use B or KB)", unit)
            self.next()
            value *= mult
            if value > REG_MASK:
                self.error(f"{what} {value} B does not fit a 64-bit field (0..{REG_MASK})", t)
        return value

    def end(self):
        if self.tok.kind != "end":
            self.error(f"unexpected '{self.tok.text}' after the end of the instruction")


_DEP = re.compile(r"^D\d+$")


def _dependency(p: _Parser) -> str | None:
    """A dependency operand, or None (nothing consumed) when the next token starts none:
    ``D<n>`` (this project's label), ``d#<n>`` (the Linx toolchain's, read as ``d#`` and a
    number: ``d#04`` is ``d#4``) or ``d`` (the toolchain's DepDst, written ``->d``)."""
    t = p.tok
    if t.kind == "name" and _DEP.match(t.text):
        return p.next().text
    if t.kind != "name" or t.text not in ("d", "D"):
        return None
    p.next()
    if not p.at("#"):
        return "d"
    p.next()
    return f"d#{p.number('the dependency d#')}"
_LB_FIELDS = {"LB0": "ValidCol", "LB1": "ValidRow", "LB2": "Col"}


def _parse_selector_operands(p: _Parser, pad: bool):
    """``.Layout <LB0:.., LB1:.., LB2:.., DataType[, PadValue]>`` after the mnemonic, the
    optional comma after ``>`` included -> (layout, LB operands, DataType, PadValue)."""
    head = p.next()
    layout = TLoadLayout.NORM
    if p.at("."):
        p.next()
        t = p.tok
        if t.kind != "name" or t.text.upper() not in TLoadLayout.__members__:
            p.error(f"unknown layout '{t.text}' (NORM, ND2NZ, ND2ZN, DN2NZ, DN2ZN)")
        layout = TLoadLayout[p.next().text.upper()]
    p.expect("<", f"to open the operand list of {head.text}")
    lbs: dict[str, Operand] = {}
    dt = pad_value = None
    while True:
        t = p.tok
        up = t.text.upper()
        if t.kind == "name" and up in ("LB0", "LB1", "LB2"):
            if up in lbs:
                p.error(f"{up} given twice")
            p.next()
            p.expect(":", f"after {up}")
            lbs[up] = p.operand(f"{up} ({_LB_FIELDS[up]})")
        elif t.kind == "name" and up in {k.upper() for k in DTYPES}:
            if dt is not None:
                p.error("DataType given twice")
            dt = _dtype(p.next().text)
        elif t.kind == "name" and t.text.capitalize() in PadValue.__members__:
            if not pad:
                p.error(f"{head.text.upper()} takes no PadValue: it writes the footprint "
                        f"and nothing else")
            if pad_value is not None:
                p.error("PadValue given twice")
            pad_value = PadValue[p.next().text.capitalize()]
        elif t.kind == "name" and up == "FP8":
            p.error("FP8 is ambiguous: write E4M3 or E5M2")
        else:
            p.error(f"expected LB0:, LB1:, LB2:, a DataType ({', '.join(DTYPES)})"
                    + (" or a PadValue (Null, Zero, Max, Min)" if pad else "")
                    + f", found '{t.text or 'end of line'}'")
        if p.at(">"):
            close = p.next()
            break
        p.expect(",", "between operands (or '>' to close them)")
    if "LB0" not in lbs:
        p.error("LB0 (ValidCol) is required", close)
    if dt is None:
        p.error("a DataType is required", close)
    if p.at(","):                           # the LLVM toolchain writes no comma here
        p.next()
    return layout, lbs, dt, PadValue.Null if pad_value is None else pad_value


def _parse_sources(p: _Parser) -> tuple[str, str | None]:
    """``[RegSrc0, RegSrc1]`` -> (base, stride or None)."""
    p.expect("[", "to open the source registers [RegSrc0, RegSrc1]")
    base = p.register("RegSrc0")
    stride = None
    if p.at(","):
        p.next()
        stride = p.register("RegSrc1")
    p.expect("]", "to close the source registers")
    return base, stride


def _parse_tload(p: _Parser) -> TLoadInsn:
    layout, lbs, dt, pad = _parse_selector_operands(p, pad=True)
    base, stride = _parse_sources(p)
    deps = []
    while True:
        p.expect(",", "before the destinations '->'")
        if p.tok.kind == "arrow":
            p.next()
            break
        t = p.tok
        dep = _dependency(p)
        if dep is None or dep == "d":
            p.error(f"expected a dependency (D<n> or d#<n>) or '->', found "
                    f"'{t.text or 'end of line'}'", t)
        if len(deps) == 3:
            p.error("at most 3 dependencies (DepSrc0..2)", t)
        deps.append(dep)
    dsts, dep_dst = [], None
    while True:
        t = p.tok
        dep_dst = _dependency(p)
        if dep_dst is not None:
            if not dsts:
                p.error("expected a destination (DstTile0, e.g. T<2KB>) before DepDst", t)
            break
        if t.kind != "name" or t.text.upper() not in QUEUES:
            p.error(f"expected a destination queue (T, U, M, N), found '{t.text or 'end of line'}'")
        if len(dsts) == MAX_OUTPUTS:
            p.error(f"at most {MAX_OUTPUTS} destinations (DstTile0..7)")
        q = p.next().text.upper()
        p.expect("<", f"after {q} to give its size, e.g. {q}<2KB>")
        size = p.size(f"DstTile{len(dsts)}")
        p.expect(">", "after the size")
        dsts.append((q, size))
        if not p.at(","):
            break
        p.next()
        if p.tok.kind == "arrow":           # '->T<8KB>, ->T<8KB>': the arrow repeated per output
            p.next()
    p.end()
    return TLoadInsn(layout=layout, dtype=dt, pad=pad,
                     valid_col=lbs["LB0"], valid_row=lbs.get("LB1", Operand("zero", 1)),
                     col=lbs.get("LB2"), base=base, stride=stride, dsts=tuple(dsts),
                     dep_srcs=tuple(deps), dep_dst=dep_dst)


def _parse_tile_ref(p: _Parser, what: str) -> TileRef:
    t = p.tok
    q = t.text.upper()
    if t.kind != "name" or q not in QUEUES:
        p.error(f"expected a tile register for {what} (T#1..N#16, ACC, S), found "
                f"'{t.text or 'end of line'}'")
    p.next()
    index = None
    if q not in ("ACC", "S"):
        p.expect("#", f"after {q} (e.g. {q}#1)")
        it = p.tok
        index = p.number(f"{what}'s relative index")
        if not 1 <= index <= QUEUE_DEPTH:
            p.error(f"relative index {index} is outside 1..{QUEUE_DEPTH}", it)
    reuse = False
    if p.at("."):
        p.next()
        if not (p.tok.kind == "name" and p.tok.text.lower() == "reuse"):
            p.error("expected 'reuse' after '.'")
        p.next()
        reuse = True
    return TileRef(q, index, reuse)


def _parse_elementwise(p: _Parser) -> ElementwiseInsn:
    op = p.next().text.upper()
    a = _parse_tile_ref(p, "the first source")
    p.expect(",", "between the sources")
    b = _parse_tile_ref(p, "the second source")
    p.expect(",", "before the destination '->'")
    if p.tok.kind != "arrow":
        p.error("expected '->' before the destination queue")
    p.next()
    t = p.tok
    if t.kind != "name" or t.text.upper() not in QUEUES:
        p.error(f"expected a destination queue (T, U, M, N), found '{t.text or 'end of line'}'")
    dst = p.next().text.upper()
    p.end()
    return ElementwiseInsn(op, a, b, dst)


def _parse_tstore(p: _Parser) -> TStoreInsn:
    layout, lbs, dt, _ = _parse_selector_operands(p, pad=False)
    if p.at("["):
        p.error("expected the source tile register (e.g. T#1) before [RegSrc0, RegSrc1]")
    src = _parse_tile_ref(p, "the source")
    if src.queue in ("ACC", "S"):
        p.error(f"TSTORE stores a tile register of T, U, M or N, not {src.queue}",
                p.toks[p.i - 1])
    p.expect(",", "between the source tile and [RegSrc0, RegSrc1]")
    base, stride = _parse_sources(p)
    deps, dep_dst = [], None
    while p.at(","):
        p.next()
        t = p.tok
        if t.kind == "arrow":
            p.next()
            t = p.tok
            if t.kind == "name" and t.text.upper() in QUEUES and t.text != "d":
                p.error("a TSTORE writes memory and has no destination register; '->' "
                        "gives only DepDst (->d)")
            dep_dst = _dependency(p)
            if dep_dst is None:
                p.error(f"expected DepDst after '->' (d, D<n> or d#<n>), found "
                        f"'{t.text or 'end of line'}'", t)
            break
        dep = _dependency(p)
        if dep is None or dep == "d":
            p.error(f"expected a dependency (D<n> or d#<n>) or '->' and DepDst, found "
                    f"'{t.text or 'end of line'}'", t)
        if len(deps) == 3:
            p.error("at most 3 dependencies (DepSrc0..2)", t)
        deps.append(dep)
    p.end()
    return TStoreInsn(layout=layout, dtype=dt, valid_col=lbs["LB0"], src=src,
                      valid_row=lbs.get("LB1", Operand("zero", 1)), col=lbs.get("LB2"),
                      base=base, stride=stride, dep_srcs=tuple(deps), dep_dst=dep_dst)


def parse_line(line: str, lineno: int | None = None) \
        -> TLoadInsn | TStoreInsn | ElementwiseInsn | None:
    """Parse one program line; None for a blank or comment-only line."""
    p = _Parser(line, lineno)
    t = p.tok
    if t.kind == "end":
        return None
    mnemonic = t.text.upper()
    if t.kind == "name" and mnemonic == "TLOAD":
        return _parse_tload(p)
    if t.kind == "name" and mnemonic == "TSTORE":
        return _parse_tstore(p)
    if t.kind == "name" and mnemonic in ("TADD", "TSUB"):
        return _parse_elementwise(p)
    p.error(f"unknown instruction '{t.text}' (TLOAD, TSTORE, TADD, TSUB)")


def parse_tload(text: str) -> TLoadInsn:
    insn = parse_line(text)
    if not isinstance(insn, TLoadInsn):
        raise AsmError("expected a TLOAD instruction", text, 0)
    return insn


def parse_transfer(text: str) -> TLoadInsn | TStoreInsn:
    """A TLOAD or a TSTORE (what ``asm`` takes)."""
    insn = parse_line(text)
    if not isinstance(insn, (TLoadInsn, TStoreInsn)):
        raise AsmError("expected a TLOAD or TSTORE instruction", text, 0)
    return insn


def parse_program(text: str) -> list[tuple[int, TLoadInsn | TStoreInsn | ElementwiseInsn]]:
    """(line number, instruction) for every non-blank line of a program."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        insn = parse_line(line, n)
        if insn is not None:
            out.append((n, insn))
    return out


# --- block template ------------------------------------------------------------------------

def assemble(insn: TLoadInsn | TStoreInsn | str) -> list[BlockRecord]:
    """A TLOAD or TSTORE -> its block template (D9, D15), as ordered records.  A TSTORE's
    B.DATR gives the layout alone and its B.IOT names the source register."""
    if isinstance(insn, str):
        insn = parse_transfer(insn)
    store = isinstance(insn, TStoreInsn)
    recs = [BlockRecord("BSTART.TMA", ("TSTORE" if store else "TLOAD", insn.dtype.name)),
            BlockRecord("B.DATR", (insn.layout.name,) if store
                        else (insn.layout.name, insn.pad.name))]
    for lb, op in (("LB0", insn.valid_col), ("LB1", insn.valid_row), ("LB2", insn.col)):
        recs.append(BlockRecord("B.DIM", (op.reg, str(op.imm), f"->{lb}")))
    if store:
        recs.append(BlockRecord("B.IOT", ("last", str(insn.src))))
    else:
        for k, (q, s) in enumerate(insn.dsts):
            last = ("last",) if k == len(insn.dsts) - 1 else ()
            recs.append(BlockRecord("B.IOT", last + (f"->{q}<{format_size(s)}>",)))
    recs.append(BlockRecord("B.IOR", (insn.base,) + ((insn.stride,) if insn.stride else ())))
    if insn.dep_srcs or insn.dep_dst:
        recs.append(BlockRecord("B.IOD", insn.dep_srcs
                                + ((f"->{insn.dep_dst}",) if insn.dep_dst else ())))
    return recs


def params_to_asm(p: TLoadParams) -> tuple[str, dict[str, int]]:
    """A TLOAD with evaluated operands -> (assembly text, registers) that reproduce it.

    Dimensions become immediates; the base (a0) and the stride (a1) go in registers.
    """
    regs = {"a0": p.base}
    src = "[a0]"
    if p.stride is not None:
        regs["a1"] = p.stride
        src = "[a0, a1]"
    col = p.valid_col if p.col is None else p.col
    dsts = ", ".join(f"{q}<{format_size(s)}>" for q, s in p.outputs)
    text = (f"TLOAD.{p.layout.name} <LB0:{p.valid_col}, LB1:{p.valid_row}, LB2:{col}, "
            f"{p.dtype.name}, {p.pad.name}>, {src}, ->{dsts}")
    return text, regs


def records_text(records: list[BlockRecord]) -> str:
    return "\n".join(r.text() for r in records)


_REC = re.compile(r"^\s*(?P<op>[A-Za-z.]+)\s*(?P<args>.*?)\s*$")
_IOT = re.compile(r"^->(?P<q>[A-Z]+)<(?P<s>[^>]+)>$")


def parse_block(text: str) -> list[BlockRecord]:
    """Block-template text (one record per line) -> records."""
    recs = []
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if not line:
            continue
        m = _REC.match(line)
        args = tuple(a.strip() for a in m["args"].split(",")) if m["args"] else ()
        recs.append(BlockRecord(m["op"], args))
    return recs


def disassemble(records: list[BlockRecord] | str) -> TLoadInsn | TStoreInsn:
    """Block template -> the TLOAD or TSTORE it encodes.  Raises AsmError on a malformed
    template."""
    if isinstance(records, str):
        records = parse_block(records)
    by_op: dict[str, list[BlockRecord]] = {}
    for r in records:
        by_op.setdefault(r.op, []).append(r)

    def bad(msg, rec=None):
        text = rec.text() if rec else records_text(records)
        raise AsmError(msg, text, 0)

    head = by_op.get("BSTART.TMA", [None])[0]
    if head is None or len(head.args) != 2 or head.args[0] not in ("TLOAD", "TSTORE"):
        bad("the template must start with BSTART.TMA TLOAD|TSTORE, DataType", head)
    store = head.args[0] == "TSTORE"
    try:
        dt = _dtype(head.args[1])
    except ValueError as e:
        bad(str(e), head)
    datr = by_op.get("B.DATR", [None])[0]
    if store:
        if datr is None or len(datr.args) != 1 or datr.args[0] not in TLoadLayout.__members__:
            bad("B.DATR of a TSTORE must give the Layout", datr)
    elif datr is None or len(datr.args) != 2 or datr.args[0] not in TLoadLayout.__members__ \
            or datr.args[1] not in PadValue.__members__:
        bad("B.DATR must give Layout, PadValue", datr)
    lbs = {}
    for r in by_op.get("B.DIM", []):
        if len(r.args) != 3 or r.args[2] not in ("->LB0", "->LB1", "->LB2") \
                or r.args[0] not in SCALAR_REGS:
            bad("B.DIM must be 'reg, imm, ->LBn'", r)
        try:
            imm = parse_int(r.args[1])
        except ValueError:
            bad(f"B.DIM immediate '{r.args[1]}' is not a number", r)
        if not -REG_MASK <= imm <= REG_MASK:
            bad(f"B.DIM immediate {r.args[1]} does not fit a 64-bit field", r)
        lbs[r.args[2][2:]] = Operand(r.args[0], imm)
    if "LB0" not in lbs:
        bad("B.DIM ->LB0 (ValidCol) is missing")
    ior = by_op.get("B.IOR", [None])[0]
    if ior is None or not 1 <= len(ior.args) <= 2 or any(a not in SCALAR_REGS for a in ior.args):
        bad("B.IOR must be 'RegSrc0[, RegSrc1]'", ior)
    deps, dep_dst = [], None
    for r in by_op.get("B.IOD", []):
        for a in filter(None, r.args):          # the toolchain prints 'B.IOD , ->d'
            if a.startswith("->"):
                dep_dst = a[2:]
            else:
                deps.append(a)
    common = dict(layout=TLoadLayout[datr.args[0]], dtype=dt, valid_col=lbs["LB0"],
                  valid_row=lbs.get("LB1", Operand("zero", 1)), col=lbs.get("LB2"),
                  base=ior.args[0], stride=ior.args[1] if len(ior.args) > 1 else None,
                  dep_srcs=tuple(deps), dep_dst=dep_dst)
    if store:
        iots = by_op.get("B.IOT", [])
        if len(iots) != 1 or not 1 <= len(iots[0].args) <= 2:
            bad("a TSTORE has one B.IOT: '[last,] Q#k[.reuse]'", iots[0] if iots else None)
        try:
            src = parse_tile_ref(iots[0].args[-1])
        except ValueError as e:
            bad(str(e), iots[0])
        if src.queue not in ("T", "U", "M", "N"):
            bad(f"TSTORE stores a tile register of T, U, M or N, not {src.queue}", iots[0])
        return TStoreInsn(src=src, **common)
    dsts = []
    for r in by_op.get("B.IOT", []):
        m = _IOT.match(r.args[-1]) if r.args else None
        if not m or m["q"] not in QUEUES:
            bad("B.IOT must be '[last,] ->Q<Size>'", r)
        s = m["s"]
        if s in SCALAR_REGS:
            size: int | str = s
        else:
            mm = re.match(r"^(\w+?)(KB|B)?$", s)
            try:
                size = parse_int(mm[1]) * (1024 if mm[2] == "KB" else 1)
            except (TypeError, ValueError):
                bad(f"B.IOT size '{s}' is not a size", r)
        dsts.append((m["q"], size))
    if not dsts:
        bad("no B.IOT destination")
    return TLoadInsn(pad=PadValue[datr.args[1]], dsts=tuple(dsts), **common)
