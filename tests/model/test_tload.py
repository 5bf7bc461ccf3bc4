"""TLOAD golden model: the fast model against the seed's loops, the seed's examples,
edge shapes, and one test per fault."""

import numpy as np
import pytest
from hypothesis import given, settings

from tilecosim.model.dtypes import DTYPES, PadValue, pad_bytes
from tilecosim.model.faults import Fault, IllegalInstruction, IllegalParameter, OutOfBounds
from tilecosim.model.tload import LCFR, TLoadLayout, TLoadParams, tload, tload_reference

from ..strategies import any_tloads, legal_tloads, wide_tloads

L = TLoadLayout


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.queue, x.size, x.rows, x.cols, x.layout) == (y.queue, y.size, y.rows, y.cols, y.layout)
        np.testing.assert_array_equal(x.valid, y.valid)
        # compare only defined bytes (Null pad is don't-care), and the zeros there too
        np.testing.assert_array_equal(np.where(x.valid, x.data, 0), np.where(y.valid, y.data, 0))


# --- fast vs reference ---------------------------------------------------------------------

@settings(max_examples=500)
@given(legal_tloads(), __import__("hypothesis").strategies.sampled_from(["finite", "ieee-inf"]))
def test_fast_equals_reference_on_legal_tloads(case, profile):
    params, mem = case
    same(tload(mem, params, profile), tload_reference(mem, params, profile))


@settings(max_examples=300)
@given(any_tloads())
def test_fast_and_reference_agree_on_any_tload_fault_or_not(case):
    agree(*case)


def agree(params, mem):
    """The fast model gives the seed's loops' answer: the same fault, or the same tiles."""
    try:
        want = tload_reference(mem, params)
    except Fault as f:
        with pytest.raises(type(f)) as got:
            tload(mem, params)
        assert got.value.code == f.code and got.value.message == f.message
        return
    same(tload(mem, params), want)


@settings(max_examples=400)
@given(wide_tloads())
def test_fast_and_reference_agree_on_64_bit_operands(case):
    """Registers hold 64-bit values: an operand near 2**63 or 2**64 (a stride of -1, a base
    past any memory) gets the reference model's answer from the fast model, a fault or the
    same tiles, never an exception of numpy's C longs."""
    agree(*case)


def test_a_stride_of_minus_one_over_one_row_is_not_read():
    """``--reg a1=-1`` as RegSrc1 of a one-row ND TLOAD: the stride never multiplies, the
    tile is the 16 elements at the base (the seed's loops)."""
    mem = np.arange(64, dtype=np.uint8)
    p = TLoadParams(layout=L.NORM, dtype="FP16", valid_col=16, outputs=(("T", 512),),
                    base=2, stride=2**64 - 1)
    got = tload(mem, p)
    same(got, tload_reference(mem, p))
    assert list(got[0].data[:32]) == list(range(2, 34))


def P(layout, dt, vc, vr, col, outputs, **kw):
    return TLoadParams(layout=layout, dtype=dt, valid_col=vc, valid_row=vr, col=col,
                       outputs=tuple(outputs), **kw)


EDGE = {
    # one 512 B fractal, fully valid
    "one_fractal_nz": P(L.ND2NZ, "FP16", 16, 16, 16, [("T", 512)]),
    "one_fractal_zn": P(L.DN2ZN, "S8", 16, 32, 16, [("T", 512)]),
    "valid_row_1": P(L.ND2ZN, "FP32", 16, 1, 16, [("T", 512)], pad=PadValue.Max),
    "valid_col_1": P(L.ND2NZ, "S16", 1, 16, 32, [("T", 1024)], pad=PadValue.Min),
    "col_eq_validcol": P(L.NORM, "U8", 64, 4, None, [("T", 256)]),
    "non_pow2": P(L.ND2NZ, "BF16", 13, 27, 32, [("T", 2048)], pad=PadValue.Zero),
    "non_pow2_dn": P(L.DN2NZ, "FP16", 19, 7, 32, [("T", 1024)], pad=PadValue.Zero),
    "eight_outputs_nd": P(L.ND2NZ, "S8", 200, 16, 256, [("T", 512)] * 8, pad=PadValue.Max),
    "eight_outputs_dn": P(L.DN2ZN, "FP32", 16, 60, 16, [("U", 512)] * 8, pad=PadValue.Min),
    "b64_nz": P(L.ND2NZ, "S64", 3, 16, 4, [("T", 512)], pad=PadValue.Min),
    "b64_zn": P(L.DN2ZN, "FP64", 16, 4, 16, [("T", 512)], pad=PadValue.Max),
    "b64_norm_strided": P(L.NORM, "U64", 5, 3, 8, [("M", 256)], stride=100),
    "pairs_s4": P(L.ND2ZN, "S4x2", 7, 30, 16, [("T", 512)], pad=PadValue.Min),
    "pairs_e2m1": P(L.DN2NZ, "E2M1x2", 30, 9, 32, [("N", 512)], pad=PadValue.Max),
    "all_pad": P(L.ND2NZ, "FP16", 0, 0, 16, [("T", 512)], pad=PadValue.Max),
    "largest_tile": P(L.ND2NZ, "FP16", 500, 100, 512, [("T", 256 * 1024)], pad=PadValue.Zero),
}


@pytest.mark.parametrize("name", list(EDGE))
def test_edge_shapes_fast_equals_reference(name):
    p = EDGE[name]
    mem = np.random.default_rng(len(name)).integers(0, 256, 1 << 20, dtype=np.uint8)
    same(tload(mem, p), tload_reference(mem, p))


# --- the seed's examples, with expectations built independently ---------------------------

def _gm(n):
    return np.random.default_rng(7).integers(0, 256, n, dtype=np.uint8)


def test_seed_assembly_example_1_norm():
    # TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>, a0=8, a1=118, a2=64
    mem = _gm(8192)
    p = P(L.NORM, "FP16", 100, 8, 128, [("T", 2048)], base=64)
    (t,) = tload(mem, p)
    assert (t.rows, t.cols) == (8, 128)                # Row = 2048 / (128 * 2)
    src = mem[64:64 + 8 * 200].reshape(8, 200)         # dense: stride = ValidCol * 2
    img = t.data.reshape(8, 256)
    np.testing.assert_array_equal(img[:, :200], src)
    assert not t.valid.reshape(8, 256)[:, 200:].any()  # Null pad: undefined
    assert t.valid.reshape(8, 256)[:, :200].all()


def test_seed_assembly_example_2_nd2nz():
    # TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2, a0], ->T<a1>  with a0 = stride
    mem = _gm(8192)
    p = P(L.ND2NZ, "FP16", 100, 16, 128, [("T", 4096)], base=0, stride=256, pad=PadValue.Zero)
    (t,) = tload(mem, p)
    assert (t.rows, t.cols) == (16, 128)
    m = np.zeros((16, 128), dtype=np.uint16)
    m[:, :100] = mem[:16 * 256].reshape(16, 256)[:, :200].copy().view(np.uint16)
    # NZ with 16 rows: the fractal columns of 16 elements follow one another
    want = np.concatenate([m[:, 16 * f:16 * f + 16].reshape(-1) for f in range(8)])
    np.testing.assert_array_equal(t.data.view(np.uint16), want)
    assert t.valid.all()


def test_seed_multi_output_example_1_nd2nz_three_column_bands():
    # ND2NZ to 3 tile registers, split along columns
    mem = _gm(8192)
    p = P(L.ND2NZ, "FP16", 48, 32, None, [("T", 1024)] * 3)
    tiles = tload(mem, p)
    m = mem[:32 * 96].reshape(32, 48, 2)
    for k, t in enumerate(tiles):
        assert (t.rows, t.cols) == (32, 16)
        # one fractal column wide: NZ is the band row-major
        np.testing.assert_array_equal(t.data, m[:, 16 * k:16 * k + 16].reshape(-1))


def test_seed_multi_output_example_2_dn2nz_two_row_bands():
    # DN2NZ to 2 tile registers, split along rows; element (i, j) at j*stride + i*2
    mem = _gm(8192)
    p = P(L.DN2NZ, "FP16", 16, 32, 16, [("T", 512), ("U", 512)], pad=PadValue.Zero)
    tiles = tload(mem, p)
    cols = mem[:16 * 64].reshape(16, 32, 2)            # column j holds rows 0..31
    m = np.swapaxes(cols, 0, 1)                        # (32, 16, 2)
    for k, t in enumerate(tiles):
        assert (t.queue, t.rows, t.cols) == ("TU"[k], 16, 16)
        np.testing.assert_array_equal(t.data, m[16 * k:16 * k + 16].reshape(-1))


def test_nd2zn_is_a_transpose_inside_each_fractal():
    mem = _gm(4096)
    p = P(L.ND2ZN, "S8", 16, 32, 16, [("T", 512)])
    (t,) = tload(mem, p)
    m = mem[:512].reshape(32, 16)
    np.testing.assert_array_equal(t.data, m.T.reshape(-1))   # one 32x16 column-major fractal


@pytest.mark.parametrize("profile", ["finite", "ieee-inf"])
@pytest.mark.parametrize("pad", ["Zero", "Max", "Min"])
@pytest.mark.parametrize("dt", ["FP16", "BF16", "FP32", "S8", "U16", "E5M2", "HiF8", "S4x2", "FP64"])
def test_padding_bytes(dt, pad, profile):
    t = DTYPES[dt]
    p = P(L.NORM, dt, 3, 1, 256 // t.esize, [("T", 256)], pad=PadValue[pad])
    (img,) = tload(np.zeros(4096, np.uint8), p, profile)
    m = img.data.reshape(-1, t.esize)
    want = np.frombuffer(pad_bytes(dt, pad, profile), np.uint8)
    assert (m[3:] == want).all() and img.valid.all()
    assert (m[:3] == 0).all()


# --- faults: one test each; nothing is produced ------------------------------------------

def raises(exc, p, mem_size=1 << 16, match=None, lcfr=LCFR()):
    mem = np.zeros(mem_size, np.uint8)
    with pytest.raises(exc, match=match):
        tload(mem, p, lcfr=lcfr)
    with pytest.raises(exc, match=match):
        tload_reference(mem, p, lcfr=lcfr)


def test_fault_tload_to_acc_is_illegal_instruction():
    raises(IllegalInstruction, P(L.NORM, "FP16", 16, 1, None, [("ACC", 512)]), match="DstTile0=ACC")


def test_fault_tload_to_s_is_illegal_instruction():
    raises(IllegalInstruction, P(L.NORM, "FP16", 16, 1, None, [("T", 512), ("S", 512)]),
           match="DstTile1=S")


def test_fault_more_than_eight_outputs():
    raises(IllegalInstruction, P(L.NORM, "S8", 16, 1, 18, [("T", 256)] * 9), match="outputs=9")


def test_fault_validcol_exceeds_col():
    raises(IllegalParameter, P(L.NORM, "FP16", 40, 1, 32, [("T", 512)]),
           match="ValidCol=40: exceeds Col=32")


def test_fault_validrow_exceeds_row():
    raises(IllegalParameter, P(L.NORM, "FP16", 32, 9, 32, [("T", 512)]),
           match="ValidRow=9: exceeds Row=8")


def test_fault_row_not_whole():
    raises(IllegalParameter, P(L.NORM, "FP16", 100, 1, None, [("T", 2048)]),
           match="Col=100: Row = 1\\*2048 B / \\(Col\\*2 B\\) is not a whole number")


def test_fault_col_zero():
    raises(IllegalParameter, P(L.NORM, "FP16", 0, 1, None, [("T", 512)]), match="Col=0")


def test_fault_col_not_multiple_of_outputs_nd():
    raises(IllegalParameter, P(L.NORM, "S8", 16, 1, 64, [("T", 256)] * 3),
           match="Col=64: an ND source is split into 3")


def test_fault_row_not_multiple_of_outputs_dn():
    raises(IllegalParameter, P(L.DN2NZ, "S8", 32, 4, 48, [("T", 256)] * 3),
           match="Row=16: a DN source is split into 3")


def test_fault_nz_shape_rule():
    # FP16 NZ: Row % 16; 512 B / (Col 32 * 2 B) = 8 rows
    raises(IllegalParameter, P(L.ND2NZ, "FP16", 32, 8, 32, [("T", 512)]),
           match="Row=8: a NZ tile of FP16 needs Row % 16 == 0")
    raises(IllegalParameter, P(L.DN2NZ, "FP32", 4, 16, 4, [("T", 256)]),
           match="Col=4: a NZ tile of FP32 needs Col % 8 == 0")


def test_fault_zn_shape_rule():
    raises(IllegalParameter, P(L.ND2ZN, "S8", 8, 32, 8, [("T", 256)]),
           match="Col=8: a ZN tile of S8 needs Col % 16 == 0")
    raises(IllegalParameter, P(L.DN2ZN, "FP16", 64, 4, 64, [("T", 512)]),
           match="Row=4: a ZN tile of FP16 needs Row % 16 == 0")


def test_fault_size_not_power_of_two_multiple():
    raises(IllegalParameter, P(L.NORM, "S8", 16, 1, None, [("T", 768)]),
           match="DstTile0.Size=768: a tile size must be 256 B times a power of two")


def test_fault_size_outside_lcfr():
    raises(IllegalParameter, P(L.NORM, "S8", 16, 1, None, [("T", 512 * 1024)]),
           match="outside the LCFR range")
    raises(IllegalParameter, P(L.NORM, "S8", 16, 1, None, [("T", 256)]),
           match="outside the LCFR range 512..4096", lcfr=LCFR(512, 4096))


def test_fault_output_sizes_differ():
    raises(IllegalParameter, P(L.NORM, "S8", 16, 1, 32, [("T", 256), ("U", 512)]),
           match="Size=256/512: all outputs")


def test_fault_out_of_bounds():
    raises(OutOfBounds, P(L.NORM, "S8", 16, 2, 128, [("T", 256)], base=1000),
           mem_size=1024, match="RegSrc0=1000: the block reads bytes 0x3e8..0x407")


def test_nothing_valid_reads_nothing():
    # no valid element: no memory read, so no OutOfBounds even with base far away
    (t,) = tload(np.zeros(16, np.uint8), P(L.NORM, "S8", 0, 0, 16, [("T", 256)], base=1 << 40,
                                           pad=PadValue.Zero))
    assert t.valid.all() and not t.data.any()
