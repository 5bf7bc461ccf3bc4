"""The seed's five LoadAlign/StoreAlign kernels (ComputeMode01..05) on the HDL units.

Each kernel's loop is run op by op: every LoadAlign on the LoadAlign unit, every StoreAlign
on the StoreAlign unit, the addresses of the PostUpdate kernel taken from the units'
next_addr outputs; the final UB must equal the golden model's run of the same kernel.
"""

import numpy as np
import pytest

from tilecosim.sim.benches.align import AlignCase, StoreCase, simulate_load_align, simulate_store_align
from tilecosim.model.buffers import Buffer
from tilecosim.model.kernels import KERNELS
from tilecosim.model.load_align import WIDTHS, Addressing, create_mask, update_mask

from ..tiers import slow

VL = 256


def hdl_load(ub, case):
    res = simulate_load_align([case], ub, VL)
    dst0, dst1, nxt, fault = res.results[0]
    assert fault == 0
    return [np.frombuffer(dst0, np.uint8), np.frombuffer(dst1, np.uint8)], nxt


def hdl_store(ub, case):
    final, results, timed_out = simulate_store_align([case], ub, VL)
    assert not timed_out and results[0][1] == 0
    return final, results[0][0]


def mask_bytes(mask):
    return bytes(int(b) for b in mask)


@pytest.mark.parametrize("t", [slow("b8"), "b16", slow("b32")])
@pytest.mark.parametrize("mode", [1, 2, 3, 4, 5])
def test_kernel_on_the_units(mode, t):
    size = WIDTHS[t]
    ub = np.random.default_rng(mode).integers(0, 256, 8192, dtype=np.uint8)
    src, dst = 0, 0x1000
    dual = mode in (4, 5)
    one = (2 * VL if dual else VL) // size
    count = one * 3 - (5 if mode in (1, 2) else 0)             # a tail for the UpdateMask kernels
    repeat = -(-count // one)
    want = Buffer("UB", ub.copy())
    if mode in (1, 2):
        KERNELS[mode](want, dst, src, t, count, one, repeat)
    else:
        KERNELS[mode](want, dst, src, t, one, repeat)
    left = count
    s_addr, d_addr = src, dst
    for i in range(repeat):
        if mode in (1, 2):
            mask, left = update_mask(t, left, VL)
        else:
            mask = create_mask(t, "ALL", VL)
        if mode == 1 or mode == 4:
            how, la, sa = Addressing(), src + i * one * size, dst + i * one * size
        elif mode == 2:
            how, la, sa = Addressing.post_update(one), s_addr, d_addr
        else:
            how, la, sa = Addressing.addr_reg(i * one), src, dst
        ld = "DIST_DINTLV_B8" if dual else "DIST_NORM"
        st = "DIST_INTLV_B8" if dual else "DIST_NORM"
        regs, s_next = hdl_load(ub, AlignCase(ld, t, la, how))
        regs = regs if dual else regs[:1]
        ub, d_next = hdl_store(ub, StoreCase(st, t, sa, tuple(r.tobytes() for r in regs),
                                             mask_bytes(mask), how))
        s_addr, d_addr = s_next, d_next
    np.testing.assert_array_equal(ub, want.data)
