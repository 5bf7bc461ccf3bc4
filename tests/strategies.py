"""Hypothesis strategies shared by the tests: TLOAD instructions with memory."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

from tilecosim.model.dtypes import DTYPES, PadValue
from tilecosim.model.layouts import default_fractal
from tilecosim.model.tload import TLoadLayout, TLoadParams

QUEUES = ("T", "U", "M", "N")


def _units(layout: TLoadLayout, esize: int) -> tuple[int, int]:
    dest = layout.dest
    return default_fractal(dest, esize) if dest.fractal else (1, 1)


@st.composite
def legal_tloads(draw, max_size: int = 4096, max_outputs: int = 8):
    """A legal TLOAD and a global memory that holds its whole source."""
    layout = draw(st.sampled_from(list(TLoadLayout)))
    dt = DTYPES[draw(st.sampled_from(list(DTYPES)))]
    e = dt.esize
    n = draw(st.integers(1, max_outputs))
    r_unit, c_unit = _units(layout, e)

    def col_choices(size):
        # per-output columns: a multiple of the fractal width that leaves whole fractal rows
        elems = size // e
        return [c for c in range(c_unit, elems + 1, c_unit)
                if elems % c == 0 and (elems // c) % r_unit == 0]

    size = draw(st.sampled_from([s for s in (256, 512, 1024, 2048, 4096, 8192)
                                 if s <= max_size and col_choices(s)]))
    elems = size // e
    out_cols = draw(st.sampled_from(col_choices(size)))
    out_rows = elems // out_cols
    if layout.source_dn:
        row, col = n * out_rows, out_cols
    else:
        row, col = out_rows, n * out_cols
    valid_row = draw(st.one_of(st.just(row), st.just(1), st.integers(0, row)))
    valid_col = draw(st.one_of(st.just(col), st.just(1), st.integers(0, col)))
    explicit_col = draw(st.booleans()) or valid_col != col
    dense = valid_row * e if layout.source_dn else valid_col * e
    stride = draw(st.one_of(st.none(), st.just(dense), st.integers(0, dense + 3 * e + 40)))
    base = draw(st.integers(0, 300))
    params = TLoadParams(layout=layout, dtype=dt, valid_col=valid_col, valid_row=valid_row,
                         col=col if explicit_col else None, base=base, stride=stride,
                         pad=draw(st.sampled_from(list(PadValue))),
                         outputs=tuple((draw(st.sampled_from(QUEUES)), size) for _ in range(n)))
    eff = dense if stride is None else stride
    outer, inner = (valid_col, valid_row) if layout.source_dn else (valid_row, valid_col)
    span = base + max(0, outer - 1) * eff + inner * e + 1
    extra = draw(st.integers(0, 64))
    seed = draw(st.integers(0, 2**32 - 1))
    mem = np.random.default_rng(seed).integers(0, 256, span + extra, dtype=np.uint8)
    return params, mem


@st.composite
def any_tloads(draw):
    """Random TLOAD fields, legal or not, with a small random memory."""
    layout = draw(st.sampled_from(list(TLoadLayout)))
    dt = DTYPES[draw(st.sampled_from(list(DTYPES)))]
    n = draw(st.integers(1, 9))
    sizes = [draw(st.sampled_from([128, 256, 384, 512, 1024, 2048]))] * n
    if draw(st.booleans()):
        sizes[-1] = draw(st.sampled_from([256, 512, 1024]))
    params = TLoadParams(layout=layout, dtype=dt, valid_col=draw(st.integers(0, 80)),
                         valid_row=draw(st.integers(0, 80)),
                         col=draw(st.one_of(st.none(), st.integers(0, 96))),
                         base=draw(st.integers(0, 4096)),
                         stride=draw(st.one_of(st.none(), st.integers(0, 256))),
                         pad=draw(st.sampled_from(list(PadValue))),
                         outputs=tuple((draw(st.sampled_from(QUEUES + ("ACC", "S"))), s)
                                       for s in sizes))
    mem = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(
        0, 256, draw(st.integers(1, 20000)), dtype=np.uint8)
    return params, mem


#: 64-bit operand values at the edges of the signed and unsigned ranges
WIDE = st.one_of(st.sampled_from([2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 2**64 - 2, 2**62,
                                  2**32, 2**32 - 1, 2**31]),
                 st.integers(2**63 - 4096, 2**63 + 4096), st.integers(2**64 - 4096, 2**64 - 1),
                 st.integers(0, 2**64 - 1))


@st.composite
def wide_tloads(draw):
    """A legal TLOAD whose one or two operands (base, stride, ValidRow, ValidCol, Col, a
    size) are replaced by 64-bit values near 2**63 or 2**64, as registers deliver them."""
    params, mem = draw(legal_tloads(max_size=2048, max_outputs=4))
    names = ["stride", "stride", "base", "valid_row", "valid_col", "col", "size"]
    fields = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
    change = {}
    for f in fields:
        v = draw(WIDE)
        if f == "size":
            change["outputs"] = tuple((q, v) for q, _ in params.outputs)
        else:
            change[f] = v
    return dataclasses.replace(params, **change), mem
