"""TADD / TSUB against numpy and ml_dtypes arithmetic."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilecosim.model.dtypes import DTYPES, decode
from tilecosim.model.faults import IllegalInstruction, IllegalParameter
from tilecosim.model.layouts import Layout
from tilecosim.model.tload import TileImage
from tilecosim.model.vector import elementwise


def image(dt, raw, layout=Layout.ND):
    raw = np.asarray(raw, dtype=np.uint8).reshape(-1)
    return TileImage("T", raw.size, DTYPES[dt], layout, 1, raw.size // DTYPES[dt].esize,
                     raw.copy(), np.ones(raw.size, bool))


NP = {"S8": np.int8, "U8": np.uint8, "S16": np.int16, "U16": np.uint16, "S32": np.int32,
      "U32": np.uint32, "S64": np.int64, "U64": np.uint64, "FP16": np.float16,
      "FP32": np.float32, "FP64": np.float64, "BF16": ml_dtypes.bfloat16,
      "E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2}


@settings(max_examples=60)
@given(st.sampled_from(sorted(NP)), st.sampled_from(["TADD", "TSUB"]), st.integers(0, 2**32 - 1))
def test_matches_numpy_semantics(name, op, seed):
    t = np.dtype(NP[name])
    rng = np.random.default_rng(seed)
    raw_a = rng.integers(0, 256, 256, dtype=np.uint8)
    raw_b = rng.integers(0, 256, 256, dtype=np.uint8)
    a, b = raw_a.view(t), raw_b.view(t)
    with np.errstate(all="ignore"):
        if t.kind in "iu":
            want = (a + b) if op == "TADD" else (a - b)            # numpy wraps
        else:
            f = np.add if op == "TADD" else np.subtract
            want = f(a.astype(np.float64), b.astype(np.float64)).astype(t)
    got = elementwise(op, image(name, raw_a), image(name, raw_b), "U").data.view(t)
    np.testing.assert_array_equal(got.view(np.uint8) if t.kind in "iu" else got.astype(np.float64),
                                  want.view(np.uint8) if t.kind in "iu" else want.astype(np.float64))


def test_packed_int4_wraps_per_nibble():
    a = image("S4x2", [0x7f, 0x11])       # lanes (-1, 7), (1, 1)
    b = image("S4x2", [0x11, 0x88])       # lanes (1, 1),  (-8, -8)
    got = decode("S4x2", elementwise("TADD", a, b, "U").data[:, None])
    assert got.tolist() == [[0, -8], [-7, -7]]


def test_tf32_result_is_rounded():
    one = np.float32(1.0).view(np.uint32)
    tiny = np.float32(2.0 ** -12).view(np.uint32)   # below TF32's ulp at 1.0 (2**-10)
    a = image("TF32", np.array([one], np.uint32).view(np.uint8))
    b = image("TF32", np.array([tiny], np.uint32).view(np.uint8))
    assert elementwise("TADD", a, b, "U").data.view(np.float32)[0] == 1.0


def test_sources_must_agree():
    with pytest.raises(IllegalParameter, match="dtype=S8/U8"):
        elementwise("TADD", image("S8", [1] * 4), image("U8", [1] * 4), "U")
    with pytest.raises(IllegalParameter, match="layout=ND/NZ"):
        elementwise("TADD", image("S8", [1] * 4), image("S8", [1] * 4, Layout.NZ), "U")


@pytest.mark.parametrize("name", ["HiF8", "E2M1x2", "E1M2x2", "HiF4x2"])
def test_types_without_arithmetic(name):
    with pytest.raises(IllegalInstruction, match=f"DataType={name}"):
        elementwise("TSUB", image(name, [1] * 4), image(name, [1] * 4), "U")


def test_undefined_bytes_stay_undefined():
    a, b = image("U8", [1, 2, 3, 4]), image("U8", [1, 1, 1, 1])
    a.valid[2] = False
    assert elementwise("TADD", a, b, "U").valid.tolist() == [True, True, False, True]


def test_an_element_with_an_undefined_byte_is_undefined_whole():
    """S16 0x00FF + 0x0001: the carry out of the low byte makes the high byte 0x01, so an
    undefined low byte leaves the high one undefined too (regress --ops program found the
    RTL's high byte carrying what its SRAM held in the low one).  The other element keeps
    its bytes."""
    a, b = image("S16", [0xFF, 0x00, 0x05, 0x00]), image("S16", [0x01, 0x00, 0x01, 0x00])
    a.valid[0] = False
    got = elementwise("TADD", a, b, "U")
    assert got.valid.tolist() == [False, False, True, True]
    assert got.data[2:].tolist() == [0x06, 0x00]


@pytest.mark.parametrize("name", ["FP16", "FP32", "BF16", "E4M3"])
def test_integer_arithmetic_makes_float_forms_illegal(name):
    """arith="integer" (the RTL's): a floating-point TADD is IllegalInstruction; the default
    computes it."""
    a, b = _img(name, 1), _img(name, 2)
    assert elementwise("TADD", a, b, "U").dtype.name == name
    with pytest.raises(IllegalInstruction, match="integer arithmetic only"):
        elementwise("TADD", a, b, "U", arith="integer")


@pytest.mark.parametrize("name", ["S8", "U16", "S32", "U64", "S4x2"])
def test_integer_arithmetic_keeps_the_integer_forms(name):
    a, b = _img(name, 1), _img(name, 2)
    full = elementwise("TSUB", a, b, "U")
    assert np.array_equal(elementwise("TSUB", a, b, "U", arith="integer").data, full.data)


def test_the_machine_takes_the_arithmetic_as_a_parameter():
    from tilecosim.model.machine import Machine
    prog = ("TLOAD.NORM <LB0:16, LB1:8, FP16, Zero>, [a0], ->T<256>\n" * 2
            + "TADD T#1, T#2, ->U\n")
    Machine(1 << 12, {"a0": 0}).run(prog)
    with pytest.raises(IllegalInstruction):
        Machine(1 << 12, {"a0": 0}, arith="integer").run(prog)
    with pytest.raises(ValueError, match="arith='fast'"):
        Machine(1 << 12, arith="fast")


def _img(name, seed):
    raw = np.random.default_rng(seed).integers(0, 256, 64, dtype=np.uint8)
    if name in ("E4M3",):                               # no NaN patterns
        raw &= 0x77
    return image(name, raw)
