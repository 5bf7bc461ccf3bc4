"""Data types: codes (D9), sizes (D1), pad values (D5), confirmed against ml_dtypes."""

import ml_dtypes
import numpy as np
import pytest

from tilecosim.model.dtypes import DTYPES, PadValue, decode, dtype, encode, pad_bytes

# D9, written out
CODES = {"FP64": 0, "FP32": 1, "TF32": 2, "HF32": 3, "FP16": 4, "BF16": 5, "HiF8": 6,
         "E4M3": 7, "E5M2": 8, "E2M1x2": 11, "E1M2x2": 12, "E8M0": 13, "HiF4x2": 14,
         "S64": 16, "S32": 17, "S16": 18, "S8": 19, "S4x2": 20, "U64": 24, "U32": 25,
         "U16": 26, "U8": 27, "U4x2": 28}

# seed 000's table: b64 / b32 / b16 / b8
WIDTH = {"b64": ["S64", "U64", "FP64"], "b32": ["S32", "U32", "FP32", "TF32", "HF32"],
         "b16": ["S16", "U16", "FP16", "BF16"],
         "b8": ["S8", "U8", "E4M3", "E5M2", "E8M0", "HiF8", "HiF4x2", "E1M2x2", "E2M1x2",
                "S4x2", "U4x2"]}

# D5, finite profile: (Max, Min) as written in docs/design.md
FINITE = {"FP64": (0x7fefffffffffffff, 0xffefffffffffffff), "FP32": (0x7f7fffff, 0xff7fffff),
          "TF32": (0x7f7fe000, 0xff7fe000), "HF32": (0x7f7ff000, 0xff7ff000),
          "FP16": (0x7bff, 0xfbff), "BF16": (0x7f7f, 0xff7f), "E4M3": (0x7e, 0xfe),
          "E5M2": (0x7b, 0xfb), "E2M1x2": (0x77, 0xff), "E1M2x2": (0x77, 0xff),
          "HiF4x2": (0x77, 0xff), "HiF8": (0x6e, 0xee), "E8M0": (0xfe, 0x00),
          "S64": (2**63 - 1, 2**63), "S32": (2**31 - 1, 2**31), "S16": (0x7fff, 0x8000),
          "S8": (0x7f, 0x80), "S4x2": (0x77, 0x88), "U64": (2**64 - 1, 0),
          "U32": (2**32 - 1, 0), "U16": (0xffff, 0), "U8": (0xff, 0), "U4x2": (0xff, 0)}
# ieee-inf profile: the float types with an infinity
INF = {"FP64": (0x7ff0000000000000, 0xfff0000000000000), "FP32": (0x7f800000, 0xff800000),
       "TF32": (0x7f800000, 0xff800000), "HF32": (0x7f800000, 0xff800000),
       "FP16": (0x7c00, 0xfc00), "BF16": (0x7f80, 0xff80), "E5M2": (0x7c, 0xfc),
       "HiF8": (0x6f, 0xef)}


def as_int(b: bytes) -> int:
    return int.from_bytes(b, "little")


def test_every_type_of_the_seed_table_with_its_code():
    assert {name: t.code for name, t in DTYPES.items()} == CODES
    for width, names in WIDTH.items():
        for name in names:
            assert DTYPES[name].width_class == width
    assert sorted(DTYPES) == sorted(n for ns in WIDTH.values() for n in ns)


@pytest.mark.parametrize("name", list(CODES))
def test_pad_bytes_finite_profile(name):
    t = DTYPES[name]
    mx, mn = FINITE[name]
    assert as_int(pad_bytes(t, PadValue.Max)) == mx
    assert as_int(pad_bytes(t, PadValue.Min)) == mn
    assert pad_bytes(t, PadValue.Zero) == bytes(t.esize)
    assert len(pad_bytes(t, "Max")) == t.esize


@pytest.mark.parametrize("name", list(CODES))
def test_pad_bytes_ieee_inf_profile(name):
    mx, mn = INF.get(name, FINITE[name])
    assert as_int(pad_bytes(name, PadValue.Max, "ieee-inf")) == mx
    assert as_int(pad_bytes(name, PadValue.Min, "ieee-inf")) == mn


ML = {"FP64": np.float64, "FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16,
      "E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2,
      "E8M0": ml_dtypes.float8_e8m0fnu}


@pytest.mark.parametrize("name", list(ML))
def test_float_extremes_agree_with_ml_dtypes(name):
    fi = ml_dtypes.finfo(ML[name])
    mx = pad_bytes(name, PadValue.Max)
    mn = pad_bytes(name, PadValue.Min)
    as_t = lambda b: np.frombuffer(b, dtype=ML[name])[0]
    assert as_t(mx) == fi.max
    # E8M0 has no sign: its smallest value is its smallest positive one
    assert as_t(mn) == (fi.smallest_normal if name == "E8M0" else fi.min)


def test_e2m1_lanes_and_extremes_agree_with_ml_dtypes():
    fi = ml_dtypes.finfo(ml_dtypes.float4_e2m1fn)
    lanes = np.arange(16, dtype=np.uint8)
    want = lanes.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    got = decode("E2M1x2", lanes[:, None])[:, 0]      # low nibble = the lane
    assert got.tolist() == want.tolist()
    mx = decode("E2M1x2", np.frombuffer(pad_bytes("E2M1x2", "Max"), np.uint8)[None])[0]
    mn = decode("E2M1x2", np.frombuffer(pad_bytes("E2M1x2", "Min"), np.uint8)[None])[0]
    assert mx.tolist() == [fi.max, fi.max] and mn.tolist() == [fi.min, fi.min]


@pytest.mark.parametrize("name,np_t", [("S64", np.int64), ("S32", np.int32), ("S16", np.int16),
                                       ("S8", np.int8), ("U64", np.uint64), ("U32", np.uint32),
                                       ("U16", np.uint16), ("U8", np.uint8)])
def test_integer_extremes_agree_with_numpy(name, np_t):
    info = np.iinfo(np_t)
    assert decode(name, np.frombuffer(pad_bytes(name, "Max"), np.uint8)[None]).item() == info.max
    assert decode(name, np.frombuffer(pad_bytes(name, "Min"), np.uint8)[None]).item() == info.min


def test_hif8_extremes_from_the_pto_format_definition():
    raw = lambda v: np.array([[v]], dtype=np.uint8)
    assert decode("HiF8", raw(0x6e))[0] == 2.0 ** 15       # largest finite
    assert decode("HiF8", raw(0xee))[0] == -2.0 ** 15
    assert decode("HiF8", raw(0x6f))[0] == np.inf          # spec: +inf carrier
    assert decode("HiF8", raw(0xef))[0] == -np.inf
    assert np.isnan(decode("HiF8", raw(0x80))[0])
    finite = decode("HiF8", np.arange(256, dtype=np.uint8)[:, None])
    finite = finite[np.isfinite(finite)]
    assert finite.max() == 2.0 ** 15 and finite.min() == -2.0 ** 15
    assert decode("HiF8", raw(0x01))[0] == 2.0 ** -22      # smallest denormal (m=1: 2**(1-23))


def test_e1m2_and_hif4_lanes():
    # PTO spec: lane 0x1 -> 1 * 2**-2, 0x9 the same magnitude negative; 0x7 = (4+3)/4
    for name in ("E1M2x2", "HiF4x2"):
        v = decode(name, np.array([[0x91], [0xf7]], dtype=np.uint8))
        assert v.tolist() == [[0.25, -0.25], [1.75, -1.75]]


def test_packed_pairs_even_element_in_low_nibble():
    v = decode("S4x2", np.array([[0x7f]], dtype=np.uint8))
    assert v.tolist() == [[-1, 7]]
    assert encode("S4x2", np.array([[-1, 7]])).tolist() == [[0x7f]]


@pytest.mark.parametrize("name", ["FP64", "FP32", "FP16", "BF16", "S32", "U16", "S8", "E4M3", "E5M2"])
def test_encode_decode_round_trip(name):
    values = np.array([0, 1, 2, 3, 4, 6, 8, 12, 16], dtype=np.float64)
    assert decode(name, encode(name, values)).astype(np.float64).tolist() == values.tolist()


@pytest.mark.parametrize("name,frac", [("TF32", 10), ("HF32", 11)])
def test_tf32_hf32_round_to_nearest_even(name, frac):
    one_ulp = 2.0 ** -frac
    vals = [1 + one_ulp / 2, 1 + 1.5 * one_ulp, 1 + one_ulp / 4, 3 * 2.0 ** 130]
    got = decode(name, encode(name, vals)).astype(np.float64).tolist()
    assert got == [1.0, 1 + 2 * one_ulp, 1.0, np.inf]
    low = encode(name, [1.1, -7.3]).reshape(-1, 4).view(np.uint32)[:, 0]
    assert (low & ((1 << (23 - frac)) - 1) == 0).all()


def test_lookup_errors_name_the_value():
    with pytest.raises(ValueError, match="DataType='fp17'"):
        dtype("fp17")
    with pytest.raises(ValueError, match="FP8 is ambiguous"):
        dtype("FP8")
    assert dtype(4).name == "FP16" and dtype("bf16").name == "BF16"
