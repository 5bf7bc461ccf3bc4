"""Data types of the TLOAD seed's table, with element size, numeric code and pad values.

Sources: seed 000 (the type table), docs/design.md D1 (packed 4-bit pairs are 1-byte
containers, even element in the low nibble), D5 (pad values and the two
profiles), D9 (numeric codes).  The extremes of HiF8, HiF4 and E1M2 follow the
PTO ISA format definitions (``pto-spec docs/arch/data-types/formats/``):

* HiF8: ``0x6f``/``0xef`` are +/-infinity, so the largest finite carrier is
  ``0x6e`` = 2**15 (dot field D4, exponent +15, significand 1.0).
* HiF4x2, E1M2x2: lane = sign, 1 exponent bit, 2 fraction bits, no infinity:
  ``0x7`` = +1.75 and ``0xf`` = -1.75 are the extremes.
* E2M1x2: ``0x7`` = +6 and ``0xf`` = -6.
* E8M0: no sign, ``0xff`` is NaN: ``0xfe`` = 2**127 is the largest and
  ``0x00`` = 2**-127 the smallest value.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DataType", "DTYPES", "dtype", "PadValue", "Profile", "PROFILES",
    "pad_bytes", "decode", "encode", "format_value",
]


class PadValue(enum.IntEnum):
    """B.DATR pad field (D9 numbering)."""
    Zero = 0
    Max = 1
    Min = 2
    Null = 3


class Profile(enum.Enum):
    """Pad-value profile (D5): ``finite`` pads Max/Min with the largest/smallest
    finite value; ``ieee-inf`` pads float types that have infinities with +/-inf."""
    FINITE = "finite"
    IEEE_INF = "ieee-inf"


PROFILES = tuple(p.value for p in Profile)


@dataclass(frozen=True)
class DataType:
    name: str
    code: int            # D9 numeric code
    esize: int           # container bytes per element (D1: 4-bit pairs are 1 byte)
    kind: str            # "sint", "uint", "float"
    lane_bits: int       # bits per logical value (4 for the x2 pairs)
    max_bits: int        # Max pad, finite profile (whole container)
    min_bits: int        # Min pad, finite profile
    inf_bits: tuple[int, int] | None = None  # (+inf, -inf) for the ieee-inf profile

    @property
    def bits(self) -> int:
        return self.esize * 8

    @property
    def width_class(self) -> str:
        """b8 / b16 / b32 / b64, as the seed's table groups the types."""
        return f"b{self.bits}"

    @property
    def packed4(self) -> bool:
        return self.lane_bits == 4

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("sint", "uint")

    def __str__(self) -> str:
        return self.name


def _sint(bits):
    return (1 << (bits - 1)) - 1, 1 << (bits - 1)


def _uint(bits):
    return (1 << bits) - 1, 0


_TABLE = [
    # name, code, esize, kind, lane bits, max, min, (inf, -inf)
    DataType("FP64", 0, 8, "float", 64, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
             (0x7FF0000000000000, 0xFFF0000000000000)),
    DataType("FP32", 1, 4, "float", 32, 0x7F7FFFFF, 0xFF7FFFFF, (0x7F800000, 0xFF800000)),
    DataType("TF32", 2, 4, "float", 32, 0x7F7FE000, 0xFF7FE000, (0x7F800000, 0xFF800000)),
    DataType("HF32", 3, 4, "float", 32, 0x7F7FF000, 0xFF7FF000, (0x7F800000, 0xFF800000)),
    DataType("FP16", 4, 2, "float", 16, 0x7BFF, 0xFBFF, (0x7C00, 0xFC00)),
    DataType("BF16", 5, 2, "float", 16, 0x7F7F, 0xFF7F, (0x7F80, 0xFF80)),
    DataType("HiF8", 6, 1, "float", 8, 0x6E, 0xEE, (0x6F, 0xEF)),
    DataType("E4M3", 7, 1, "float", 8, 0x7E, 0xFE),
    DataType("E5M2", 8, 1, "float", 8, 0x7B, 0xFB, (0x7C, 0xFC)),
    DataType("E2M1x2", 11, 1, "float", 4, 0x77, 0xFF),
    DataType("E1M2x2", 12, 1, "float", 4, 0x77, 0xFF),
    DataType("E8M0", 13, 1, "float", 8, 0xFE, 0x00),
    DataType("HiF4x2", 14, 1, "float", 4, 0x77, 0xFF),
    DataType("S64", 16, 8, "sint", 64, *_sint(64)),
    DataType("S32", 17, 4, "sint", 32, *_sint(32)),
    DataType("S16", 18, 2, "sint", 16, *_sint(16)),
    DataType("S8", 19, 1, "sint", 8, *_sint(8)),
    DataType("S4x2", 20, 1, "sint", 4, 0x77, 0x88),
    DataType("U64", 24, 8, "uint", 64, *_uint(64)),
    DataType("U32", 25, 4, "uint", 32, *_uint(32)),
    DataType("U16", 26, 2, "uint", 16, *_uint(16)),
    DataType("U8", 27, 1, "uint", 8, *_uint(8)),
    DataType("U4x2", 28, 1, "uint", 4, 0xFF, 0x00),
]

#: name -> DataType, in the order of D9's codes.
DTYPES: dict[str, DataType] = {t.name: t for t in _TABLE}
_BY_CODE = {t.code: t for t in _TABLE}
_ALIASES = {"FP8": None}  # the seed writes "FP8(E4M3, E5M2)": FP8 alone is ambiguous


def dtype(key) -> DataType:
    """Look a data type up by name (case-insensitive), code, or pass one through."""
    if isinstance(key, DataType):
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        try:
            return _BY_CODE[int(key)]
        except KeyError:
            raise ValueError(f"DataType code {key} is not defined "
                             f"(codes: {sorted(_BY_CODE)})") from None
    if isinstance(key, str):
        for name, t in DTYPES.items():
            if name.lower() == key.lower():
                return t
        if key.upper() in _ALIASES:
            raise ValueError("DataType=FP8 is ambiguous: write E4M3 or E5M2")
        raise ValueError(f"DataType={key!r} is not one of {', '.join(DTYPES)}")
    raise ValueError(f"DataType={key!r} is not a data type")


def pad_bytes(dt: DataType | str, pad: PadValue | str, profile: Profile | str = Profile.FINITE) -> bytes:
    """The esize-byte little-endian pattern written for one padded element.

    ``Null`` has no pattern (the bytes are undefined); it returns zeros, and the
    model marks such bytes don't-care.
    """
    dt = dtype(dt)
    pad = pad if isinstance(pad, PadValue) else PadValue[pad]
    profile = Profile(profile)
    if pad in (PadValue.Zero, PadValue.Null):
        bits = 0
    elif profile is Profile.IEEE_INF and dt.inf_bits is not None:
        bits = dt.inf_bits[0 if pad is PadValue.Max else 1]
    else:
        bits = dt.max_bits if pad is PadValue.Max else dt.min_bits
    return bits.to_bytes(dt.esize, "little")


# --- value conversion -------------------------------------------------------------------

_NUMPY_VIEW = {
    "FP64": np.float64, "FP32": np.float32, "TF32": np.float32, "HF32": np.float32,
    "FP16": np.float16,
    "S64": np.int64, "S32": np.int32, "S16": np.int16, "S8": np.int8,
    "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
}
#: the types ml_dtypes gives numpy, by the name of ml_dtypes' own
_ML_DTYPES = {"BF16": "bfloat16", "E4M3": "float8_e4m3fn", "E5M2": "float8_e5m2",
              "E8M0": "float8_e8m0fnu"}


def _numpy_type(name: str):
    """The numpy type that holds a value of the data type ``name``, or None (HiF8, the 4-bit
    pairs: decoded by hand)."""
    if name in _ML_DTYPES:
        # deferred: importing ml_dtypes takes 0.7 s, three quarters of the start of every
        # tilecosim process, and only these four types need it
        import ml_dtypes
        return getattr(ml_dtypes, _ML_DTYPES[name])
    return _NUMPY_VIEW.get(name)


def _hif8_value(v: int) -> float:
    """HiF8 carrier -> value, after the PTO spec's HiF8FiniteDecomposition."""
    if v == 0x80:
        return float("nan")
    if v == 0x6F:
        return float("inf")
    if v == 0xEF:
        return float("-inf")
    sign = -1.0 if v & 0x80 else 1.0
    dot = (v >> 3) & 0xF
    if dot == 0:                       # denormal
        m = v & 7
        return 0.0 if m == 0 else sign * 2.0 ** (m - 23)
    if dot == 1:                       # D0
        return sign * (8 + (v & 7)) * 2.0 ** -3
    if (v >> 4) & 7 == 0b001:          # D1
        e = -1 if v & 0x08 else 1
        return sign * (8 + (v & 7)) * 2.0 ** (e - 3)
    if (v >> 5) & 3 == 0b01:           # D2
        mag = 2 + ((v >> 3) & 1)
        e = -mag if v & 0x10 else mag
        return sign * (8 + (v & 7)) * 2.0 ** (e - 3)
    if (v >> 5) & 3 == 0b10:           # D3
        mag = 4 + ((v >> 2) & 3)
        e = -mag if v & 0x10 else mag
        return sign * (4 + (v & 3)) * 2.0 ** (e - 2)
    mag = 8 + ((v >> 1) & 7)           # D4
    e = -mag if v & 0x10 else mag
    return sign * (2 + (v & 1)) * 2.0 ** (e - 1)


def _e2m1_value(n: int) -> float:
    sign = -1.0 if n & 8 else 1.0
    e, m = (n >> 1) & 3, n & 1
    return sign * (m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))


def _e1m2_value(n: int) -> float:
    """E1M2 and HiF4 lanes (PTO spec: exponent 0 -> frac/4, 1 -> (4+frac)/4)."""
    sign = -1.0 if n & 8 else 1.0
    e, f = (n >> 2) & 1, n & 3
    return sign * ((4 + f) if e else f) / 4.0


_LUT8 = {"HiF8": np.array([_hif8_value(v) for v in range(256)])}
_LUT4 = {
    "E2M1x2": np.array([_e2m1_value(n) for n in range(16)]),
    "E1M2x2": np.array([_e1m2_value(n) for n in range(16)]),
    "HiF4x2": np.array([_e1m2_value(n) for n in range(16)]),
    "S4x2": np.array([n - 16 if n & 8 else n for n in range(16)], dtype=np.int64),
    "U4x2": np.arange(16, dtype=np.int64),
}


def decode(dt: DataType | str, raw: np.ndarray) -> np.ndarray:
    """Bytes -> numbers.  ``raw`` is a uint8 array whose last axis is esize bytes
    (little-endian); the result drops that axis.  Packed 4-bit pairs give a
    trailing axis of 2 (even = low nibble, odd = high nibble)."""
    dt = dtype(dt)
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if dt.packed4:
        b = raw[..., 0]
        lut = _LUT4[dt.name]
        return np.stack([lut[b & 0xF], lut[b >> 4]], axis=-1)
    if dt.name in _LUT8:
        return _LUT8[dt.name][raw[..., 0]]
    view = raw.view(np.dtype(_numpy_type(dt.name)).newbyteorder("<"))[..., 0]
    return view


def encode(dt: DataType | str, values) -> np.ndarray:
    """Numbers -> bytes (uint8, trailing esize axis), rounding to nearest even.

    Defined for the integer types (wrapping) and the float types numpy or
    ml_dtypes can represent (FP64 FP32 TF32 HF32 FP16 BF16 E4M3 E5M2 E8M0);
    raises ``ValueError`` naming the type otherwise.
    """
    dt = dtype(dt)
    values = np.asarray(values)
    if dt.packed4 and dt.is_int:
        v = np.asarray(values, dtype=np.int64) & 0xF
        if v.shape[-1:] != (2,):
            raise ValueError(f"{dt.name} values need a trailing axis of 2 (low, high nibble)")
        return (v[..., 0] | (v[..., 1] << 4)).astype(np.uint8)[..., None]
    if _numpy_type(dt.name) is None:
        raise ValueError(f"DataType={dt.name} has no numeric encoder")
    np_t = np.dtype(_numpy_type(dt.name))
    if dt.is_int:
        arr = np.asarray(values).astype(np.int64 if dt.kind == "sint" else np.uint64, casting="unsafe")
        arr = arr.astype(np_t, casting="unsafe")
    elif dt.name in ("TF32", "HF32"):
        arr = _round_fp32(values, 10 if dt.name == "TF32" else 11)
    else:
        arr = np.asarray(values, dtype=np.float64).astype(np_t)
    arr = np.ascontiguousarray(arr.astype(np_t.newbyteorder("<")))
    return arr.reshape(arr.shape + (1,)).view(np.uint8)


def _round_fp32(x, frac_bits: int) -> np.ndarray:
    """Round to a float32 carrier with ``frac_bits`` fraction bits (TF32 10, HF32 11),
    nearest even, in one rounding step from float64; overflow gives infinity."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, ex = np.frexp(x)                      # |x| = m * 2**ex, m in [0.5, 1)
        quantum = np.exp2(np.maximum(ex - 1 - frac_bits, -126 - frac_bits).astype(np.float64))
        r = np.round(x / quantum) * quantum
        top = (2.0 - 2.0 ** -frac_bits) * 2.0 ** 127
        r = np.where(np.abs(r) > top, np.copysign(np.inf, x), r)
        r = np.where(np.isfinite(x), r, x)
    return r.astype(np.float32)


def format_value(dt: DataType, value) -> str:
    """One element as a human reads it (floats compact, pairs as 'lo,hi')."""
    if dt.packed4:
        return ",".join(format_value(_LANE[dt.kind], v) for v in value)
    if dt.is_int:
        return str(int(value))
    f = float(value)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.6g}"


_LANE = {"sint": DTYPES["S8"], "uint": DTYPES["U8"], "float": DTYPES["FP32"]}
