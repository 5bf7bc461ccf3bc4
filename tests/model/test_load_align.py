"""LoadAlign / StoreAlign (seed 003, D11, D12): every mode against expectations written from
the seed's table, addressing, faults, masks, fast vs reference, and the five example kernels."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Alignment, Fault, IllegalParameter, OutOfBounds
from tilecosim.model.kernels import KERNELS
from tilecosim.model.load_align import (WIDTHS, Addressing, LoadDist as LD, StoreDist as SD,
                              create_mask, load_align, load_align_reference, store_align,
                              store_align_reference, update_mask)

VL = 256


def ub_ramp(n=8192):
    return Buffer("UB", (np.arange(n) % 256).astype(np.uint8))


def ub_u16(n=8192):
    return Buffer("UB", np.arange(n // 2, dtype="<u2").view(np.uint8).copy())


def u16(reg):
    return reg.view("<u2").tolist()


def u32(reg):
    return reg.view("<u4").tolist()


def test_d12_mode_numbers():
    assert {d.name: int(d) for d in LD} == {
        "DIST_NORM": 0, "DIST_BRC_B8": 1, "DIST_BRC_B16": 2, "DIST_BRC_B32": 3, "DIST_US_B8": 6,
        "DIST_US_B16": 7, "DIST_DS_B8": 8, "DIST_DS_B16": 9, "DIST_DINTLV_B8": 11,
        "DIST_DINTLV_B16": 12, "DIST_UNPACK_B8": 13, "DIST_UNPACK_B16": 14, "DIST_BLK": 15,
        "DIST_E2B_B16": 16, "DIST_E2B_B32": 17, "DIST_UNPACK_B32": 18, "DIST_DINTLV_B32": 19,
        "DIST_UNPACK4_B8": 20}
    assert {d.name: int(d) for d in SD} == {
        "DIST_NORM_B8": 0, "DIST_NORM_B16": 1, "DIST_NORM_B32": 2, "DIST_FIRST_ELEMENT_B8": 3,
        "DIST_FIRST_ELEMENT_B16": 4, "DIST_FIRST_ELEMENT_B32": 5, "DIST_PACK_B16": 6,
        "DIST_PACK_B32": 7, "DIST_INTLV_B8": 8, "DIST_INTLV_B16": 9, "DIST_PACK_B64": 10,
        "DIST_INTLV_B32": 11, "DIST_PACK4_B32": 12, "DIST_NORM": 16}


# --- single-load modes ----------------------------------------------------------------------

def test_norm_reads_vl():
    r = load_align(ub_ramp(), 64, "DIST_NORM", "b8")
    assert r.dst[0].tolist() == [(64 + k) % 256 for k in range(VL)] and r.nbytes == VL


@pytest.mark.parametrize("dist,w", [("DIST_BRC_B8", 1), ("DIST_BRC_B16", 2), ("DIST_BRC_B32", 4)])
def test_broadcast(dist, w):
    r = load_align(ub_ramp(), 12, dist, "b8")
    assert r.dst[0].tolist() == list(range(12, 12 + w)) * (VL // w)


def test_upsample_b16():
    r = load_align(ub_u16(), 64, "DIST_US_B16", "b16")
    assert u16(r.dst[0]) == [32 + k // 2 for k in range(128)]          # each element twice
    r = load_align(ub_ramp(), 32, "DIST_US_B8", "b8")
    assert r.dst[0].tolist() == [32 + k // 2 for k in range(256)]


def test_downsample():
    r = load_align(ub_u16(), 0, "DIST_DS_B16", "b16")
    assert u16(r.dst[0]) == [2 * k for k in range(128)] and r.nbytes == 2 * VL
    r = load_align(ub_ramp(), 0, "DIST_DS_B8", "b8")
    assert r.dst[0].tolist() == [(2 * k) % 256 for k in range(256)]


def test_unpack_seed_examples():
    # seed: UNPACK_B8 src [0x00, 0x01, ...] -> dst [0x00, 0x00, 0x01, 0x00, ..., 0x7F, 0x00]
    r = load_align(ub_ramp(), 0, "DIST_UNPACK_B8", "b8")
    assert r.dst[0].tolist() == [x for k in range(128) for x in (k, 0)]
    # UNPACK_B16: [0x0000, 0x0001, ...] -> [0x0000, 0x0000, 0x0001, 0x0000, ..., 0x003F, 0x0000]
    r = load_align(ub_u16(), 0, "DIST_UNPACK_B16", "b16")
    assert u16(r.dst[0]) == [x for k in range(64) for x in (k, 0)]
    # UNPACK_B32: [0, 1, 2, ...] (u32) -> [0, 0, 1, 0, ..., 0x1F, 0]
    ub = Buffer("UB", np.arange(1024, dtype="<u4").view(np.uint8).copy())
    r = load_align(ub, 0, "DIST_UNPACK_B32", "b32")
    assert u32(r.dst[0]) == [x for k in range(32) for x in (k, 0)]
    # UNPACK4_B8: [0x00, 0x01, ...] -> [0x00, 0, 0, 0, 0x01, 0, 0, 0, ..., 0x3F, 0, 0, 0]
    r = load_align(ub_ramp(), 0, "DIST_UNPACK4_B8", "b8")
    assert r.dst[0].tolist() == [x for k in range(64) for x in (k, 0, 0, 0)] and r.nbytes == 64


def test_block_broadcast():
    r = load_align(ub_ramp(), 96, "DIST_BLK", "b8")
    assert r.dst[0].tolist() == list(range(96, 128)) * 8


def test_element_to_block():
    r = load_align(ub_u16(), 32, "DIST_E2B_B16", "b16")
    assert u16(r.dst[0]) == [16 + k // 16 for k in range(128)] and r.nbytes == 16
    ub = Buffer("UB", np.arange(1024, dtype="<u4").view(np.uint8).copy())
    r = load_align(ub, 32, "DIST_E2B_B32", "b32")
    assert u32(r.dst[0]) == [8 + k // 8 for k in range(64)] and r.nbytes == 32


@pytest.mark.parametrize("dist,w", [("DIST_DINTLV_B8", 1), ("DIST_DINTLV_B16", 2), ("DIST_DINTLV_B32", 4)])
def test_dual_deinterleave(dist, w):
    ub = Buffer("UB", np.arange(4096 // w, dtype=f"<u{w}").view(np.uint8).copy())
    r = load_align(ub, 0, dist, f"b{8 * w}")
    n = VL // w
    view = lambda reg: reg.view(f"<u{w}").tolist()
    wrap = 1 << (8 * w)
    assert view(r.dst[0]) == [2 * k % wrap for k in range(n)]
    assert view(r.dst[1]) == [(2 * k + 1) % wrap for k in range(n)]


# --- addressing -----------------------------------------------------------------------------

def test_post_update_returns_the_updated_address():
    r = load_align(ub_ramp(), 64, "DIST_NORM", "b16", Addressing.post_update(128))
    assert r.address == 64 and r.next_addr == 64 + 256
    assert r.dst[0][0] == 64


def test_addr_reg_adds_the_offset_in_elements():
    r = load_align(ub_ramp(), 64, "DIST_NORM", "b32", Addressing.addr_reg(16))
    assert r.address == 64 + 64 and r.dst[0][0] == 128 and r.next_addr == 64


def test_addr_reg_reads_at_base_plus_offset_whatever_the_base():
    """D11: a read past the end of UB faults; the read of AddrReg is at base + offset, so a
    base past the end of UB with an offset back inside reads, and a misaligned base faults
    Alignment (found by the LoadAlign unit disagreeing with the model at base 0x2000)."""
    r = load_align(ub_ramp(4096), 8192, "DIST_NORM", "b8", Addressing.addr_reg(-8192))
    assert r.address == 0 and list(r.dst[0][:4]) == [0, 1, 2, 3]
    with pytest.raises(Alignment, match="UB address=0x2010: must be 32 B aligned"):
        load_align(ub_ramp(4096), 8192 + 16, "DIST_NORM", "b8", Addressing.addr_reg(-8192))
    with pytest.raises(OutOfBounds):
        load_align(ub_ramp(4096), 8192, "DIST_NORM", "b8", Addressing.addr_reg(-4096 + 32))


def test_alignment_of_address_stride_and_offset():
    with pytest.raises(Alignment, match="UB address=0x30: must be 32 B aligned .DIST_NORM."):
        load_align(ub_ramp(), 48, "DIST_NORM", "b8")
    with pytest.raises(Alignment, match="PostUpdate stride=10: stride\\*sizeof\\(b16\\) = 20 B"):
        load_align(ub_ramp(), 0, "DIST_NORM", "b16", Addressing.post_update(10))
    with pytest.raises(Alignment, match="AddrReg offset=3"):
        load_align(ub_ramp(), 0, "DIST_DINTLV_B8", "b8", Addressing.addr_reg(3))
    with pytest.raises(Alignment, match="must be 2 B aligned"):
        load_align(ub_ramp(), 3, "DIST_BRC_B16", "b8")
    load_align(ub_ramp(), 3, "DIST_BRC_B8", "b8")                      # 1 B: any address
    with pytest.raises(Alignment, match="must be 16 B aligned"):
        load_align(ub_ramp(), 8, "DIST_E2B_B16", "b16")


def test_read_past_ub_end():
    with pytest.raises(OutOfBounds, match="UB address=0x1f00: reads 512 B, past the end of UB"):
        load_align(ub_ramp(8192), 8192 - 256, "DIST_DS_B8", "b8")


def test_b64_only_norm():
    load_align(ub_ramp(), 0, "DIST_NORM", "b64")
    with pytest.raises(IllegalParameter, match="dist=DIST_BRC_B32: b64 allows only the NORM"):
        load_align(ub_ramp(), 0, "DIST_BRC_B32", "b64")


def test_reg_trait_two_splits_b64_into_low_and_high_halves():
    ub = Buffer("UB", np.arange(512, dtype="<u8").view(np.uint8).copy() | 0)
    vals = np.arange(64, dtype="<u8") + (np.arange(64, dtype="<u8") << np.uint64(32))
    ub.data[:512] = vals.view(np.uint8)
    r = load_align(ub, 0, "DIST_NORM", "b64", vl=256, reg_trait=2)
    assert r.nbytes == 512
    assert u32(r.dst[0]) == list(range(64)) and u32(r.dst[1]) == list(range(64))
    with pytest.raises(IllegalParameter, match="AddrReg"):
        load_align(ub, 0, "DIST_NORM", "b64", Addressing.addr_reg(0), reg_trait=2)
    with pytest.raises(IllegalParameter, match="RegTraitNumTwo supports only NORM"):
        load_align(ub, 0, "DIST_DINTLV_B32", "b32", reg_trait=2)


# --- masks ----------------------------------------------------------------------------------

def active(mask, size):
    return [k for k in range(VL // size) if mask[k * size]]


def test_create_mask_patterns():
    assert active(create_mask("b16", "ALL"), 2) == list(range(128))
    assert active(create_mask("b16", "ALLF"), 2) == []
    assert active(create_mask("b32", "VL3"), 4) == [0, 1, 2]
    assert active(create_mask("b32", "VL128"), 4) == list(range(64))      # clamped
    assert active(create_mask("b8", "M3"), 1) == list(range(0, 256, 3))
    assert active(create_mask("b16", "M4"), 2) == list(range(0, 128, 4))
    assert active(create_mask("b16", "H"), 2) == list(range(64))
    assert active(create_mask("b32", "Q"), 4) == list(range(16))


def test_update_mask_counts_down():
    m, rest = update_mask("b32", 100)
    assert active(m, 4) == list(range(64)) and rest == 36
    m, rest = update_mask("b32", rest)
    assert active(m, 4) == list(range(36)) and rest == 0
    m, rest = update_mask("b32", rest)
    assert active(m, 4) == [] and rest == 0


# --- StoreAlign -------------------------------------------------------------------------------

def test_store_norm_masked_per_element():
    ub = Buffer("UB", 1024)
    reg = np.arange(256, dtype=np.uint8)
    store_align(ub, 0, reg, "DIST_NORM_B16", "b16", create_mask("b16", "VL3"))
    assert ub.data[:8].tolist() == [0, 1, 2, 3, 4, 5, 0, 0]


def test_store_first_element():
    ub = Buffer("UB", 64)
    store_align(ub, 6, np.arange(256, dtype=np.uint8) + 1, "DIST_FIRST_ELEMENT_B16", "b16",
                create_mask("b16", "ALLF"))                          # mask ignored
    assert ub.data[4:10].tolist() == [0, 0, 1, 2, 0, 0]


def test_store_pack_d12_example():
    # b16 elements 0x3210, 0x7654 -> bytes 0x10, 0x54
    reg = np.zeros(256, np.uint8)
    reg[:4] = [0x10, 0x32, 0x54, 0x76]
    ub = Buffer("UB", 1024)
    store_align(ub, 0, reg, "DIST_PACK_B16", "b16", create_mask("b16", "VL2"))
    assert ub.data[:3].tolist() == [0x10, 0x54, 0]
    reg32 = np.arange(64, dtype="<u4") * 0x01010101
    ub = Buffer("UB", 1024)
    store_align(ub, 0, reg32.view(np.uint8), "DIST_PACK4_B32", "b32")
    assert ub.data[:64].tolist() == list(range(64))


def test_store_interleave():
    ub = Buffer("UB", 1024)
    a, b = np.zeros(256, np.uint8), np.ones(256, np.uint8)
    store_align(ub, 0, [a, b], "DIST_INTLV_B16", "b16")
    assert ub.data[:8].tolist() == [0, 0, 1, 1, 0, 0, 1, 1] and ub.data[512:].sum() == 0


def test_store_faults():
    ub = Buffer("UB", 1024)
    with pytest.raises(OutOfBounds, match="writes 256 B"):
        store_align(ub, 1024 - 128, np.zeros(256, np.uint8), "DIST_NORM_B8")
    with pytest.raises(IllegalParameter, match="DIST_INTLV_B8 stores 2 register"):
        store_align(ub, 0, np.zeros(256, np.uint8), "DIST_INTLV_B8")
    with pytest.raises(Alignment, match="must be 4 B aligned"):
        store_align(ub, 2, np.zeros(256, np.uint8), "DIST_FIRST_ELEMENT_B32", "b32")
    assert not ub.data.any()


# --- fast vs reference ----------------------------------------------------------------------

how_st = st.one_of(st.just(Addressing()),
                   st.builds(Addressing.post_update, st.integers(-8, 64).map(lambda v: v * 8)),
                   st.builds(Addressing.addr_reg, st.integers(0, 32).map(lambda v: v * 8)))


@pytest.mark.parametrize("dist", list(LD))
@settings(max_examples=40)
@given(t=st.sampled_from(list(WIDTHS)), how=how_st, vl=st.sampled_from([64, 128, 256]),
       addr=st.integers(0, 96).map(lambda v: v * 8), seed=st.integers(0, 99))
def test_load_fast_equals_reference(dist, t, how, vl, addr, seed):
    ub = Buffer("UB", np.random.default_rng(seed).integers(0, 256, 2048, dtype=np.uint8))
    try:
        want = load_align_reference(ub, addr, dist, t, how, vl)
    except Fault as f:
        with pytest.raises(type(f), match="^" + __import__("re").escape(str(f)) + "$"):
            load_align(ub, addr, dist, t, how, vl)
        return
    got = load_align(ub, addr, dist, t, how, vl)
    assert (got.next_addr, got.address, got.nbytes) == (want.next_addr, want.address, want.nbytes)
    assert [g.tolist() for g in got.dst] == [w.tolist() for w in want.dst]


@pytest.mark.parametrize("dist", list(SD))
@settings(max_examples=40)
@given(t=st.sampled_from(list(WIDTHS)), how=how_st, vl=st.sampled_from([64, 128, 256]),
       addr=st.integers(0, 96).map(lambda v: v * 8), seed=st.integers(0, 99))
def test_store_fast_equals_reference(dist, t, how, vl, addr, seed):
    rng = np.random.default_rng(seed)
    init = rng.integers(0, 256, 2048, dtype=np.uint8)
    regs = [rng.integers(0, 256, vl, dtype=np.uint8) for _ in range(2 if dist.dual else 1)]
    mask = rng.random(vl) < 0.5
    a, b = Buffer("UB", init.copy()), Buffer("UB", init.copy())
    try:
        na = store_align(a, addr, regs, dist, t, mask, how, vl)
    except Fault:
        with pytest.raises(Fault):
            store_align_reference(b, addr, regs, dist, t, mask, how, vl)
        assert (a.data == init).all() and (b.data == init).all()
        return
    nb = store_align_reference(b, addr, regs, dist, t, mask, how, vl)
    assert na == nb
    np.testing.assert_array_equal(a.data, b.data)


# --- the seed's example kernels -------------------------------------------------------------------

@pytest.mark.parametrize("t", list(WIDTHS))
@pytest.mark.parametrize("mode", [1, 2])
def test_kernels_01_02_copy_with_a_tail(mode, t):
    size = WIDTHS[t]
    rng = np.random.default_rng(mode)
    ub = Buffer("UB", rng.integers(0, 256, 1 << 15, dtype=np.uint8))
    before = ub.data.copy()
    count = 1000 // size + 3                               # not a whole number of VLs
    one = VL // size
    repeat = -(-count // one)
    KERNELS[mode](ub, 0x4000, 0, t, count, one, repeat)
    n = count * size
    np.testing.assert_array_equal(ub.data[0x4000:0x4000 + n], before[:n])
    np.testing.assert_array_equal(ub.data[0x4000 + n:], before[0x4000 + n:])   # tail untouched
    np.testing.assert_array_equal(ub.data[:0x4000], before[:0x4000])


@pytest.mark.parametrize("t", list(WIDTHS))
@pytest.mark.parametrize("mode", [3, 4, 5])
def test_kernels_03_04_05_copy_whole_repeats(mode, t):
    size = WIDTHS[t]
    ub = Buffer("UB", np.random.default_rng(mode).integers(0, 256, 1 << 15, dtype=np.uint8))
    before = ub.data.copy()
    one = (VL if mode == 3 else 2 * VL) // size            # the dual kernels move 2*VL per repeat
    repeat = 5
    if t == "b64" and mode in (4, 5):
        with pytest.raises(IllegalParameter, match="b64 allows only the NORM"):
            KERNELS[mode](ub, 0x4000, 0, t, one, repeat)
        return
    KERNELS[mode](ub, 0x4000, 0, t, one, repeat)
    n = repeat * one * size
    np.testing.assert_array_equal(ub.data[0x4000:0x4000 + n], before[:n])
    np.testing.assert_array_equal(ub.data[0x4000 + n:], before[0x4000 + n:])


@pytest.mark.parametrize("code", [4, 5, 10] + list(range(21, 32)))
def test_a_dist_code_no_mode_has_is_illegal_parameter(code):
    """D12 numbers the LoadDist modes 0..3, 6..9, 11..20; the other codes of the 5-bit field
    name no mode."""
    with pytest.raises(IllegalParameter, match=f"dist={code}: not a LoadAlign distribution"):
        load_align(ub_ramp(), 0, code, "b8")
    assert load_align(ub_ramp(), 0, 7, "b16").nbytes == load_align(ub_ramp(), 0, "DIST_US_B16",
                                                                   "b16").nbytes
