"""Constrained-random TLOAD scenarios (reproducible from a seed).

:func:`random_tload` draws a legal TLOAD -- every output tile made of whole
fractals, valid sizes anywhere from 0 to the tile's extent, dense or strided
sources -- and the size of a global memory that holds its whole source.
"""

from __future__ import annotations

import random

from .dtypes import DTYPES, PadValue
from .layouts import default_fractal
from .tload import TLoadLayout, TLoadParams

__all__ = ["random_tload", "QUEUES"]

QUEUES = ("T", "U", "M", "N")


def _units(layout: TLoadLayout, esize: int) -> tuple[int, int]:
    dest = layout.dest
    return default_fractal(dest, esize) if dest.fractal else (1, 1)


def random_tload(rng: random.Random, layout: TLoadLayout | None = None, dtype: str | None = None,
                 sizes=(256, 512, 1024, 2048, 4096), n: int | None = None,
                 pad: PadValue | None = None) -> tuple[TLoadParams, int]:
    """(a legal TLOAD, bytes of memory it needs)."""
    layout = layout if layout is not None else rng.choice(list(TLoadLayout))
    dt = DTYPES[dtype or rng.choice(list(DTYPES))]
    e = dt.esize
    r_unit, c_unit = _units(layout, e)

    def col_choices(size):
        elems = size // e
        return [c for c in range(c_unit, elems + 1, c_unit)
                if elems % c == 0 and (elems // c) % r_unit == 0]

    size = rng.choice([s for s in sizes if col_choices(s)])
    n = n or rng.randint(1, 8)
    out_cols = rng.choice(col_choices(size))
    out_rows = size // e // out_cols
    row, col = (n * out_rows, out_cols) if layout.source_dn else (out_rows, n * out_cols)
    pick = lambda hi: rng.choice([hi, 1, rng.randint(0, hi), rng.randint(max(0, hi - 3), hi)])
    valid_row, valid_col = pick(row), pick(col)
    dense = (valid_row if layout.source_dn else valid_col) * e
    stride = rng.choice([None, dense, dense + e * rng.randint(0, 9), rng.randint(0, dense + 64)])
    base = rng.randint(0, 256)
    params = TLoadParams(layout=layout, dtype=dt, valid_col=valid_col, valid_row=valid_row,
                         col=col if (valid_col != col or rng.random() < 0.5) else None,
                         base=base, stride=stride,
                         pad=pad if pad is not None else rng.choice(list(PadValue)),
                         outputs=tuple((rng.choice(QUEUES), size) for _ in range(n)))
    eff = dense if stride is None else stride
    outer, inner = (valid_col, valid_row) if layout.source_dn else (valid_row, valid_col)
    span = base + max(0, outer - 1) * eff + inner * e + 1
    return params, span + rng.randint(0, 64)
