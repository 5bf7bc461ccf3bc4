"""TLOAD golden model (seed 000; docs/design.md D2, D3, D5, D6).

Two implementations of the same operation:

* :func:`tload_reference` -- the seed's pseudo-code loops, element by element,
  one output band at a time (slow, obviously right);
* :func:`tload` -- vectorized numpy: one strided gather of the valid block,
  padding, the band split of D6, and the layout library's reshape/transpose.

Both check the instruction with :func:`plan` first, so a faulting TLOAD raises
before it reads memory and produces nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from . import dtypes as _dt
from .dtypes import DataType, PadValue, Profile, pad_bytes
from .faults import IllegalInstruction, IllegalParameter, OutOfBounds
from .layouts import Layout, default_fractal, from_tile, to_tile

__all__ = ["TLoadLayout", "TLoadParams", "TLoadPlan", "TileImage", "LCFR", "plan",
           "tload", "tload_reference", "MAX_OUTPUTS", "TILE_QUEUES"]

MAX_OUTPUTS = 8
#: The queues a TLOAD may write (seed 000: "T/U/M/N, not ACC").
TILE_QUEUES = ("T", "U", "M", "N")


class TLoadLayout(enum.IntEnum):
    """TLOAD layout transform, with the numeric codes of D9."""
    NORM = 0
    ND2NZ = 1
    ND2ZN = 2
    DN2NZ = 3
    DN2ZN = 4

    @property
    def source_dn(self) -> bool:
        """True when memory holds the block column-major (DN source)."""
        return self in (TLoadLayout.DN2NZ, TLoadLayout.DN2ZN)

    @property
    def transposing(self) -> bool:
        """True when a destination line gathers one element from each of several source
        rows (ND2ZN, DN2NZ); the other layouts copy contiguous runs."""
        return self in (TLoadLayout.ND2ZN, TLoadLayout.DN2NZ)

    @property
    def dest(self) -> Layout:
        """Storage layout of the destination tiles."""
        return {TLoadLayout.NORM: Layout.ND, TLoadLayout.ND2NZ: Layout.NZ,
                TLoadLayout.ND2ZN: Layout.ZN, TLoadLayout.DN2NZ: Layout.NZ,
                TLoadLayout.DN2ZN: Layout.ZN}[self]


@dataclass(frozen=True)
class LCFR:
    """Tile-size limits a TLOAD may request (seed 002: queried from LCFR)."""
    min_size: int = 256
    max_size: int = 256 * 1024

    def check_size(self, size: int, fld: str = "Size") -> None:
        ok_shape = size >= 256 and size % 256 == 0 and ((size // 256) & (size // 256 - 1)) == 0
        if not ok_shape:
            raise IllegalParameter(fld, size, "a tile size must be 256 B times a power of two")
        if not self.min_size <= size <= self.max_size:
            raise IllegalParameter(fld, size, f"outside the LCFR range "
                                              f"{self.min_size}..{self.max_size} bytes")


@dataclass(frozen=True)
class TLoadParams:
    """A decoded TLOAD with every operand evaluated to a number.

    ``stride`` None means "RegSrc1 omitted": dense, ValidCol*esize (ND source)
    or ValidRow*esize (DN source) bytes (D2).  ``col`` None means Col =
    ValidCol.  ``outputs`` is a tuple of (queue, size in bytes).
    """
    layout: TLoadLayout
    dtype: DataType
    valid_col: int
    outputs: tuple[tuple[str, int], ...]
    base: int = 0
    valid_row: int = 1
    col: int | None = None
    stride: int | None = None
    pad: PadValue = PadValue.Null

    def __post_init__(self):
        object.__setattr__(self, "layout", TLoadLayout(self.layout))
        object.__setattr__(self, "dtype", _dt.dtype(self.dtype))
        object.__setattr__(self, "pad", self.pad if isinstance(self.pad, PadValue)
                           else PadValue[self.pad])
        object.__setattr__(self, "outputs", tuple((str(q), int(s)) for q, s in self.outputs))

    @property
    def esize(self) -> int:
        return self.dtype.esize

    def to_json(self) -> dict:
        return {"layout": self.layout.name, "dtype": self.dtype.name, "pad": self.pad.name,
                "valid_col": self.valid_col, "valid_row": self.valid_row, "col": self.col,
                "base": self.base, "stride": self.stride,
                "outputs": [list(o) for o in self.outputs]}


@dataclass(frozen=True)
class TLoadPlan:
    """What a legal TLOAD will do: the checked, derived geometry."""
    params: TLoadParams
    col: int            # Col of the whole block
    row: int            # Row of the whole block (hardware-derived, D3)
    stride: int         # source stride in bytes, after the dense default
    n: int              # number of outputs
    out_rows: int       # dimensions of each output tile (D6)
    out_cols: int

    @property
    def band_axis(self) -> int:
        """0: outputs are row bands (DN source); 1: column bands (ND source)."""
        return 0 if self.params.layout.source_dn else 1

    def band_origin(self, k: int) -> tuple[int, int]:
        """(row, col) in the whole block of output k's element (0, 0)."""
        return (k * self.out_rows, 0) if self.band_axis == 0 else (0, k * self.out_cols)

    def src_span(self) -> tuple[int, int] | None:
        """[first, last] byte address read, or None when nothing is valid."""
        p = self.params
        vr, vc, e = p.valid_row, p.valid_col, p.esize
        if vr == 0 or vc == 0:
            return None
        if p.layout.source_dn:
            last = p.base + (vc - 1) * self.stride + (vr - 1) * e + e - 1
        else:
            last = p.base + (vr - 1) * self.stride + (vc - 1) * e + e - 1
        return p.base, last


@dataclass
class TileImage:
    """One output tile: its Size-byte image in its layout, and which bytes are defined."""
    queue: str
    size: int
    dtype: DataType
    layout: Layout
    rows: int
    cols: int
    data: np.ndarray            # uint8[size]
    valid: np.ndarray           # bool[size]; False only for Null-padded bytes
    valid_rows: int = 0         # the loaded (non-pad) region, for display
    valid_cols: int = 0
    meta: dict = field(default_factory=dict)

    def matrix(self) -> np.ndarray:
        """The logical matrix as (rows, cols, esize) bytes."""
        e = self.dtype.esize
        return from_tile(self.data.reshape(-1, e), self.layout, self.rows, self.cols, esize=e)

    def valid_matrix(self) -> np.ndarray:
        e = self.dtype.esize
        return from_tile(self.valid.reshape(-1, e), self.layout, self.rows, self.cols,
                         esize=e)[..., 0]

    def to_json(self) -> dict:
        return {"queue": self.queue, "size": self.size, "rows": self.rows, "cols": self.cols,
                "layout": self.layout.value, "dtype": self.dtype.name}


def plan(p: TLoadParams, mem_size: int, lcfr: LCFR = LCFR()) -> TLoadPlan:
    """Check a TLOAD against the seed's constraints and D2/D3/D6/D7; derive its geometry.

    Raises the fault of the first broken rule, before any memory access.
    """
    n = len(p.outputs)
    if not 1 <= n <= MAX_OUTPUTS:
        raise IllegalInstruction("outputs", n, f"a TLOAD writes 1..{MAX_OUTPUTS} tile registers")
    for k, (q, size) in enumerate(p.outputs):
        if q not in TILE_QUEUES:
            raise IllegalInstruction(f"DstTile{k}", q, "TLOAD may write only T, U, M or N "
                                     "tile registers (not ACC or S)")
    sizes = {s for _, s in p.outputs}
    for k, (_, size) in enumerate(p.outputs):
        lcfr.check_size(size, f"DstTile{k}.Size")
    if len(sizes) != 1:
        raise IllegalParameter("Size", "/".join(str(s) for _, s in p.outputs),
                               "all outputs of a TLOAD must have the same size")
    size = p.outputs[0][1]
    e = p.esize
    col = p.valid_col if p.col is None else p.col
    if col < 1:
        raise IllegalParameter("Col", col, "must be at least 1")
    if p.valid_col > col:
        raise IllegalParameter("ValidCol", p.valid_col, f"exceeds Col={col}")
    total = n * size
    if total % (col * e):
        raise IllegalParameter("Col", col, f"Row = {n}*{size} B / (Col*{e} B) is not a whole number")
    row = total // (col * e)
    if p.valid_row > row:
        raise IllegalParameter("ValidRow", p.valid_row, f"exceeds Row={row} (derived from Size "
                               f"{size} B x {n} / (Col {col} x {e} B))")
    if p.layout.source_dn:
        if row % n:
            raise IllegalParameter("Row", row, f"a DN source is split into {n} row bands: "
                                   f"Row must be a multiple of {n}")
        out_rows, out_cols = row // n, col
    else:
        if col % n:
            raise IllegalParameter("Col", col, f"an ND source is split into {n} column bands: "
                                   f"Col must be a multiple of {n}")
        out_rows, out_cols = row, col // n
    dest = p.layout.dest
    if dest.fractal:
        r0, c0 = default_fractal(dest, e)
        what = "Row" if out_rows % r0 else ("Col" if out_cols % c0 else None)
        if what:
            value = out_rows if what == "Row" else out_cols
            unit = r0 if what == "Row" else c0
            raise IllegalParameter(what, value, f"a {dest.value} tile of {p.dtype.name} needs "
                                   f"{what} % {unit} == 0 (per output tile)")
    if p.stride is None:
        stride = (p.valid_row if p.layout.source_dn else p.valid_col) * e
    else:
        stride = p.stride
    pl = TLoadPlan(p, col, row, stride, n, out_rows, out_cols)
    span = pl.src_span()
    if span is not None and span[1] >= mem_size:
        raise OutOfBounds("RegSrc0", p.base, f"the block reads bytes {span[0]:#x}..{span[1]:#x}, "
                          f"past the end of memory ({mem_size:#x} bytes)")
    return pl


def _pad(p: TLoadParams, profile) -> np.ndarray:
    return np.frombuffer(pad_bytes(p.dtype, p.pad, profile), dtype=np.uint8)


def tload(mem: np.ndarray, p: TLoadParams, profile: Profile | str = Profile.FINITE,
          lcfr: LCFR = LCFR()) -> list[TileImage]:
    """Vectorized TLOAD: the images of the 1..8 output tiles."""
    mem = np.asarray(mem, dtype=np.uint8)
    pl = plan(p, mem.size, lcfr)
    e, vr, vc = p.esize, p.valid_row, p.valid_col
    block = np.empty((pl.row, pl.col, e), dtype=np.uint8)
    block[...] = _pad(p, profile)
    valid = np.full((pl.row, pl.col), p.pad is not PadValue.Null)
    if vr and vc:
        # A stride multiplies only from the second row (ND) or column (DN) on; over one it
        # is never used, and may be any 64-bit value (RegSrc1 = -1), past numpy's C long.
        stride = pl.stride if (vc if p.layout.source_dn else vr) > 1 else 0
        if p.layout.source_dn:       # element (i, j) at base + j*stride + i*e
            shape, strides = (vr, vc, e), (e, stride, 1)
        else:                        # element (i, j) at base + i*stride + j*e
            shape, strides = (vr, vc, e), (stride, e, 1)
        src = np.lib.stride_tricks.as_strided(mem[p.base:], shape=shape, strides=strides,
                                              writeable=False)
        block[:vr, :vc] = src
        valid[:vr, :vc] = True
    tiles = []
    dest = p.layout.dest
    for k, (queue, size) in enumerate(p.outputs):
        r, c = pl.band_origin(k)
        band = block[r:r + pl.out_rows, c:c + pl.out_cols]
        vband = np.broadcast_to(valid[r:r + pl.out_rows, c:c + pl.out_cols, None],
                                band.shape)
        data = to_tile(band, dest, esize=e).reshape(-1)
        vmask = to_tile(vband, dest, esize=e).reshape(-1)
        tiles.append(_image(pl, k, queue, size, data.copy(), vmask.copy()))
    return tiles


def _image(pl: TLoadPlan, k: int, queue: str, size: int, data, valid) -> TileImage:
    p = pl.params
    r, c = pl.band_origin(k)
    vr = max(0, min(pl.out_rows, p.valid_row - r))
    vc = max(0, min(pl.out_cols, p.valid_col - c))
    return TileImage(queue=queue, size=size, dtype=p.dtype, layout=p.layout.dest,
                     rows=pl.out_rows, cols=pl.out_cols, data=data, valid=valid,
                     valid_rows=vr if vc else 0, valid_cols=vc if vr else 0)


def tload_reference(mem: np.ndarray, p: TLoadParams, profile: Profile | str = Profile.FINITE,
                    lcfr: LCFR = LCFR()) -> list[TileImage]:
    """The seed's pseudo-code, transcribed loop for loop, once per output band.

    For output k the loops run over its own ``row`` x ``col``; (gi, gj) is the
    element's position in the whole block, which decides validity and the
    source address, exactly as in the seed's single-output loops.
    """
    mem = np.asarray(mem, dtype=np.uint8)
    pl = plan(p, mem.size, lcfr)
    size_of = p.esize
    pad = _pad(p, profile)
    null = p.pad is PadValue.Null
    src_addr_start = p.base
    stride = pl.stride
    tiles = []
    for k, (queue, size) in enumerate(p.outputs):
        tile = np.zeros(size, dtype=np.uint8)
        defined = np.zeros(size, dtype=bool)
        row, col = pl.out_rows, pl.out_cols
        r_off, c_off = pl.band_origin(k)
        dst_addr_start = 0
        for i in range(row):
            for j in range(col):
                gi, gj = r_off + i, c_off + j
                if gi < p.valid_row and gj < p.valid_col:
                    if p.layout.source_dn:
                        src_addr_row = src_addr_start + gj * stride
                        src_addr_elem = src_addr_row + gi * size_of
                    else:
                        src_addr_row = src_addr_start + gi * stride
                        src_addr_elem = src_addr_row + gj * size_of
                    dst_data_elem = mem[src_addr_elem:src_addr_elem + size_of]
                    ok = True
                else:
                    dst_data_elem = pad
                    ok = not null
                if p.layout is TLoadLayout.NORM:
                    dst_row_width = col * size_of
                    dst_addr_elem = dst_addr_start + i * dst_row_width + j * size_of
                elif p.layout in (TLoadLayout.ND2NZ, TLoadLayout.DN2NZ):
                    dst_frac_size, dst_frac_row = 512, 16
                    dst_frac_col = dst_frac_size // (dst_frac_row * size_of)
                    dst_frac_j = j // dst_frac_col
                    dst_addr_elem = dst_addr_start + (dst_frac_j * row * dst_frac_col
                                                      + i * dst_frac_col
                                                      + j % dst_frac_col) * size_of
                else:  # ND2ZN, DN2ZN
                    dst_frac_size, dst_frac_col = 512, 16
                    dst_frac_row = dst_frac_size // (dst_frac_col * size_of)
                    dst_frac_i = i // dst_frac_row
                    dst_addr_elem = dst_addr_start + (dst_frac_i * col * dst_frac_row
                                                      + j * dst_frac_row
                                                      + i % dst_frac_row) * size_of
                tile[dst_addr_elem:dst_addr_elem + size_of] = dst_data_elem
                defined[dst_addr_elem:dst_addr_elem + size_of] = ok
        tiles.append(_image(pl, k, queue, size, tile, defined))
    return tiles
