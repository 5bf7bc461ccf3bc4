"""LoadAlign / StoreAlign: UB <-> RegTensor with distribution modes (seed 003; D11, D12).

A RegTensor is VL bytes (default 256).  ``T`` is the element width of the
operation (b8, b16, b32, b64); it sets the unit of the PostUpdate stride and of
the AddrReg offset (elements), and b64 allows only the NORM modes.  The width a
mode moves is the one in its name (``DIST_BRC_B16`` broadcasts 2-byte elements
whatever T is); ``DIST_NORM`` of StoreAlign uses T.

Addressing (the three interfaces of the seed):

* plain       -- access at ``addr``;
* PostUpdate  -- access at ``addr``, then ``addr += stride * sizeof(T)`` is returned;
* AddrReg     -- access at ``addr + offset * sizeof(T)`` (``CreateAddrReg<T>(i, n)`` gives
  ``offset = i * n``).

Alignment of each mode (bytes, for the address and for stride/offset * sizeof(T)):

==============================  ===================  ===========================
LoadDist                        reads                alignment
==============================  ===================  ===========================
DIST_NORM                       VL                   32
DIST_BRC_B8/B16/B32             1 element            1 / 2 / 4
DIST_US_B8/B16                  VL/2                 min(32, VL/2)
DIST_DS_B8/B16                  2*VL                 32
DIST_UNPACK_B8/B16/B32          VL/2                 min(32, VL/2)
DIST_UNPACK4_B8                 VL/4                 min(32, VL/4)
DIST_BLK                        32                   32
DIST_E2B_B16 / DIST_E2B_B32     VL/32 elements       VL/16 / VL/8
DIST_DINTLV_B8/B16/B32 (dual)   2*VL                 32
==============================  ===================  ===========================

A read or write past the end of UB is OutOfBounds; a misaligned address, stride
or offset is Alignment; a mode that does not exist for T (b64 with anything but
NORM) or an addressing the mode does not have is IllegalParameter.

**RegTraitNumTwo** (a RegTensor of two VL registers, for b64 and complex32) is
modelled as the NORM single load/store of 2*VL bytes in which each element is
split in halves: register 0 holds the low half of every element (the low 32 bits
of a b64, the real part of a complex32), register 1 the high half.  It exists
for the plain and PostUpdate interfaces only (seed 003's support table); the
split itself is our inference, as the seed does not define the register layout.

MaskReg: VL/8 bits, one per byte lane; an element of b16 (b32, b64) is active
when the bit of its first byte is set.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .buffers import Buffer
from .faults import Alignment, IllegalParameter

__all__ = ["LoadDist", "StoreDist", "MaskPattern", "WIDTHS", "Addressing", "LoadResult",
           "load_align", "load_align_reference", "store_align", "store_align_reference",
           "create_mask", "update_mask", "create_addr_reg", "mask_elements", "DUAL_LOADS",
           "DUAL_STORES", "load_align_geometry", "store_align_geometry"]

WIDTHS = {"b8": 1, "b16": 2, "b32": 4, "b64": 8}


class _Dist:
    @property
    def width(self) -> int | None:
        """Element bytes named by the mode (``DIST_BRC_B16`` -> 2; None when it names none)."""
        tail = self.name.rsplit("_B", 1)
        return int(tail[1]) // 8 if len(tail) == 2 and tail[1].isdigit() else None

    @property
    def family(self) -> str:
        """The mode without its width: ``DIST_BRC_B16`` -> ``BRC``, ``DIST_UNPACK4_B8`` ->
        ``UNPACK4``, ``DIST_FIRST_ELEMENT_B32`` -> ``FIRST_ELEMENT``, ``DIST_NORM`` -> ``NORM``."""
        name = self.name.removeprefix("DIST_")
        return name.rsplit("_B", 1)[0] if self.width else name


class LoadDist(_Dist, enum.IntEnum):
    """LoadDist (D12 numbering)."""
    DIST_NORM = 0
    DIST_BRC_B8 = 1
    DIST_BRC_B16 = 2
    DIST_BRC_B32 = 3
    DIST_US_B8 = 6
    DIST_US_B16 = 7
    DIST_DS_B8 = 8
    DIST_DS_B16 = 9
    DIST_DINTLV_B8 = 11
    DIST_DINTLV_B16 = 12
    DIST_UNPACK_B8 = 13
    DIST_UNPACK_B16 = 14
    DIST_BLK = 15
    DIST_E2B_B16 = 16
    DIST_E2B_B32 = 17
    DIST_UNPACK_B32 = 18
    DIST_DINTLV_B32 = 19
    DIST_UNPACK4_B8 = 20

    @property
    def dual(self) -> bool:
        return self in DUAL_LOADS


class StoreDist(_Dist, enum.IntEnum):
    """StoreDist (D12 numbering)."""
    DIST_NORM_B8 = 0
    DIST_NORM_B16 = 1
    DIST_NORM_B32 = 2
    DIST_FIRST_ELEMENT_B8 = 3
    DIST_FIRST_ELEMENT_B16 = 4
    DIST_FIRST_ELEMENT_B32 = 5
    DIST_PACK_B16 = 6
    DIST_PACK_B32 = 7
    DIST_INTLV_B8 = 8
    DIST_INTLV_B16 = 9
    DIST_PACK_B64 = 10
    DIST_INTLV_B32 = 11
    DIST_PACK4_B32 = 12
    DIST_NORM = 16

    @property
    def dual(self) -> bool:
        return self in DUAL_STORES


DUAL_LOADS = (LoadDist.DIST_DINTLV_B8, LoadDist.DIST_DINTLV_B16, LoadDist.DIST_DINTLV_B32)
DUAL_STORES = (StoreDist.DIST_INTLV_B8, StoreDist.DIST_INTLV_B16, StoreDist.DIST_INTLV_B32)


class MaskPattern(enum.IntEnum):
    """CreateMask patterns (Ascend C ``MaskPattern``)."""
    ALL = 0
    VL1 = 1
    VL2 = 2
    VL3 = 3
    VL4 = 4
    VL8 = 5
    VL16 = 6
    VL32 = 7
    VL64 = 8
    VL128 = 9
    M3 = 10
    M4 = 11
    H = 12
    Q = 13
    ALLF = 15


@dataclass(frozen=True)
class Addressing:
    """plain (``Addressing()``), ``Addressing.post_update(stride)`` or ``Addressing.addr_reg(offset)``."""
    kind: str = "plain"
    value: int = 0            # stride or offset, in elements of T

    @classmethod
    def post_update(cls, stride: int) -> "Addressing":
        return cls("post_update", int(stride))

    @classmethod
    def addr_reg(cls, offset: int) -> "Addressing":
        return cls("addr_reg", int(offset))

    def __post_init__(self):
        if self.kind not in ("plain", "post_update", "addr_reg"):
            raise ValueError(f"addressing {self.kind!r}: plain, post_update or addr_reg")


@dataclass
class LoadResult:
    dst: list[np.ndarray]       # one or two registers of VL bytes
    next_addr: int              # the updated address (PostUpdate), else the address given
    address: int                # the effective address that was read
    nbytes: int                 # bytes read


# --- masks -------------------------------------------------------------------------------------

def _elems(t: str, vl: int) -> int:
    return vl // WIDTHS[t]


def create_mask(t: str, pattern: MaskPattern | str = MaskPattern.ALL, vl: int = 256) -> np.ndarray:
    """``CreateMask<T, pattern>()`` as a bool array of VL byte lanes.

    The element k of T is active when lane k*sizeof(T) is set (only that lane is
    set).  VLn beyond the element count activates every element; H and Q are
    the lowest half and quarter; M3 and M4 the multiples of 3 and 4.
    """
    pattern = MaskPattern[pattern] if isinstance(pattern, str) else MaskPattern(pattern)
    n = _elems(t, vl)
    k = np.arange(n)
    if pattern is MaskPattern.ALL:
        el = np.ones(n, bool)
    elif pattern is MaskPattern.ALLF:
        el = np.zeros(n, bool)
    elif pattern.name.startswith("VL"):
        el = k < int(pattern.name[2:])
    elif pattern is MaskPattern.M3:
        el = k % 3 == 0
    elif pattern is MaskPattern.M4:
        el = k % 4 == 0
    elif pattern is MaskPattern.H:
        el = k < n // 2
    else:  # Q
        el = k < n // 4
    return _lanes(el, WIDTHS[t])


def update_mask(t: str, count: int, vl: int = 256) -> tuple[np.ndarray, int]:
    """``UpdateMask<T>(count)``: the first min(count, VL/sizeof(T)) elements active; returns
    (mask, count - that number)."""
    n = _elems(t, vl)
    active = min(max(count, 0), n)
    return _lanes(np.arange(n) < active, WIDTHS[t]), max(count - n, 0)


def create_addr_reg(i: int, n: int) -> int:
    """``CreateAddrReg<T>(i, n)``: the offset i*n, in elements."""
    return i * n


def _lanes(el: np.ndarray, size: int) -> np.ndarray:
    """Per-element activity -> per-byte-lane bits (only the first byte's bit set, others clear,
    as the hardware reads only the first byte's bit)."""
    lanes = np.zeros(el.size * size, bool)
    lanes[::size] = el
    return lanes


def mask_elements(mask: np.ndarray, size: int) -> np.ndarray:
    """Per-byte-lane mask -> per-element activity for elements of ``size`` bytes."""
    return np.asarray(mask, bool)[::size]


# --- geometry ------------------------------------------------------------------------------

def _check_vl(vl: int) -> None:
    if vl < 64 or vl & (vl - 1):
        raise IllegalParameter("VL", vl, "must be a power of two of at least 64 bytes")


def load_align_geometry(dist: LoadDist, vl: int) -> tuple[int, int]:
    """(bytes read, alignment) of a LoadDist."""
    d = LoadDist(dist)
    half, quarter = min(32, vl // 2), min(32, vl // 4)
    table = {
        LoadDist.DIST_NORM: (vl, 32), LoadDist.DIST_BRC_B8: (1, 1), LoadDist.DIST_BRC_B16: (2, 2),
        LoadDist.DIST_BRC_B32: (4, 4), LoadDist.DIST_US_B8: (vl // 2, half),
        LoadDist.DIST_US_B16: (vl // 2, half), LoadDist.DIST_DS_B8: (2 * vl, 32),
        LoadDist.DIST_DS_B16: (2 * vl, 32), LoadDist.DIST_UNPACK_B8: (vl // 2, half),
        LoadDist.DIST_UNPACK_B16: (vl // 2, half), LoadDist.DIST_UNPACK_B32: (vl // 2, half),
        LoadDist.DIST_UNPACK4_B8: (vl // 4, quarter), LoadDist.DIST_BLK: (32, 32),
        LoadDist.DIST_E2B_B16: (vl // 16, vl // 16), LoadDist.DIST_E2B_B32: (vl // 8, vl // 8),
        LoadDist.DIST_DINTLV_B8: (2 * vl, 32), LoadDist.DIST_DINTLV_B16: (2 * vl, 32),
        LoadDist.DIST_DINTLV_B32: (2 * vl, 32),
    }
    return table[d]


def store_align_geometry(dist: StoreDist, t: str, vl: int) -> tuple[int, int]:
    """(bytes written, alignment) of a StoreDist."""
    d = StoreDist(dist)
    w = d.width or WIDTHS[t]
    if d.family == "NORM":
        return vl, 32
    if d.family == "FIRST_ELEMENT":
        return w, w
    if d.family == "PACK4":
        return vl // 4, min(32, vl // 4)
    if d.family == "PACK":
        return vl // 2, min(32, vl // 2)
    return 2 * vl, 32                                            # INTLV


def _effective(t: str, addr: int, how: Addressing, align: int, ub: Buffer, nbytes: int,
               mode: str, access: str) -> tuple[int, int]:
    """Check addressing and alignment; return (effective address, next address)."""
    size = WIDTHS[t]
    rule = f"{mode}"
    if how.kind == "addr_reg":
        if how.value * size % align:
            raise _alignment("AddrReg offset", how.value, f"offset*sizeof({t}) = "
                             f"{how.value * size} B must be a multiple of {align} B ({rule})")
        ea = addr + how.value * size
    else:
        ea = addr
    if how.kind == "post_update" and how.value * size % align:
        raise _alignment("PostUpdate stride", how.value, f"stride*sizeof({t}) = "
                         f"{how.value * size} B must be a multiple of {align} B ({rule})")
    if how.kind == "addr_reg" and addr % align:     # the base register is aligned too; its
        # bounds are not checked: the access is at addr + offset alone (D11: a read or
        # write past the end of UB faults), as the units check it
        raise Alignment(f"{ub.name} address", f"{addr:#x}" if addr >= 0 else str(addr),
                        f"must be {align} B aligned ({rule})")
    ub.check(ea, nbytes, align, rule, access=access)
    nxt = addr + how.value * size if how.kind == "post_update" else addr
    return ea, nxt


def _alignment(fld, value, rule):
    return Alignment(fld, value, rule)


def _check_t(t: str, mode_name: str, norm: bool) -> None:
    if t not in WIDTHS:
        raise IllegalParameter("T", t, f"not one of {', '.join(WIDTHS)}")
    if t == "b64" and not norm:
        raise IllegalParameter("dist", mode_name, "b64 allows only the NORM distribution")


# --- LoadAlign ----------------------------------------------------------------------------------

def _view(raw: np.ndarray, w: int) -> np.ndarray:
    return raw.reshape(-1, w)


def _load_dist(dist: LoadDist | str | int) -> LoadDist:
    """The mode named or numbered ``dist``; a number no mode has (D12 leaves 4, 5, 10 and 21..31
    of the 5-bit field unused) is IllegalParameter, as a mode that does not exist for T is."""
    try:
        return LoadDist[dist] if isinstance(dist, str) else LoadDist(dist)
    except (KeyError, ValueError):
        raise IllegalParameter("dist", dist, "not a LoadAlign distribution mode (D12)") from None


def load_align(ub: Buffer, addr: int, dist: LoadDist | str = LoadDist.DIST_NORM, t: str = "b8",
               how: Addressing = Addressing(), vl: int = 256, reg_trait: int = 1) -> LoadResult:
    """LoadAlign: read UB and distribute into one or two RegTensors of VL bytes."""
    d = _load_dist(dist)
    _check_vl(vl)
    _check_t(t, d.name, d is LoadDist.DIST_NORM)
    _check_trait(reg_trait, d.name, t, how, d is LoadDist.DIST_NORM)
    nbytes, align = load_align_geometry(d, vl)
    if reg_trait == 2:
        nbytes = 2 * vl
    ea, nxt = _effective(t, addr, how, align, ub, nbytes, d.name, "reads")
    src = ub.data[ea:ea + nbytes]
    w = d.width
    if reg_trait == 2:
        half = WIDTHS[t] // 2
        el = src.reshape(-1, 2, half)
        return LoadResult([el[:, 0].reshape(-1).copy(), el[:, 1].reshape(-1).copy()], nxt, ea, nbytes)
    if d is LoadDist.DIST_NORM:
        out = [src.copy()]
    elif d.family == "BRC":
        out = [np.tile(src, vl // w)]
    elif d.family == "US":
        out = [np.repeat(_view(src, w), 2, axis=0).reshape(-1)]
    elif d.family == "DS":
        out = [_view(src, w)[::2].reshape(-1).copy()]
    elif d.family == "UNPACK4":
        z = np.zeros((vl // 4, 4), np.uint8)
        z[:, 0] = src
        out = [z.reshape(-1)]
    elif d.family == "UNPACK":
        z = np.zeros((vl // 2 // w, 2 * w), np.uint8)
        z[:, :w] = _view(src, w)
        out = [z.reshape(-1)]
    elif d is LoadDist.DIST_BLK:
        out = [np.tile(src, vl // 32)]
    elif d.family == "E2B":
        out = [np.repeat(_view(src, w), 32 // w, axis=0).reshape(-1)]
    else:  # DINTLV
        el = _view(src, w)
        out = [el[0::2].reshape(-1).copy(), el[1::2].reshape(-1).copy()]
    return LoadResult(out, nxt, ea, nbytes)


def _check_trait(reg_trait, mode_name, t, how, norm):
    if reg_trait not in (1, 2):
        raise IllegalParameter("regTrait", reg_trait, "RegTraitNumOne (1) or RegTraitNumTwo (2)")
    if reg_trait == 2:
        if not norm:
            raise IllegalParameter("dist", mode_name, "RegTraitNumTwo supports only NORM")
        if t not in ("b64", "b32"):
            raise IllegalParameter("T", t, "RegTraitNumTwo holds b64 or complex32 (b32) elements")
        if how.kind == "addr_reg":
            raise IllegalParameter("addressing", "AddrReg", "RegTraitNumTwo has no AddrReg interface")


def load_align_reference(ub: Buffer, addr: int, dist: LoadDist | str = LoadDist.DIST_NORM,
                         t: str = "b8", how: Addressing = Addressing(), vl: int = 256,
                         reg_trait: int = 1) -> LoadResult:
    """Lane by lane, from the seed's table: for each destination byte, which source byte."""
    d = _load_dist(dist)
    _check_vl(vl)
    _check_t(t, d.name, d is LoadDist.DIST_NORM)
    _check_trait(reg_trait, d.name, t, how, d is LoadDist.DIST_NORM)
    nbytes, align = load_align_geometry(d, vl)
    if reg_trait == 2:
        nbytes = 2 * vl
    ea, nxt = _effective(t, addr, how, align, ub, nbytes, d.name, "reads")
    mem = ub.data
    w = d.width or 1
    regs = [np.zeros(vl, np.uint8) for _ in range(2 if (d.dual or reg_trait == 2) else 1)]
    for b in range(vl):
        e, k = divmod(b, w)                  # element e of the destination, byte k inside it
        if reg_trait == 2:
            half = WIDTHS[t] // 2
            el, kk = divmod(b, half)          # half-element el, byte kk
            regs[0][b] = mem[ea + el * 2 * half + kk]
            regs[1][b] = mem[ea + el * 2 * half + half + kk]
        elif d is LoadDist.DIST_NORM:
            regs[0][b] = mem[ea + b]
        elif d.family == "BRC":
            regs[0][b] = mem[ea + k]
        elif d.family == "US":
            regs[0][b] = mem[ea + (e // 2) * w + k]
        elif d.family == "DS":
            regs[0][b] = mem[ea + (2 * e) * w + k]
        elif d.family == "UNPACK4":
            regs[0][b] = mem[ea + b // 4] if b % 4 == 0 else 0
        elif d.family == "UNPACK":
            src_e, kk = divmod(b, 2 * w)      # each source element becomes 2*w bytes
            regs[0][b] = mem[ea + src_e * w + kk] if kk < w else 0
        elif d is LoadDist.DIST_BLK:
            regs[0][b] = mem[ea + b % 32]
        elif d.family == "E2B":
            regs[0][b] = mem[ea + (b // 32) * w + k]
        else:
            regs[0][b] = mem[ea + (2 * e) * w + k]
            regs[1][b] = mem[ea + (2 * e + 1) * w + k]
    return LoadResult(regs, nxt, ea, nbytes)


# --- StoreAlign ---------------------------------------------------------------------------------

def _store_dist(dist: StoreDist | str | int) -> StoreDist:
    """The mode named or numbered ``dist``; a number no mode has (D12 leaves 13..15 and
    17..31 of the 5-bit field unused) is IllegalParameter."""
    try:
        return StoreDist[dist] if isinstance(dist, str) else StoreDist(dist)
    except (KeyError, ValueError):
        raise IllegalParameter("dist", dist, "not a StoreAlign distribution mode (D12)") from None


def store_align(ub: Buffer, addr: int, src: list[np.ndarray] | np.ndarray,
                dist: StoreDist | str = StoreDist.DIST_NORM, t: str = "b8",
                mask: np.ndarray | None = None, how: Addressing = Addressing(),
                vl: int = 256, reg_trait: int = 1) -> int:
    """StoreAlign: write one or two RegTensors to UB; returns the next address (PostUpdate)."""
    d = _store_dist(dist)
    regs = [np.asarray(r, np.uint8).reshape(-1) for r in
            (src if isinstance(src, (list, tuple)) else [src])]
    _check_vl(vl)
    _check_t(t, d.name, d in (StoreDist.DIST_NORM, StoreDist.DIST_PACK_B64))
    _check_trait(reg_trait, d.name, t, how, d is StoreDist.DIST_NORM)
    need = 2 if (d.dual or reg_trait == 2) else 1
    if len(regs) != need or any(r.size != vl for r in regs):
        raise IllegalParameter("src", f"{len(regs)} register(s)",
                               f"{d.name} stores {need} register(s) of VL={vl} bytes")
    if mask is None:
        mask = create_mask(t, MaskPattern.ALL, vl)
    mask = np.asarray(mask, bool).reshape(-1)
    if mask.size != vl:
        raise IllegalParameter("mask", f"{mask.size} lanes", f"a MaskReg has one bit per byte lane (VL={vl})")
    nbytes, align = store_align_geometry(d, t, vl)
    if reg_trait == 2:
        nbytes = 2 * vl
    ea, nxt = _effective(t, addr, how, align, ub, nbytes, d.name, "writes")
    w = d.width or WIDTHS[t]
    if reg_trait == 2:
        half = WIDTHS[t] // 2
        out = np.stack([regs[0].reshape(-1, half), regs[1].reshape(-1, half)], axis=1).reshape(-1)
        # element k (2*half bytes) is active when lane k*half of the mask is
        ub.write(ea, out, enable=np.repeat(mask_elements(mask, half), 2 * half))
        return nxt
    if d.family == "NORM":
        en = np.repeat(mask_elements(mask, w), w)
        ub.write(ea, regs[0], enable=en)
    elif d.family == "FIRST_ELEMENT":
        ub.write(ea, regs[0][:w])
    elif d.family == "PACK4":
        el = regs[0].reshape(-1, 4)
        ub.write(ea, el[:, 0], enable=mask_elements(mask, 4))
    elif d.family == "PACK":
        el = regs[0].reshape(-1, w)
        out = el[:, :w // 2].reshape(-1)
        ub.write(ea, out, enable=np.repeat(mask_elements(mask, w), w // 2))
    else:  # INTLV
        a, b = regs[0].reshape(-1, w), regs[1].reshape(-1, w)
        ub.write(ea, np.stack([a, b], axis=1).reshape(-1))
    return nxt


def store_align_reference(ub: Buffer, addr: int, src, dist=StoreDist.DIST_NORM, t: str = "b8",
                          mask=None, how: Addressing = Addressing(), vl: int = 256,
                          reg_trait: int = 1) -> int:
    """Byte by byte: for each UB byte of the stored range, which register byte, and its mask bit."""
    d = _store_dist(dist)
    regs = [np.asarray(r, np.uint8).reshape(-1) for r in
            (src if isinstance(src, (list, tuple)) else [src])]
    if mask is None:
        mask = create_mask(t if t in WIDTHS else "b8", MaskPattern.ALL, vl)
    # the checks are the fast model's: run it on a scratch copy to raise the same faults
    scratch = Buffer(ub.name, ub.data.copy())
    nxt = store_align(scratch, addr, regs, d, t, mask, how, vl, reg_trait)
    nbytes, _ = store_align_geometry(d, t, vl)
    if reg_trait == 2:
        nbytes = 2 * vl
    ea = addr + (how.value * WIDTHS[t] if how.kind == "addr_reg" else 0)
    w = d.width or WIDTHS[t]
    for b in range(nbytes):
        if reg_trait == 2:
            half = WIDTHS[t] // 2
            el, kk = divmod(b, 2 * half)
            if mask[el * half]:
                ub.data[ea + b] = regs[kk // half][el * half + kk % half]
            continue
        if d.family == "NORM":
            if mask[(b // w) * w]:
                ub.data[ea + b] = regs[0][b]
        elif d.family == "FIRST_ELEMENT":
            ub.data[ea + b] = regs[0][b]
        elif d.family == "PACK4":
            if mask[b * 4]:
                ub.data[ea + b] = regs[0][b * 4]
        elif d.family == "PACK":
            e, k = divmod(b, w // 2)
            if mask[e * w]:
                ub.data[ea + b] = regs[0][e * w + k]
        else:
            e, k = divmod(b, w)
            ub.data[ea + b] = regs[e % 2][(e // 2) * w + k]
    return nxt
