"""LoadDataWithTranspose (seed 001, D10): worked examples, end-to-end matrix examples,
fast vs reference, and every fault."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Alignment, Fault, IllegalParameter, OutOfBounds, ParameterRange
from tilecosim.model.layouts import to_tile
from tilecosim.model.load_data import (LDT_DTYPES, LoadData2dTransposeParams as V1,
                             LoadData2dTransposeParamsV2 as V2, load_data_with_transpose,
                             load_data_with_transpose_reference)

BITS = LDT_DTYPES
FR = 512


def l1_random(nbytes, seed=1):
    return Buffer("L1", np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8))


# Independent square geometry, from the seed's words ("2 consecutive 16x32 fractals form a
# 32x32 square", "2 consecutive 16x8 fractals form a 16x16 square", int4b: even element low):
def square_at(raw: np.ndarray, bits: int) -> np.ndarray:
    if bits == 4:
        el = np.stack([raw & 0xF, raw >> 4], -1).reshape(-1)
        return el.reshape(64, 64)
    if bits == 8:
        return raw.reshape(32, 32)
    if bits == 16:
        return raw.view("<u2").reshape(16, 16)
    left, right = raw[:512].view("<u4").reshape(16, 8), raw[512:].view("<u4").reshape(16, 8)
    return np.hstack([left, right])


def fractals_after(square: np.ndarray, bits: int) -> list[np.ndarray]:
    """The transposed square cut into its destination fractals, as bytes."""
    t = square.T
    if bits == 32:
        parts = [t[:, :8], t[:, 8:]]
    else:
        parts = [t[16 * j:16 * j + 16] for j in range(t.shape[0] // 16)]
    out = []
    for p in parts:
        flat = np.ascontiguousarray(p).reshape(-1)
        if bits == 4:
            flat = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)
        else:
            flat = flat.astype({8: "<u1", 16: "<u2", 32: "<u4"}[bits]).view(np.uint8)
        out.append(flat)
    return out


SQ_BYTES = {4: 2048, 8: 1024, 16: 512, 32: 1024}


def expect(l1, dtype, placements, l0_bytes, src=0):
    """placements: (source square index, fractal j, destination 512 B slot), written by hand."""
    bits = BITS[dtype]
    l0 = np.zeros(l0_bytes, np.uint8)
    for sq, j, slot in placements:
        raw = l1.data[src + sq * SQ_BYTES[bits]: src + (sq + 1) * SQ_BYTES[bits]]
        l0[slot * FR:(slot + 1) * FR] = fractals_after(square_at(raw, bits), bits)[j]
    return l0


def run(l1, params, l0_bytes, dst="L0A", dst_addr=0, src_addr=0):
    l0 = Buffer(dst, l0_bytes)
    load_data_with_transpose(l1, l0, params, dst_addr, src_addr)
    ref = Buffer(dst, l0_bytes)
    load_data_with_transpose_reference(l1, ref, params, dst_addr, src_addr)
    np.testing.assert_array_equal(l0.data, ref.data)
    return l0.data


# --- "key features" worked examples ----------------------------------------------------------

KEY_EXAMPLES = [
    # dtype, params, placements (square, fractal, slot) -- from the seed's bullet points
    ("int8", dict(repeat_times=3, src_stride=1, dst_gap=1, dst_frac_gap=0),
     [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3), (2, 0, 4), (2, 1, 5)]),
    ("int8", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2),
     [(0, 0, 0), (0, 1, 3), (1, 0, 1), (1, 1, 4), (2, 0, 2), (2, 1, 5)]),
    ("half", dict(repeat_times=3, src_stride=1, dst_gap=0), [(0, 0, 0), (1, 0, 1), (2, 0, 2)]),
    ("float", dict(repeat_times=3, src_stride=1, dst_gap=1, dst_frac_gap=0),
     [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3), (2, 0, 4), (2, 1, 5)]),
    ("float", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2),
     [(0, 0, 0), (0, 1, 3), (1, 0, 1), (1, 1, 4), (2, 0, 2), (2, 1, 5)]),
    ("int4b", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2),
     [(0, 0, 0), (0, 1, 3), (0, 2, 6), (0, 3, 9), (1, 0, 1), (1, 1, 4), (1, 2, 7), (1, 3, 10),
      (2, 0, 2), (2, 1, 5), (2, 2, 8), (2, 3, 11)]),
    # "设置搬运起始位置": startIndex 1, repeatTimes 2, srcStride 1, dstGap 1, dstFracGap 0
    ("int8", dict(start_index=1, repeat_times=2, src_stride=1, dst_gap=1, dst_frac_gap=0),
     [(1, 0, 0), (1, 1, 1), (2, 0, 2), (2, 1, 3)]),
    # "非连续搬入": srcStride 2, dstGap 2, dstFracGap 1
    ("int8", dict(start_index=0, repeat_times=2, src_stride=2, dst_gap=2, dst_frac_gap=1),
     [(0, 0, 0), (0, 1, 2), (2, 0, 3), (2, 1, 5)]),
    # "控制地址更新方式": startIndex 2, srcStride 1, addrMode 1 (decrement), dstGap 1
    ("int8", dict(start_index=2, repeat_times=3, src_stride=1, addr_mode=True, dst_gap=1, dst_frac_gap=0),
     [(2, 0, 0), (2, 1, 1), (1, 0, 2), (1, 1, 3), (0, 0, 4), (0, 1, 5)]),
    # srcStride 0: the same square every iteration
    ("half", dict(repeat_times=3, src_stride=0, dst_gap=0), [(0, 0, 0), (0, 0, 1), (0, 0, 2)]),
]


@pytest.mark.parametrize("dtype,kw,placements", KEY_EXAMPLES)
def test_key_feature_examples(dtype, kw, placements):
    l1 = l1_random(16384)
    dst = "L0B" if dtype == "int4b" else "L0A"
    got = run(l1, V1(dtype, **kw), 8192, dst)
    np.testing.assert_array_equal(got, expect(l1, dtype, placements, 8192))


OUTER_LOOP = [
    # "分形转置" section: an outer loop of 2 calls, src offset 3 squares, dst offset as given
    ("int4b", dict(repeat_times=3, src_stride=1, dst_gap=7, dst_frac_gap=0), 4,
     lambda c, i, j: c * 4 + i * 8 + j),
    ("int4b", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2), 12,
     lambda c, i, j: c * 12 + i + 3 * j),
    ("int8", dict(repeat_times=3, src_stride=1, dst_gap=3, dst_frac_gap=0), 2,
     lambda c, i, j: c * 2 + i * 4 + j),
    ("int8", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2), 6,
     lambda c, i, j: c * 6 + i + 3 * j),
    ("half", dict(repeat_times=3, src_stride=1, dst_gap=0), 3, lambda c, i, j: c * 3 + i),
    ("float", dict(repeat_times=3, src_stride=1, dst_gap=3, dst_frac_gap=0), 2,
     lambda c, i, j: c * 2 + i * 4 + j),
    ("float", dict(repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=2), 6,
     lambda c, i, j: c * 6 + i + 3 * j),
]


@pytest.mark.parametrize("dtype,kw,dst_step,slot", OUTER_LOOP)
def test_fractal_transpose_examples_with_outer_loop(dtype, kw, dst_step, slot):
    """Two calls fill the destination without holes or overlap, square by square."""
    l1 = l1_random(32768)
    bits = BITS[dtype]
    nfrac = SQ_BYTES[bits] // FR
    dst = "L0B" if dtype == "int4b" else "L0A"
    l0 = Buffer(dst, 16384)
    ref = Buffer(dst, 16384)
    placements = []
    for c in range(2):
        p = V1(dtype, **kw)
        load_data_with_transpose(l1, l0, p, c * dst_step * FR, c * 3 * SQ_BYTES[bits])
        load_data_with_transpose_reference(l1, ref, p, c * dst_step * FR, c * 3 * SQ_BYTES[bits])
        placements += [(3 * c + i, j, slot(c, i, j)) for i in range(3) for j in range(nfrac)]
    slots = sorted(s for _, _, s in placements)
    assert slots == list(range(6 * nfrac))                       # dense, no overlap
    np.testing.assert_array_equal(l0.data, expect(l1, dtype, placements, 16384))
    np.testing.assert_array_equal(ref.data, l0.data)


def test_seed_int4b_first_example_overlaps():
    """Seed 001's first int4b bullet (dstGap 1, dstFracGap 0) makes the 4 fractals of
    iteration 0 and iteration 1 overlap under the seed's own definition of dstGap: the model
    reports it (the int8 text it was copied from has 2 fractals per iteration)."""
    l0 = Buffer("L0B", 8192)
    with pytest.raises(IllegalParameter, match="iteration 0 fractal 2 and iteration 1 fractal 0"):
        load_data_with_transpose(l1_random(16384), l0, V1("int4b", repeat_times=3, src_stride=1,
                                                           dst_gap=1, dst_frac_gap=0))
    assert not l0.data.any()


def test_int4b_packing_example():
    # int4b values 6 and 7 packed into one byte: 7 high, 6 low = 0b01110110 = 118
    raw = np.zeros(2048, np.uint8)
    raw[0] = 118                            # square element (0,0)=6, (0,1)=7
    l1 = Buffer("L1", raw)
    l0 = Buffer("L0B", 2048)
    load_data_with_transpose(l1, l0, V1("int4b", repeat_times=1))
    # transposed: (0,0)=6 stays, (1,0)=7 -> row 1 starts at byte 32 (64 nibbles per row)
    assert l0.data[0] == 6 and l0.data[32] == 7


def test_repeat_times_zero_is_a_noop():
    l0 = Buffer("L0A", 1024)
    pl = load_data_with_transpose(l1_random(4096), l0, V1("int8", repeat_times=0, start_index=9999))
    assert pl.bytes_moved == 0 and not l0.data.any()


# --- end-to-end matrix examples (A [40x70], B [70x50]) ------------------------------------------

def ceil_div(a, b):
    return -(-a // b)


def padded(mat, rows, cols):
    out = np.zeros((rows, cols) + mat.shape[2:], mat.dtype)
    out[:mat.shape[0], :mat.shape[1]] = mat
    return out


def as_bytes(mat, esize):
    return np.ascontiguousarray(mat).view(np.uint8).reshape(mat.shape[0], mat.shape[1], esize)


E2E = {"int8": (np.int8, 1, 32, 2), "half": (np.float16, 2, 16, 1)}


@pytest.mark.parametrize("dtype", ["int8", "half"])
def test_e2e_matrix_a_nz_to_zz(dtype):
    np_t, esize, c0, frac_num = E2E[dtype]
    m, k = 40, 70
    rng = np.random.default_rng(5)
    A = rng.integers(-100, 100, (m, k)).astype(np_t)
    sq = 16 * frac_num                                     # square side (32 int8, 16 half)
    K, M = ceil_div(k, sq) * sq, ceil_div(m, c0) * c0      # pad to whole squares / fractals
    l1_img = to_tile(as_bytes(padded(A.T, K, M), esize), "NZ")           # A^T in Nz
    l1 = Buffer("L1", l1_img.reshape(-1))
    l0a = Buffer("L0A", 64 * 1024)
    # the seed's snippet, with offsets in elements turned into bytes
    frac_shape, frac_size = (16, c0), 16 * c0
    dst_off = ceil_div(k, frac_shape[1]) * frac_size * frac_num
    src_off = ceil_div(k, frac_shape[0] * frac_num) * frac_size * frac_num
    p = V1(dtype, start_index=0, repeat_times=ceil_div(k, frac_shape[0] * frac_num), src_stride=1,
           dst_gap=0, dst_frac_gap=ceil_div(k, frac_shape[1]) - 1)
    for i in range(ceil_div(m, frac_shape[1])):
        load_data_with_transpose(l1, l0a, p, i * dst_off * esize, i * src_off * esize)
    Mz, Kz = ceil_div(m, frac_shape[1]) * (sq if dtype == "int8" else 16), ceil_div(k, c0) * c0
    want = to_tile(as_bytes(padded(A, Mz, Kz), esize), "ZZ").reshape(-1)
    np.testing.assert_array_equal(l0a.data[:want.size], want)


@pytest.mark.parametrize("dtype", ["int8", "half"])
def test_e2e_matrix_b_nz_to_zn(dtype):
    np_t, esize, c0, frac_num = E2E[dtype]
    k, n = 70, 50
    rng = np.random.default_rng(6)
    B = rng.integers(-100, 100, (k, n)).astype(np_t)
    sq = 16 * frac_num
    K, N = ceil_div(k, sq) * sq, ceil_div(n, sq) * sq
    l1 = Buffer("L1", to_tile(as_bytes(padded(B, K, N), esize), "NZ").reshape(-1))
    l0b = Buffer("L0B", 64 * 1024)
    frac_shape, frac_size = (16, c0), 16 * c0
    dst_off = ceil_div(n, frac_shape[0] * frac_num) * frac_size * frac_num
    src_off = frac_size * frac_num
    p = V1(dtype, start_index=0, repeat_times=ceil_div(n, frac_shape[1]),
           src_stride=ceil_div(k, frac_shape[0] * frac_num),
           dst_gap=1 if dtype == "int8" else 0, dst_frac_gap=0)
    for i in range(ceil_div(k, frac_shape[0] * frac_num)):
        load_data_with_transpose(l1, l0b, p, i * dst_off * esize, i * src_off * esize)
    want = to_tile(as_bytes(padded(B, K, N), esize), "ZN").reshape(-1)       # B in Zn
    np.testing.assert_array_equal(l0b.data[:want.size], want)


def test_e2e_matrix_a_float_zz_to_zz():
    m, k = 40, 70
    A = np.random.default_rng(7).standard_normal((m, k)).astype(np.float32)
    M, K = ceil_div(m, 16) * 16, ceil_div(k, 16) * 16
    l1 = Buffer("L1", to_tile(as_bytes(padded(A.T, K, M), 4), "ZZ").reshape(-1))   # A^T in Zz
    l0a = Buffer("L0A", 64 * 1024)
    frac_shape, frac_num, frac_size = (16, 8), 2, 128
    dst_off = ceil_div(k, frac_shape[1] * frac_num) * frac_size * frac_num
    src_off = frac_size * frac_num
    p = V1("float", start_index=0, repeat_times=ceil_div(k, frac_shape[1] * frac_num),
           src_stride=ceil_div(m, frac_shape[1] * frac_num), dst_gap=1, dst_frac_gap=0)
    for i in range(ceil_div(m, frac_shape[1] * frac_num)):
        load_data_with_transpose(l1, l0a, p, i * dst_off * 4, i * src_off * 4)
    want = to_tile(as_bytes(padded(A, M, K), 4), "ZZ").reshape(-1)
    np.testing.assert_array_equal(l0a.data[:want.size], want)


def test_v2_example_int8_b_nz_to_zn():
    """The seed's V2 snippet: B [k=128, n=256] int8 in Nz -> L0B in Zn (validates the
    inferred V2 source formula)."""
    k, n = 128, 256
    B = np.random.default_rng(8).integers(-128, 128, (k, n)).astype(np.int8)
    l1 = Buffer("L1", to_tile(as_bytes(B, 1), "NZ").reshape(-1))
    l0b = Buffer("L0B", 64 * 1024)
    k_step, n_step = ceil_div(k, 16), ceil_div(n, 32)
    for i in range(n_step):
        p = V2("int8", start_index=i * k_step, repeat_times=k_step // 2, src_stride=2,
               dst_gap=n_step * 2 - 1)
        load_data_with_transpose(l1, l0b, p, 1024 * i, 0)
    np.testing.assert_array_equal(l0b.data[:k * n], to_tile(as_bytes(B, 1), "ZN").reshape(-1))


# --- fast vs reference --------------------------------------------------------------------------

@st.composite
def ldt_cases(draw, dtype):
    v2 = dtype != "int4b" and draw(st.booleans())
    kw = dict(repeat_times=draw(st.integers(1 if v2 else 0, 4)),
              start_index=draw(st.integers(0, 6)), src_stride=draw(st.integers(0, 3)),
              dst_gap=draw(st.integers(0, 5)), dst_frac_gap=draw(st.integers(0, 4)),
              addr_mode=draw(st.booleans()))
    p = V2(dtype, src_frac_gap=draw(st.integers(0, 3)), **kw) if v2 else V1(dtype, **kw)
    dst = "L0B" if (v2 or dtype == "int4b" or draw(st.booleans())) else "L0A"
    return p, dst, draw(st.integers(0, 16)) * 32, draw(st.integers(0, 4)) * 512, draw(st.integers(0, 99))


@pytest.mark.parametrize("dtype", list(LDT_DTYPES))
@settings(max_examples=300)
@given(data=st.data())
def test_fast_equals_reference(dtype, data):
    p, dst, src_addr, dst_addr, seed = data.draw(ldt_cases(dtype))
    rng = np.random.default_rng(seed)
    l1 = Buffer("L1", rng.integers(0, 256, 24576, dtype=np.uint8))
    init = rng.integers(0, 256, 16384, dtype=np.uint8)
    a, b = Buffer(dst, init.copy()), Buffer(dst, init.copy())
    fa = fb = None
    try:
        load_data_with_transpose(l1, a, p, dst_addr, src_addr)
    except Fault as e:
        fa = e
    try:
        load_data_with_transpose_reference(l1, b, p, dst_addr, src_addr)
    except Fault as e:
        fb = e
    assert (fa is None) == (fb is None), (fa, fb)
    np.testing.assert_array_equal(a.data, b.data)          # a fault leaves both untouched
    if fa is not None:
        np.testing.assert_array_equal(a.data, init)


# --- faults -------------------------------------------------------------------------------------

@pytest.mark.parametrize("field,seed_name,value", [
    ("start_index", "startIndex", 65536), ("src_stride", "srcStride", -1),
    ("dst_gap", "dstGap", 70000), ("dst_frac_gap", "dstFracGap", 65536),
    ("repeat_times", "repeatTimes", 256)])
def test_parameter_ranges(field, seed_name, value):
    """The fields are snake_case; the fault names the parameter as the seed does."""
    with pytest.raises(ParameterRange, match=f"{seed_name}={value}: outside"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096), V1("int8", **{field: value}))


def test_v2_ranges_and_rules():
    l1 = l1_random(4096)
    with pytest.raises(ParameterRange, match="repeatTimes=0: outside 1..255"):
        load_data_with_transpose(l1, Buffer("L0B", 4096), V2("half", repeat_times=0))
    with pytest.raises(ParameterRange, match="srcFracGap=65536"):
        load_data_with_transpose(l1, Buffer("L0B", 4096), V2("half", src_frac_gap=65536))
    with pytest.raises(IllegalParameter, match="dst=L0A: LoadData2dTransposeParamsV2 writes L0B only"):
        load_data_with_transpose(l1, Buffer("L0A", 4096), V2("half"))
    with pytest.raises(IllegalParameter, match="dtype=int4b: V2 supports"):
        load_data_with_transpose(l1, Buffer("L0B", 4096), V2("int4b"))


def test_int4b_only_to_l0b():
    with pytest.raises(IllegalParameter, match="dtype=int4b: int4b may be loaded only to L0B"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096), V1("int4b", repeat_times=1))


def test_alignment():
    with pytest.raises(Alignment, match="L0A address=0x100: must be 512 B aligned"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096), V1("half", repeat_times=1), dst=256)
    with pytest.raises(Alignment, match="L1 address=0x10: must be 32 B aligned"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096), V1("half", repeat_times=1), src=16)


def test_out_of_bounds():
    with pytest.raises(OutOfBounds, match="L1 address=0x1000: reads 512 B, past the end of L1"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096), V1("half", repeat_times=1, start_index=8))
    with pytest.raises(OutOfBounds, match="L0A address=0x400: writes 512 B"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 1024), V1("half", repeat_times=3, src_stride=1))
    with pytest.raises(OutOfBounds, match="addrMode decrements below the start of L1"):
        load_data_with_transpose(l1_random(4096), Buffer("L0A", 4096),
                                 V1("half", repeat_times=3, start_index=1, src_stride=1, addr_mode=True))
