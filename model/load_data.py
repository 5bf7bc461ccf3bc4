"""LoadDataWithTranspose: L1 -> L0A/L0B with a square-block transpose (seed 001; docs/design.md D10).

The square, per data type (elements; int4b counts nibbles, the even element in
the low nibble of its byte):

=========  ========  ====================================================
type       square    made of
=========  ========  ====================================================
int4b      64 x 64   4 fractals of 16x64, stacked (rows 0-15, 16-31, ...)
(u)int8    32 x 32   2 fractals of 16x32, stacked
half/bf16  16 x 16   1 fractal
float,     16 x 16   2 fractals of 16x8 SIDE BY SIDE (columns 0-7, 8-15):
(u)int32             the L1 matrix is in ZZ or ZN order
=========  ========  ====================================================

Fields are snake_case (``repeat_times``, ``dst_frac_gap``); messages and JSON use the seed's
names (``repeatTimes``, ``dstFracGap``: :data:`SEED_NAMES`).

Iteration ``i`` (V1) reads the square at ``(startIndex +/- i*srcStride)`` squares
from ``src`` (``-`` when addrMode is set), transposes it, and splits the result
into fractals again: 16-row fractals (b32: its left and right 16x8 halves).
Fractal ``j`` of iteration ``i`` is written at
``dst + ((dstGap + 1)*i + (dstFracGap + 1)*j) * 512``.

V2 (``LoadData2dTransposeParamsV2``, L0B only) counts startIndex and srcStride in
512 B fractals and separates the fractals of one square by srcFracGap: source
fractal ``j`` of iteration ``i`` is at
``src + (startIndex +/- i*srcStride + j*(1 + srcFracGap)) * 512``.
**This V2 formula is inferred** from the parameter descriptions and checked
against the seed's V2 example; it is not published.  The seed's V2 table also
says b32 iterations handle 4 fractals; we keep the V1 square (2 fractals of
16x8) for b32, as its transpose is only defined on that square.

Faults (checked in this order, before any access): ParameterRange (a field
outside its range), IllegalParameter (int4b to L0A, V2 to L0A, V2 with int4b),
Alignment (dst 512 B, src 32 B), then -- when repeatTimes > 0 --
IllegalParameter for destination fractals that overlap (the seed leaves that to
the programmer; we detect it), and OutOfBounds for a read or write outside a
buffer.  repeatTimes 0 is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .buffers import Buffer
from .faults import IllegalParameter, OutOfBounds, ParameterRange

__all__ = ["LDT_DTYPES", "Square", "SQUARES", "LoadData2dTransposeParams",
           "LoadData2dTransposeParamsV2", "load_data_with_transpose",
           "load_data_with_transpose_reference", "LdtPlan", "plan_ldt", "FRACTAL", "SEED_NAMES"]

FRACTAL = 512

#: Ascend C type name -> element bits
LDT_DTYPES = {"int4b": 4, "int8": 8, "uint8": 8, "half": 16, "bfloat16": 16,
              "float": 32, "int32": 32, "uint32": 32}
V2_DTYPES = tuple(t for t in LDT_DTYPES if t != "int4b")


@dataclass(frozen=True)
class Square:
    bits: int
    side: int          # elements per side
    nfrac: int         # 512 B fractals per square
    side_by_side: bool  # b32: fractals are the left/right halves

    @property
    def bytes(self) -> int:
        return self.nfrac * FRACTAL

    @property
    def frac_shape(self) -> tuple[int, int]:
        """(rows, cols) of one fractal, in elements."""
        return (16, self.side // self.nfrac) if self.side_by_side else (16, self.side)


SQUARES = {4: Square(4, 64, 4, False), 8: Square(8, 32, 2, False),
           16: Square(16, 16, 1, False), 32: Square(32, 16, 2, True)}


@dataclass(frozen=True)
class LoadData2dTransposeParams:
    """V1 parameters (seed 001, table 3)."""
    dtype: str
    repeat_times: int = 0
    start_index: int = 0
    src_stride: int = 0
    dst_gap: int = 0
    dst_frac_gap: int = 0
    addr_mode: bool = False

    version = 1

    def to_json(self) -> dict:
        return _to_json(self)


@dataclass(frozen=True)
class LoadData2dTransposeParamsV2:
    """V2 parameters (seed 001, table 4; Ascend 950, L0B only)."""
    dtype: str
    repeat_times: int = 1
    start_index: int = 0
    src_stride: int = 0
    dst_gap: int = 0
    dst_frac_gap: int = 0
    src_frac_gap: int = 0
    addr_mode: bool = False

    version = 2

    def to_json(self) -> dict:
        return _to_json(self)


Params = LoadData2dTransposeParams | LoadData2dTransposeParamsV2

#: field -> the seed's name of the parameter (Ascend C's): what messages and JSON say
SEED_NAMES = {"dtype": "dtype", "repeat_times": "repeatTimes", "start_index": "startIndex",
              "src_stride": "srcStride", "dst_gap": "dstGap", "dst_frac_gap": "dstFracGap",
              "src_frac_gap": "srcFracGap", "addr_mode": "addrMode"}

_RANGES = {"start_index": (0, 65535), "src_stride": (0, 65535), "dst_gap": (0, 65535),
           "dst_frac_gap": (0, 65535), "src_frac_gap": (0, 65535)}


def _to_json(p: Params) -> dict:
    """The parameters under the seed's names, with the version first."""
    return {"version": p.version,
            **{SEED_NAMES[k]: getattr(p, k) for k in p.__dataclass_fields__}}


@dataclass(frozen=True)
class LdtPlan:
    """A checked LoadDataWithTranspose: where every fractal comes from and goes to."""
    params: Params
    square: Square
    src_addr: np.ndarray      # (repeat, nfrac) byte address in L1 of each source fractal
    dst_addr: np.ndarray      # (repeat, nfrac) byte address in L0 of each destination fractal

    @property
    def bytes_moved(self) -> int:
        return int(self.src_addr.size) * FRACTAL


def _check_params(p: Params, dst_name: str) -> Square:
    if p.dtype not in LDT_DTYPES:
        raise IllegalParameter("dtype", p.dtype, f"not one of {', '.join(LDT_DTYPES)}")
    lo_rep = 1 if p.version == 2 else 0
    fields = dict(_RANGES, repeat_times=(lo_rep, 255))
    for name, (lo, hi) in fields.items():
        if not hasattr(p, name):
            continue
        v = getattr(p, name)
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not lo <= v <= hi:
            raise ParameterRange(SEED_NAMES[name], v, f"outside {lo}..{hi}")
    if dst_name not in ("L0A", "L0B"):
        raise IllegalParameter("dst", dst_name, "LoadDataWithTranspose writes L0A or L0B")
    if p.version == 2 and dst_name != "L0B":
        raise IllegalParameter("dst", dst_name, "LoadData2dTransposeParamsV2 writes L0B only")
    if p.version == 2 and p.dtype == "int4b":
        raise IllegalParameter("dtype", p.dtype, f"V2 supports {', '.join(V2_DTYPES)}")
    if p.dtype == "int4b" and dst_name != "L0B":
        raise IllegalParameter("dtype", p.dtype, "int4b may be loaded only to L0B")
    return SQUARES[LDT_DTYPES[p.dtype]]


def plan_ldt(p: Params, l1: Buffer, l0: Buffer, dst: int = 0, src: int = 0) -> LdtPlan:
    """Check every rule and compute all source/destination fractal addresses."""
    sq = _check_params(p, l0.name)
    # the bases' alignment alone: repeatTimes 0 accesses nothing, and every access of a
    # call that does is checked below (D10: repeatTimes 0 is a no-op)
    l0.check_alignment(dst, FRACTAL, "LoadDataWithTranspose dst")
    l1.check_alignment(src, 32, "LoadDataWithTranspose src")
    n = p.repeat_times
    i = np.arange(n, dtype=np.int64)[:, None]
    j = np.arange(sq.nfrac, dtype=np.int64)[None, :]
    sign = -1 if p.addr_mode else 1
    if p.version == 1:
        src_addr = src + (p.start_index + sign * i * p.src_stride) * sq.bytes + j * FRACTAL
    else:
        src_addr = src + (p.start_index + sign * i * p.src_stride + j * (1 + p.src_frac_gap)) * FRACTAL
    slots = (p.dst_gap + 1) * i + (p.dst_frac_gap + 1) * j
    dst_addr = dst + slots * FRACTAL
    if n:
        flat = slots.reshape(-1)
        uniq, first, counts = np.unique(flat, return_index=True, return_counts=True)
        if (counts > 1).any():
            s = int(uniq[counts > 1][0])
            hits = [(int(a), int(b)) for a, b in zip(*np.nonzero(slots == s))][:2]
            raise IllegalParameter("dstGap/dstFracGap", f"{p.dst_gap}/{p.dst_frac_gap}",
                                   f"destination fractals overlap: iteration {hits[0][0]} "
                                   f"fractal {hits[0][1]} and iteration {hits[1][0]} fractal "
                                   f"{hits[1][1]} both write {l0.name} {dst + s * FRACTAL:#x}")
        lo, hi = int(src_addr.min()), int(src_addr.max())
        if lo < 0:
            raise OutOfBounds("L1 address", lo, "addrMode decrements below the start of L1")
        l1.check(hi, FRACTAL, 1, "LoadDataWithTranspose src")
        l0.check(int(dst_addr.max()), FRACTAL, 1, "LoadDataWithTranspose dst", access="writes")
    return LdtPlan(p, sq, src_addr, dst_addr)


# --- element views ------------------------------------------------------------------------

_VIEW = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def _to_elems(raw: np.ndarray, bits: int) -> np.ndarray:
    """(..., 512) bytes -> (..., 512*8/bits) elements."""
    if bits == 4:
        return np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(raw.shape[:-1] + (-1,))
    return np.ascontiguousarray(raw).view(np.dtype(_VIEW[bits]).newbyteorder("<"))


def _to_bytes(el: np.ndarray, bits: int) -> np.ndarray:
    if bits == 4:
        pairs = el.reshape(el.shape[:-1] + (-1, 2))
        return (pairs[..., 0] | (pairs[..., 1] << 4)).astype(np.uint8)
    return np.ascontiguousarray(el.astype(np.dtype(_VIEW[bits]).newbyteorder("<"))).view(np.uint8)


def squares_of(fracs: np.ndarray, sq: Square) -> np.ndarray:
    """(R, nfrac, 512) fractal bytes -> (R, side, side) square elements."""
    r0, c0 = sq.frac_shape
    el = _to_elems(fracs, sq.bits).reshape(fracs.shape[0], sq.nfrac, r0, c0)
    if sq.side_by_side:
        return el.transpose(0, 2, 1, 3).reshape(-1, sq.side, sq.side)
    return el.reshape(-1, sq.side, sq.side)


def fractals_of(squares: np.ndarray, sq: Square) -> np.ndarray:
    """Inverse of :func:`squares_of`."""
    r0, c0 = sq.frac_shape
    if sq.side_by_side:
        el = squares.reshape(-1, sq.side, sq.nfrac, c0).transpose(0, 2, 1, 3)
    else:
        el = squares.reshape(-1, sq.nfrac, r0, c0)
    return _to_bytes(el.reshape(el.shape[0], sq.nfrac, -1), sq.bits)


def load_data_with_transpose(l1: Buffer, l0: Buffer, params: Params, dst: int = 0,
                             src: int = 0) -> LdtPlan:
    """Vectorized LoadDataWithTranspose; writes ``l0`` in place and returns the plan."""
    pl = plan_ldt(params, l1, l0, dst, src)
    if params.repeat_times == 0:
        return pl
    offs = np.arange(FRACTAL)
    fracs = l1.data[pl.src_addr[..., None] + offs]                  # (R, nfrac, 512)
    t = squares_of(fracs, pl.square).swapaxes(1, 2)                  # transpose each square
    out = fractals_of(np.ascontiguousarray(t), pl.square)            # (R, nfrac, 512)
    l0.data[pl.dst_addr[..., None] + offs] = out
    return pl


def load_data_with_transpose_reference(l1: Buffer, l0: Buffer, params: Params, dst: int = 0,
                                       src: int = 0) -> None:
    """Element by element, from the seed's description.

    For every iteration and every element (r, c) of the source square: find it
    in its source fractal, and write it at (c, r) of the transposed square in
    its destination fractal.  The writes go to a copy of L0 that replaces the
    real one only when no byte was written twice (the overlap fault).
    """
    _check_params(params, l0.name)
    # the bases' alignment alone: repeatTimes 0 accesses nothing, and every access of a
    # call that does is checked below (D10: repeatTimes 0 is a no-op)
    l0.check_alignment(dst, FRACTAL, "LoadDataWithTranspose dst")
    l1.check_alignment(src, 32, "LoadDataWithTranspose src")
    p = params
    sq = SQUARES[LDT_DTYPES[p.dtype]]
    bits, side = sq.bits, sq.side
    frac_rows, frac_cols = sq.frac_shape
    out = l0.data.copy()
    written = np.zeros(l0.size, dtype=np.int32)

    def frac_and_pos(r, c):
        """Fractal index and element position inside it of square element (r, c)."""
        if sq.side_by_side:                       # b32: left / right 16x8 halves
            return c // frac_cols, r * frac_cols + c % frac_cols
        return r // frac_rows, (r % frac_rows) * frac_cols + c

    def get(addr_of_frac, pos):
        byte = addr_of_frac + pos * bits // 8
        if bits == 4:
            if not 0 <= byte < l1.size:
                raise OutOfBounds("L1 address", byte, "read past L1")
            v = int(l1.data[byte])
            return (v >> 4) if pos % 2 else (v & 0xF)
        n = bits // 8
        if byte < 0:
            raise OutOfBounds("L1 address", byte, "addrMode decrements below the start of L1")
        if byte + n > l1.size:
            raise OutOfBounds("L1 address", byte, "read past L1")
        return int.from_bytes(l1.data[byte:byte + n].tobytes(), "little")

    def put(addr_of_frac, pos, value):
        byte = addr_of_frac + pos * bits // 8
        n = max(1, bits // 8)
        if byte + n > l0.size:
            raise OutOfBounds(f"{l0.name} address", byte, f"write past {l0.name}")
        if bits == 4:
            written[byte] += 1 if pos % 2 == 0 else 0
            old = int(out[byte])
            out[byte] = (old & 0x0F) | (value << 4) if pos % 2 else (old & 0xF0) | value
        else:
            written[byte:byte + n] += 1
            out[byte:byte + n] = np.frombuffer(value.to_bytes(n, "little"), np.uint8)

    sign = -1 if p.addr_mode else 1
    for i in range(p.repeat_times):
        for r in range(side):
            for c in range(side):
                j_src, pos_src = frac_and_pos(r, c)
                if p.version == 1:
                    square = p.start_index + sign * i * p.src_stride
                    src_frac = src + square * sq.bytes + j_src * FRACTAL
                else:
                    src_frac = src + (p.start_index + sign * i * p.src_stride
                                      + j_src * (1 + p.src_frac_gap)) * FRACTAL
                value = get(src_frac, pos_src)
                j_dst, pos_dst = frac_and_pos(c, r)            # transposed position
                dst_frac = dst + ((p.dst_gap + 1) * i + (p.dst_frac_gap + 1) * j_dst) * FRACTAL
                put(dst_frac, pos_dst, value)
    if (written > 1).any():
        byte = int(np.argmax(written > 1))
        raise IllegalParameter("dstGap/dstFracGap", f"{p.dst_gap}/{p.dst_frac_gap}",
                               f"destination fractals overlap at {l0.name} {byte:#x}")
    l0.data[:] = out
