"""Element-wise tile arithmetic: TADD and TSUB (enough to run the seed 002 example).

Both sources must agree in data type, layout, shape and size; the result has
the same description.  Since the two images share a layout, the operation runs
element by element over the images directly.

* Integer types wrap (two's complement); the 4-bit pairs wrap per nibble.
* FP64, FP32, FP16, BF16: IEEE arithmetic, round to nearest even.
* TF32, HF32: computed in float64 and rounded once to 10 / 11 fraction bits.
* E4M3, E5M2, E8M0: computed in float64, rounded to the format by ml_dtypes
  (an E4M3 overflow becomes NaN, as the format has no infinity).
* HiF8 and the 4-bit float pairs have no arithmetic here: IllegalInstruction.
* ``arith="integer"`` (the configuration of the RTL tile system, which has no floating-point
  unit): every floating-point form is IllegalInstruction too, so that model and RTL agree
  exactly.  The default, ``"full"``, is the arithmetic above.

An element with any undefined byte in either source is undefined in the result, every byte
of it: a carry or a borrow takes the undefined byte into the others.  (Null padding leaves
whole elements undefined; a TLOAD of another element size that reads back undefined bytes a
TSTORE stored can leave a part of one.)
"""

from __future__ import annotations

import numpy as np

from .dtypes import decode, encode
from .faults import IllegalInstruction, IllegalParameter
from .tload import TileImage

__all__ = ["ELEMENTWISE_OPS", "ARITH", "elementwise", "supports_arithmetic"]

ELEMENTWISE_OPS = {"TADD": np.add, "TSUB": np.subtract}
_NO_ARITH = {"HiF8", "E2M1x2", "E1M2x2", "HiF4x2"}


#: the arithmetic configurations: "full" (integer and floating point) or "integer"
ARITH = ("full", "integer")


def supports_arithmetic(dt, arith: str = "full") -> bool:
    if arith == "integer":
        return bool(dt.is_int)
    return dt.name not in _NO_ARITH


def elementwise(op: str, a: TileImage, b: TileImage, queue: str,
                arith: str = "full") -> TileImage:
    fn = ELEMENTWISE_OPS[op]
    if arith not in ARITH:
        raise ValueError(f"arith={arith!r}: choose one of {', '.join(map(repr, ARITH))}")
    for fld in ("dtype", "layout", "rows", "cols", "size"):
        va, vb = getattr(a, fld), getattr(b, fld)
        if va != vb:
            raise IllegalParameter(fld, f"{_s(va)}/{_s(vb)}", f"{op} sources differ in {fld}")
    dt = a.dtype
    if not supports_arithmetic(dt, arith):
        why = (f"{op} has no arithmetic for {dt.name}" if arith == "full" or dt.name in _NO_ARITH
               else f"{op} on {dt.name}: this machine has integer arithmetic only "
                    f"(arith='integer')")
        raise IllegalInstruction("DataType", dt.name, why)
    e = dt.esize
    xa, xb = decode(dt, a.data.reshape(-1, e)), decode(dt, b.data.reshape(-1, e))
    if dt.is_int:
        wide = np.int64 if dt.kind == "sint" or dt.packed4 else np.uint64
        res = fn(xa.astype(wide), xb.astype(wide))
    else:
        with np.errstate(all="ignore"):
            res = fn(xa.astype(np.float64), xb.astype(np.float64))
    with np.errstate(all="ignore"):
        data = encode(dt, res).reshape(-1).copy()
    # an element with an undefined byte is undefined whole: a carry or borrow spreads it
    valid = np.repeat((a.valid & b.valid).reshape(-1, e).all(axis=1), e)
    return TileImage(queue=queue, size=a.size, dtype=dt, layout=a.layout, rows=a.rows,
                     cols=a.cols, data=data, valid=valid,
                     valid_rows=a.rows, valid_cols=a.cols)  # every element is a result


def _s(v):
    return getattr(v, "name", None) or getattr(v, "value", None) or str(v)
