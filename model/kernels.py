"""The five example kernels of seed 003 (ComputeMode01..05), on the golden model.

Each copies ``count`` elements of T from ``src`` to ``dst`` in UB through
RegTensors, exactly as the seed's C++ loops do (addresses in bytes here; the
seed's pointer arithmetic ``srcAddr + i * oneRepeatSize`` is in elements).
"""

from __future__ import annotations

from .buffers import Buffer
from .load_align import (WIDTHS, Addressing, LoadDist, MaskPattern, StoreDist, create_addr_reg,
                         create_mask, load_align, store_align, update_mask)

__all__ = ["compute_mode01", "compute_mode02", "compute_mode03", "compute_mode04",
           "compute_mode05", "KERNELS"]


def compute_mode01(ub: Buffer, dst: int, src: int, t: str, dst_size: int, one_repeat: int,
                   repeat_times: int, vl: int = 256) -> None:
    """Plain interface: UpdateMask per iteration, addresses advanced by hand."""
    size = WIDTHS[t]
    for i in range(repeat_times):
        mask, dst_size = update_mask(t, dst_size, vl)
        reg = load_align(ub, src + i * one_repeat * size, LoadDist.DIST_NORM, t, vl=vl).dst
        store_align(ub, dst + i * one_repeat * size, reg, StoreDist.DIST_NORM, t, mask, vl=vl)


def compute_mode02(ub: Buffer, dst: int, src: int, t: str, dst_size: int, one_repeat: int,
                   repeat_times: int, vl: int = 256) -> None:
    """PostUpdate interface: the load and the store advance their own address."""
    for _ in range(repeat_times):
        mask, dst_size = update_mask(t, dst_size, vl)
        r = load_align(ub, src, LoadDist.DIST_NORM, t, Addressing.post_update(one_repeat), vl)
        src = r.next_addr
        dst = store_align(ub, dst, r.dst, StoreDist.DIST_NORM, t, mask,
                          Addressing.post_update(one_repeat), vl)


def compute_mode03(ub: Buffer, dst: int, src: int, t: str, one_repeat: int,
                   repeat_times: int, vl: int = 256) -> None:
    """AddrReg interface: CreateAddrReg(i, oneRepeatSize) per iteration, mask ALL."""
    mask = create_mask(t, MaskPattern.ALL, vl)
    for i in range(repeat_times):
        a = Addressing.addr_reg(create_addr_reg(i, one_repeat))
        reg = load_align(ub, src, LoadDist.DIST_NORM, t, a, vl).dst
        store_align(ub, dst, reg, StoreDist.DIST_NORM, t, mask, a, vl)


def compute_mode04(ub: Buffer, dst: int, src: int, t: str, one_repeat: int,
                   repeat_times: int, vl: int = 256) -> None:
    """Dual load DINTLV_B8 and dual store INTLV_B8, plain interface."""
    size = WIDTHS[t]
    mask = create_mask(t, MaskPattern.ALL, vl)
    for i in range(repeat_times):
        regs = load_align(ub, src + i * one_repeat * size, LoadDist.DIST_DINTLV_B8, t, vl=vl).dst
        store_align(ub, dst + i * one_repeat * size, regs, StoreDist.DIST_INTLV_B8, t, mask, vl=vl)


def compute_mode05(ub: Buffer, dst: int, src: int, t: str, one_repeat: int,
                   repeat_times: int, vl: int = 256) -> None:
    """Dual load/store with AddrReg."""
    mask = create_mask(t, MaskPattern.ALL, vl)
    for i in range(repeat_times):
        a = Addressing.addr_reg(create_addr_reg(i, one_repeat))
        regs = load_align(ub, src, LoadDist.DIST_DINTLV_B8, t, a, vl).dst
        store_align(ub, dst, regs, StoreDist.DIST_INTLV_B8, t, mask, a, vl)


KERNELS = {1: compute_mode01, 2: compute_mode02, 3: compute_mode03, 4: compute_mode04,
           5: compute_mode05}
