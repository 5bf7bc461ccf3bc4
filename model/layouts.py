"""Storage layouts of a tile register (seed 002; docs/design.md D4).

A logical matrix of R x C elements is stored in one of six orders:

====  ================================================================
ND    the whole matrix row-major
DN    the whole matrix column-major
ZZ    fractals row-major ("big Z"),    row-major inside ("small z")
ZN    fractals row-major ("big Z"),    column-major inside ("small n")
NZ    fractals column-major ("big N"), row-major inside ("small z")
NN    fractals column-major ("big N"), column-major inside ("small n")
====  ================================================================

The fractal is r0 x c0 elements.  By default it is one 512 B fractal: a row-major
("z") fractal has 16 rows of 32 B (c0 = 32/esize), a column-major ("n") fractal
has 16 columns of 32 B (r0 = 32/esize).  So NZ offset of element (i, j) is
``(j//c0)*R*c0 + i*c0 + j%c0`` and ZN offset ``(i//r0)*C*r0 + j*r0 + i%r0``.

Matrices are numpy arrays of shape (R, C, ...) -- any trailing axes (e.g. the
esize bytes of each element) travel with the element.  Everything is a
reshape/transpose, no Python loop.
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["Layout", "default_fractal", "to_tile", "from_tile", "tile_offsets", "FRACTAL_BYTES"]

FRACTAL_BYTES = 512


class Layout(enum.Enum):
    ND = "ND"
    DN = "DN"
    ZZ = "ZZ"
    ZN = "ZN"
    NZ = "NZ"
    NN = "NN"

    @property
    def fractal(self) -> bool:
        return self not in (Layout.ND, Layout.DN)

    @property
    def inner_row_major(self) -> bool:
        """Small z: row-major inside the fractal."""
        return self.value[1] == "Z"

    @property
    def outer_row_major(self) -> bool:
        """Big Z: fractals in row-major order."""
        return self.value[0] == "Z"


# (outer, inner) axis orders of the reshaped (R/r0, r0, C/c0, c0) array
_PERM = {
    Layout.ZZ: (0, 2, 1, 3),
    Layout.ZN: (0, 2, 3, 1),
    Layout.NZ: (2, 0, 1, 3),
    Layout.NN: (2, 0, 3, 1),
}


def default_fractal(layout: Layout, esize: int) -> tuple[int, int] | None:
    """(r0, c0) of one 512 B fractal; None for ND and DN."""
    layout = Layout(layout)
    if not layout.fractal:
        return None
    if 32 % esize:
        raise ValueError(f"esize={esize} does not divide a 32 B fractal row")
    if layout.inner_row_major:
        return 16, 32 // esize
    return 32 // esize, 16


def _check(rows, cols, fractal, layout):
    r0, c0 = fractal
    if rows % r0 or cols % c0:
        raise ValueError(f"a {layout.value} tile of {rows}x{cols} is not made of whole "
                         f"{r0}x{c0} fractals")


def to_tile(matrix: np.ndarray, layout: Layout | str, fractal: tuple[int, int] | None = None,
            esize: int | None = None) -> np.ndarray:
    """Logical matrix (R, C, ...) -> the tile's element sequence (R*C, ...), in storage order.

    ``fractal`` is (r0, c0) in elements; by default one 512 B fractal for
    ``esize`` (which defaults to the size of the trailing axes, in bytes, for a
    uint8 matrix of shape (R, C, esize)).
    """
    layout = Layout(layout)
    m = np.asarray(matrix)
    rows, cols = m.shape[:2]
    tail = m.shape[2:]
    if layout is Layout.ND:
        return m.reshape((rows * cols,) + tail)
    if layout is Layout.DN:
        return np.swapaxes(m, 0, 1).reshape((rows * cols,) + tail)
    fractal = fractal or default_fractal(layout, esize or _esize_of(m))
    _check(rows, cols, fractal, layout)
    r0, c0 = fractal
    blocks = m.reshape((rows // r0, r0, cols // c0, c0) + tail)
    perm = _PERM[layout] + tuple(range(4, 4 + len(tail)))
    return blocks.transpose(perm).reshape((rows * cols,) + tail)


def from_tile(seq: np.ndarray, layout: Layout | str, rows: int, cols: int,
              fractal: tuple[int, int] | None = None, esize: int | None = None) -> np.ndarray:
    """Inverse of :func:`to_tile`: storage-order elements (R*C, ...) -> matrix (R, C, ...)."""
    layout = Layout(layout)
    s = np.asarray(seq)
    tail = s.shape[1:]
    if s.shape[0] != rows * cols:
        raise ValueError(f"{s.shape[0]} elements do not fill a {rows}x{cols} matrix")
    if layout is Layout.ND:
        return s.reshape((rows, cols) + tail)
    if layout is Layout.DN:
        return np.swapaxes(s.reshape((cols, rows) + tail), 0, 1)
    fractal = fractal or default_fractal(layout, esize or _esize_of_seq(s))
    _check(rows, cols, fractal, layout)
    r0, c0 = fractal
    perm = _PERM[layout]
    shape4 = [(rows // r0, r0, cols // c0, c0)[p] for p in perm]
    inv = tuple(int(k) for k in np.argsort(perm)) + tuple(range(4, 4 + len(tail)))
    return s.reshape(tuple(shape4) + tail).transpose(inv).reshape((rows, cols) + tail)


def tile_offsets(layout: Layout | str, rows: int, cols: int,
                 fractal: tuple[int, int] | None = None, esize: int = 1) -> np.ndarray:
    """(R, C) array: the element offset in the tile of each logical element."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    seq = to_tile(idx, layout, fractal, esize)
    out = np.empty(rows * cols, dtype=np.int64)
    out[seq] = np.arange(rows * cols)
    return out.reshape(rows, cols)


def _esize_of(m):
    if m.dtype == np.uint8 and m.ndim == 3:
        return m.shape[2]
    return m.dtype.itemsize


def _esize_of_seq(s):
    if s.dtype == np.uint8 and s.ndim == 2:
        return s.shape[1]
    return s.dtype.itemsize
