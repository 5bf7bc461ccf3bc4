"""Storage layouts (seed 002, D4): the seed's 4x4 example and the 512 B fractal geometry."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tilecosim.model.layouts import Layout, default_fractal, from_tile, tile_offsets, to_tile

# seed 002: Matrix A = {{1,2,3,4},{5,6,7,8},{9,10,11,12},{13,14,15,16}}, 2x2 fractals.
A = np.arange(1, 17).reshape(4, 4)

# Written out by hand from the seed's definitions (big = order of fractals,
# small = order inside a fractal):
SEED_4x4 = {
    "ND": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],      # row-major
    "DN": [1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 4, 8, 12, 16],      # column-major
    "ZZ": [1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16],      # big Z, small z
    "ZN": [1, 5, 2, 6, 3, 7, 4, 8, 9, 13, 10, 14, 11, 15, 12, 16],      # big Z, small n
    "NZ": [1, 2, 5, 6, 9, 10, 13, 14, 3, 4, 7, 8, 11, 12, 15, 16],      # big N, small z
    "NN": [1, 5, 2, 6, 9, 13, 10, 14, 3, 7, 4, 8, 11, 15, 12, 16],      # big N, small n
}


@pytest.mark.parametrize("layout", list(SEED_4x4))
def test_seed_4x4_example(layout):
    tile = to_tile(A, layout, fractal=(2, 2))
    assert tile.tolist() == SEED_4x4[layout]
    assert from_tile(tile, layout, 4, 4, fractal=(2, 2)).tolist() == A.tolist()


@pytest.mark.parametrize("esize", [1, 2, 4, 8])
def test_default_fractal_is_512_bytes(esize):
    assert default_fractal(Layout.NZ, esize) == (16, 32 // esize)
    assert default_fractal(Layout.ZZ, esize) == (16, 32 // esize)
    assert default_fractal(Layout.ZN, esize) == (32 // esize, 16)
    assert default_fractal(Layout.NN, esize) == (32 // esize, 16)
    for lay in ("NZ", "ZN", "ZZ", "NN"):
        r0, c0 = default_fractal(Layout(lay), esize)
        assert r0 * c0 * esize == 512
    assert default_fractal(Layout.ND, esize) is None


@pytest.mark.parametrize("esize", [1, 2, 4, 8])
def test_nz_and_zn_offsets_follow_d4(esize):
    rows, cols = 64, 2 * (32 // esize) * 3
    nz = tile_offsets("NZ", rows, cols, esize=esize)
    c0 = 32 // esize
    for i in range(rows):
        for j in range(cols):
            assert nz[i, j] == (j // c0) * rows * c0 + i * c0 + j % c0
    rows, cols = 3 * (32 // esize), 48
    zn = tile_offsets("ZN", rows, cols, esize=esize)
    r0 = 32 // esize
    for i in range(rows):
        for j in range(cols):
            assert zn[i, j] == (i // r0) * cols * r0 + j * r0 + i % r0


def test_bytes_travel_with_their_element():
    # an FP16 matrix as (R, C, 2) bytes: the two bytes of each element stay together
    m = np.arange(32 * 32, dtype=np.uint16).reshape(32, 32)
    raw = m.view(np.uint8).reshape(32, 32, 2)
    tile = to_tile(raw, "NZ")                      # esize from the trailing axis: c0 = 16
    assert tile.reshape(-1).view(np.uint16).tolist() == to_tile(m, "NZ", (16, 16)).tolist()


def test_partial_fractals_are_rejected():
    with pytest.raises(ValueError, match="whole 16x16 fractals"):
        to_tile(np.zeros((20, 16, 2), np.uint8), "NZ")


@given(st.sampled_from(list(Layout)), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 3))
def test_round_trip(layout, fr, fc, r0, c0):
    rows, cols = fr * r0, fc * c0
    m = np.arange(rows * cols * 3).reshape(rows, cols, 3)
    seq = to_tile(m, layout, (r0, c0))
    assert sorted(seq[:, 0].tolist()) == sorted(m[..., 0].reshape(-1).tolist())
    assert (from_tile(seq, layout, rows, cols, (r0, c0)) == m).all()
