"""TSTORE golden model (docs/design.md D15; Linx ISA manual v0.4, "TLOAD/TSTORE semantics").

TSTORE is the inverse of the TLOAD with the same fields: it reads one tile register and
writes the LB0 x LB1 footprint (ValidCol x ValidRow) of its logical matrix to global memory
at RegSrc0, rows (ND) or columns (DN) RegSrc1 bytes apart.

* The selector names the tile side (NORM: ND, ND2NZ/DN2NZ: NZ, ND2ZN/DN2ZN: ZN) and the
  memory side (ND2*: ND, DN2*: DN, NORM: ND), exactly as for TLOAD.
* LB2 is the tile-side inner count Col; Row = Size / (Col x esize), Size the source
  register's.  The register's bytes are read in the selector's tile layout as a Row x Col
  matrix: a tile register holds bytes, and the instruction says how to read them.
* **The element-size rule** (the manual is silent): the DataType's element size must be
  the one the source register was written with, else IllegalParameter on DataType.  The
  element size decides the fractal shape (a 512 B fractal is 16 x 32/esize), so a store
  under another size would move pieces of different elements; a type of the same size
  (S16 -> FP16) is a plain bit copy and is allowed.  The RTL applies the same rule with the
  element size it keeps beside each register.
* Nothing outside the footprint changes; there is no padding.  A footprint byte that comes
  from a byte Null padding left undefined (D5) is undefined in memory too (the RTL stores
  whatever its slot holds there); the Machine keeps which memory bytes are defined, and a
  TLOAD that reads an undefined byte leaves its tile byte undefined.  A footprint of zero rows
  or columns writes nothing (and cannot be out of bounds).
* Rows (ND) or columns (DN) that would overlap in memory -- more than one, with a stride
  below their bytes -- are IllegalParameter on RegSrc1.  The manual gives no order among a
  store's writes, and an engine that moves squares (ND2ZN, DN2NZ) writes them out of row
  order: a footprint whose bytes would depend on that order is refused, not left undefined.
* Faults, first broken rule first, before any byte is written: the source (TileReleased,
  IllegalInstruction: the Machine's lookup), the element size, Col >= 1, ValidCol <= Col,
  Size a whole number of Col-element rows, ValidRow <= Row, the NZ/ZN fractal multiples of
  Row and Col, overlapping rows, then OutOfBounds for a footprint past the end of memory.

:func:`tstore` is vectorized; :func:`tstore_reference` transcribes TLOAD's seed loops with
the assignment turned round (memory <- tile), element by element.  Both return the
byte addresses they wrote, in order, for the checks that "nothing else changed".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import dtypes as _dt
from .dtypes import DataType
from .faults import IllegalParameter, OutOfBounds
from .layouts import default_fractal, from_tile
from .tload import TileImage, TLoadLayout

__all__ = ["TStoreParams", "TStorePlan", "plan_tstore", "tstore", "tstore_reference"]


@dataclass(frozen=True)
class TStoreParams:
    """A decoded TSTORE with every operand evaluated (the source register is apart: the
    Machine resolves it).  ``stride`` None: RegSrc1 omitted, dense (ValidCol x esize for
    an ND memory side, ValidRow x esize for DN).  ``col`` None: Col = ValidCol."""
    layout: TLoadLayout
    dtype: DataType
    valid_col: int
    base: int = 0
    valid_row: int = 1
    col: int | None = None
    stride: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "layout", TLoadLayout(self.layout))
        object.__setattr__(self, "dtype", _dt.dtype(self.dtype))

    @property
    def esize(self) -> int:
        return self.dtype.esize

    def to_json(self) -> dict:
        return {"layout": self.layout.name, "dtype": self.dtype.name,
                "valid_col": self.valid_col, "valid_row": self.valid_row, "col": self.col,
                "base": self.base, "stride": self.stride}


@dataclass(frozen=True)
class TStorePlan:
    """What a legal TSTORE writes: the checked geometry."""
    params: TStoreParams
    size: int           # the source register's bytes
    col: int
    row: int
    stride: int         # after the dense default

    @property
    def outer(self) -> int:
        """Memory-side runs: rows (ND) or columns (DN) of the footprint."""
        p = self.params
        return p.valid_col if p.layout.source_dn else p.valid_row

    @property
    def inner(self) -> int:
        """Elements of each run."""
        p = self.params
        return p.valid_row if p.layout.source_dn else p.valid_col

    def span(self) -> tuple[int, int] | None:
        """[first, last] byte address written, or None when the footprint is empty."""
        p = self.params
        if not self.outer or not self.inner:
            return None
        return p.base, p.base + (self.outer - 1) * self.stride + self.inner * p.esize - 1

    def footprint_bytes(self) -> int:
        return self.outer * self.inner * self.params.esize


def plan_tstore(p: TStoreParams, src: TileImage, mem_size: int,
                src_name: str = "source") -> TStorePlan:
    """Check a TSTORE of ``src`` (D15); raise the first broken rule's fault."""
    e = p.esize
    if src.dtype.esize != e:
        raise IllegalParameter("DataType", p.dtype.name,
                               f"{e}-byte elements, but {src_name} was written with "
                               f"{src.dtype.esize}-byte elements ({src.dtype.name}); a "
                               f"TSTORE moves the element size its register holds")
    col = p.valid_col if p.col is None else p.col
    if col < 1:
        raise IllegalParameter("Col", col, "must be at least 1")
    if p.valid_col > col:
        raise IllegalParameter("ValidCol", p.valid_col, f"exceeds Col={col}")
    if src.size % (col * e):
        raise IllegalParameter("Col", col, f"Row = {src.size} B (the size of {src_name}) / "
                               f"(Col*{e} B) is not a whole number")
    row = src.size // (col * e)
    if p.valid_row > row:
        raise IllegalParameter("ValidRow", p.valid_row, f"exceeds Row={row} (derived from "
                               f"the {src.size} B of {src_name} / (Col {col} x {e} B))")
    tile = p.layout.dest
    if tile.fractal:
        r0, c0 = default_fractal(tile, e)
        what = "Row" if row % r0 else ("Col" if col % c0 else None)
        if what:
            value, unit = (row, r0) if what == "Row" else (col, c0)
            raise IllegalParameter(what, value, f"a {tile.value} tile of {p.dtype.name} "
                                   f"needs {what} % {unit} == 0")
    if p.stride is None:
        stride = (p.valid_row if p.layout.source_dn else p.valid_col) * e
    else:
        stride = p.stride
    pl = TStorePlan(p, src.size, col, row, stride)
    if pl.outer > 1 and pl.inner and stride < pl.inner * e:
        what = "columns" if p.layout.source_dn else "rows"
        raise IllegalParameter("RegSrc1", stride, f"the footprint's {pl.outer} {what} of "
                               f"{pl.inner * e} B would overlap in memory (stride below "
                               f"{pl.inner * e} B)")
    span = pl.span()
    if span is not None and span[1] >= mem_size:
        raise OutOfBounds("RegSrc0", p.base, f"the footprint covers bytes {span[0]:#x}.."
                          f"{span[1]:#x}, past the end of memory ({mem_size:#x} bytes)")
    return pl


def _runs(pl: TStorePlan, image: np.ndarray) -> np.ndarray:
    """The footprint's runs in memory order, (outer, inner * esize) bytes of ``image`` (the
    register's bytes, or its defined-byte flags)."""
    p = pl.params
    e = p.esize
    block = from_tile(np.asarray(image).reshape(-1, e), p.layout.dest, pl.row, pl.col, esize=e)
    part = block[:p.valid_row, :p.valid_col]
    if p.layout.source_dn:              # memory run j is column j: elements (0..vr-1, j)
        part = np.swapaxes(part, 0, 1)
    return part.reshape(pl.outer, pl.inner * e)


def tstore(mem: np.ndarray, p: TStoreParams, src: TileImage, src_name: str = "source",
           defined: np.ndarray | None = None) -> np.ndarray:
    """Vectorized TSTORE: writes ``mem`` in place; returns the addresses written, sorted.

    ``defined`` (bool per memory byte), when given, is updated too: a byte written from a
    byte of the register that Null padding left undefined (D5) is undefined in memory --
    the RTL stores whatever its slot holds there."""
    pl = plan_tstore(p, src, mem.size, src_name)
    if pl.span() is None:
        return np.zeros(0, dtype=np.int64)
    runs = _runs(pl, np.asarray(src.data, dtype=np.uint8))
    run_bytes = runs.shape[1]
    # a stride multiplies only from the second run on; over one it may be any 64-bit value
    stride = pl.stride if pl.outer > 1 else 0
    addrs = (p.base + np.arange(pl.outer, dtype=np.int64)[:, None] * stride
             + np.arange(run_bytes, dtype=np.int64)[None, :]).reshape(-1)
    mem[addrs] = runs.reshape(-1)                  # no two runs overlap (plan_tstore)
    if defined is not None:
        defined[addrs] = _runs(pl, np.asarray(src.valid, dtype=bool)).reshape(-1)
    return np.sort(addrs)


def tstore_reference(mem: np.ndarray, p: TStoreParams, src: TileImage,
                     src_name: str = "source", defined: np.ndarray | None = None) -> list[int]:
    """TLOAD's seed loops with the assignment turned round: for every element (i, j) of
    the footprint, in memory order, its bytes move from the tile offset of the selector's
    tile layout to the memory address of its memory side.  Returns the addresses written,
    in the order written."""
    pl = plan_tstore(p, src, mem.size, src_name)
    size_of = p.esize
    row, col = pl.row, pl.col
    written = []
    outer, inner = (p.valid_col, p.valid_row) if p.layout.source_dn else (p.valid_row, p.valid_col)
    for a in range(outer):
        for b in range(inner):
            i, j = (b, a) if p.layout.source_dn else (a, b)
            if p.layout.source_dn:
                dst_addr_elem = p.base + j * pl.stride + i * size_of
            else:
                dst_addr_elem = p.base + i * pl.stride + j * size_of
            if p.layout is TLoadLayout.NORM:
                src_off = (i * col + j) * size_of
            elif p.layout in (TLoadLayout.ND2NZ, TLoadLayout.DN2NZ):
                frac_col = 512 // (16 * size_of)
                src_off = ((j // frac_col) * row * frac_col + i * frac_col
                           + j % frac_col) * size_of
            else:
                frac_row = 512 // (16 * size_of)
                src_off = ((i // frac_row) * col * frac_row + j * frac_row
                           + i % frac_row) * size_of
            mem[dst_addr_elem:dst_addr_elem + size_of] = src.data[src_off:src_off + size_of]
            if defined is not None:
                defined[dst_addr_elem:dst_addr_elem + size_of] = \
                    src.valid[src_off:src_off + size_of]
            written.extend(range(dst_addr_elem, dst_addr_elem + size_of))
    return written
