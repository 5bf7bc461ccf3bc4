"""The LoadAlign and StoreAlign units against the modes as DESIGN D11/D12 describe them, one
byte at a time: for any op of an arbitrary stream (mode, element size, addressing and
operands free), any byte of its result is the byte the mode's description names, over an
arbitrary UB window.

The descriptions here are arithmetic on a free byte index (element index and byte within the
element by shifts), not the units' wiring tables.  The UB read port of the LoadAlign unit is
modelled as an SRAM whose data changes to arbitrary bytes after each read and holds
otherwise; the window of the tracked op is what its read returned.  A faulting op must leave
zeros (LoadAlign) or write nothing (StoreAlign); the fault codes themselves are checked by the
simulation suites.  Covers: every mode of each unit is reached without a fault.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal

from tilecosim.hdl.align.common import Addressing
from tilecosim.hdl.align.load import LoadAlignUnit, LoadDist
from tilecosim.hdl.align.store import StoreAlignUnit, StoreDist
from tilecosim.hdl.common import FaultCode

from .common import AnyConst, AnySeq, Harness

__all__ = ["load_align_modes", "store_align_modes"]

COUNT_BITS = 3


def _byte(m: Module, data, index, name: str) -> Signal:
    out = Signal(8, name=name)
    m.d.comb += out.eq(data.word_select(index, 8))
    return out


def _tracked_op(h: Harness, port):
    """The ``n``-th op accepted on ``port`` (``n`` free): (taken now, the op as taken, the
    count of ops so far)."""
    m = h.m
    n = AnyConst(COUNT_BITS)
    count = Signal(COUNT_BITS, name="ops_in")
    take = port.valid & port.ready
    with m.If(take):
        m.d.sync += count.eq(count + 1)
    tracked_take = take & (count == n)
    op = Signal.like(port.payload, name="tracked_op")
    with m.If(tracked_take):
        m.d.sync += op.eq(port.payload)
    return tracked_take, op, n


def _ea(m: Module, op, name: str) -> Signal:
    """The effective address (D11): AddrReg adds the offset in elements."""
    ea = Signal(42, name=name)
    m.d.comb += ea.eq(op.addr + Mux(op.mode == Addressing.ADDR_REG,
                                    op.value.as_signed() << op.t, 0))
    return ea


def _around(unit) -> tuple[Harness, Module]:
    """A harness around an align unit: any stream of ops (within the stream contract), any
    back-pressure on its results."""
    h = Harness()
    h.m.submodules.dut = unit
    h.m.d.comb += unit.ub_size.eq(256 * 1024)   # UB as the hardware has it
    h.free(unit.op.valid, unit.op.payload, unit.res.ready)
    h.stream(unit.op, "in", "op")
    h.stream(unit.res, "out", "res")
    return h, h.m


def load_align_modes(vl: int = 64) -> Harness:
    dut = LoadAlignUnit(vl=vl)
    h, m = _around(dut)
    nbits = (2 * vl).bit_length() - 1          # a byte index into the 2*VL-byte window

    # the UB read port: new arbitrary bytes after each read, held otherwise
    ub, fresh = Signal(16 * vl, name="ub_data"), Signal(16 * vl, name="ub_fresh")
    m.d.comb += [fresh.eq(AnySeq(16 * vl)), dut.ub_data.eq(ub)]
    with m.If(dut.ub_en):
        m.d.sync += ub.eq(fresh)

    tracked_take, op, n = _tracked_op(h, dut.op)
    window, read = Signal(16 * vl, name="window"), Signal(name="window_read")
    ea_now = _ea(m, dut.op.payload, "ea_now")
    with m.If(tracked_take):
        m.d.sync += [window.eq(fresh), read.eq(dut.ub_en)]
        with m.If(dut.ub_en):
            h.check(dut.ub_addr == ea_now[:32], "reads_at_the_ea")

    # the description: which window byte (or zero) lands in byte b of dst0 and of dst1
    b = AnyConst(nbits - 1)                    # a byte of a VL-byte register
    src0, src1 = Signal(nbits, name="src0"), Signal(nbits, name="src1")
    zero0, zero1 = Signal(name="zero0"), Signal(name="zero1")
    m.d.comb += [zero1.eq(1)]
    trait2 = op.reg_trait == 2

    def elem(w):                               # (element, byte in element) of b, w bytes
        lw = w.bit_length() - 1
        return b >> lw, b & (w - 1), lw

    with m.If(trait2):                         # complex32 / b64: low halves, high halves
        for t_log in (2, 3):
            with m.If(op.t == t_log):
                half = (1 << t_log) // 2
                e, k, lh = elem(half)
                m.d.comb += [src0.eq((e << (lh + 1)) + k), src1.eq((e << (lh + 1)) + half + k),
                             zero1.eq(0)]
    with m.Else():
        with m.Switch(op.dist):
            for d in LoadDist:
                w = d.width or 1
                e, k, lw = elem(w)
                with m.Case(d.value):
                    if d.family == "NORM":
                        m.d.comb += src0.eq(b)
                    elif d.family == "BRC":
                        m.d.comb += src0.eq(k)
                    elif d.family == "US":
                        m.d.comb += src0.eq(((e >> 1) << lw) + k)
                    elif d.family == "DS":
                        m.d.comb += src0.eq((e << (lw + 1)) + k)
                    elif d.family == "UNPACK":     # element j, then a zero element
                        m.d.comb += [src0.eq(((e >> 1) << lw) + k), zero0.eq(e[0])]
                    elif d.family == "UNPACK4":    # byte j, then three zero bytes
                        m.d.comb += [src0.eq(b >> 2), zero0.eq(b[:2] != 0)]
                    elif d.family == "BLK":
                        m.d.comb += src0.eq(b[:5])
                    elif d.family == "E2B":        # element j fills 32-byte block j
                        m.d.comb += src0.eq(((b >> 5) << lw) + k)
                    else:                          # DINTLV: even elements, odd elements
                        assert d.family == "DINTLV"
                        m.d.comb += [src0.eq((e << (lw + 1)) + k),
                                     src1.eq((e << (lw + 1)) + w + k), zero1.eq(0)]

    want0 = Mux(zero0, 0, _byte(m, window, src0, "want0"))
    want1 = Mux(zero1, 0, _byte(m, window, src1, "want1"))
    out_count = Signal(COUNT_BITS, name="results_out")
    res = dut.res
    with m.If(res.valid & res.ready):
        m.d.sync += out_count.eq(out_count + 1)
    got0 = _byte(m, res.payload.dst0, b, "got0")
    got1 = _byte(m, res.payload.dst1, b, "got1")
    mine = h.live & res.valid & (out_count == n)
    ok = res.payload.fault == FaultCode.NONE
    with m.If(mine):
        with m.If(ok):
            h.check(read, "read_ub")
            h.check(got0 == want0, "dst0_byte_as_the_mode_says")
            h.check(got1 == want1, "dst1_byte_as_the_mode_says")
        with m.Else():
            h.check((res.payload.dst0 == 0) & (res.payload.dst1 == 0), "fault_leaves_zeros")
    done = mine & res.ready & ok
    for d in LoadDist:
        h.cover(done & ~trait2 & (op.dist == d.value), d.name)
    h.cover(done & trait2, "RegTraitNumTwo")
    return h


def store_align_modes(vl: int = 64) -> Harness:
    dut = StoreAlignUnit(vl=vl)
    h, m = _around(dut)
    nbits = (2 * vl).bit_length() - 1          # a byte index into the 2*VL-byte write
    tracked_take, op, _ = _tracked_op(h, dut.op)
    after = h.past(tracked_take, "tracked_written_now")     # the write leaves a cycle later

    # the description: for UB byte j of the write, the source byte (register, index), whether
    # it is written, and under which mask lane
    j = AnyConst(nbits)
    reg = Signal(name="src_reg")
    idx = Signal(nbits - 1, name="src_byte")
    lane = Signal(nbits - 1, name="mask_lane")
    masked, written = Signal(name="masked"), Signal(name="written")
    t_bytes = Signal(4, name="t_bytes")
    m.d.comb += t_bytes.eq(1 << op.t)
    trait2 = op.reg_trait == 2

    def elem(w):
        lw = w.bit_length() - 1
        return j >> lw, j & (w - 1), lw

    with m.If(trait2):                         # halves of dst0 and dst1 interleaved into 2*VL
        for t_log in (2, 3):
            with m.If(op.t == t_log):
                half = (1 << t_log) // 2
                el, kk, lt = elem(2 * half)
                m.d.comb += [reg.eq(kk >= half), idx.eq((el << (lt - 1)) + (kk & (half - 1))),
                             lane.eq(el << (lt - 1)), masked.eq(1), written.eq(1)]
    with m.Else():
        with m.Switch(op.dist):
            for d in StoreDist:
                with m.Case(d.value):
                    fam = d.family
                    if d.width is None:        # DIST_NORM: the element size of T
                        for t_log in range(4):
                            with m.If(op.t == t_log):
                                e, k, lw = elem(1 << t_log)
                                m.d.comb += [idx.eq(j), lane.eq(e << lw), masked.eq(1),
                                             written.eq(j < vl)]
                        continue
                    w = d.width
                    e, k, lw = elem(w)
                    if fam == "NORM":
                        m.d.comb += [idx.eq(j), lane.eq(e << lw), masked.eq(1),
                                     written.eq(j < vl)]
                    elif fam == "FIRST_ELEMENT":     # element 0 only, mask ignored
                        m.d.comb += [idx.eq(j), written.eq(j < w)]
                    elif fam == "PACK":              # the low half of each element
                        he, hk, lh = elem(w // 2)
                        m.d.comb += [idx.eq((he << lw) + hk), lane.eq(he << lw), masked.eq(1),
                                     written.eq(j < vl // 2)]
                    elif fam == "PACK4":             # the low byte of each b32
                        m.d.comb += [idx.eq(j << 2), lane.eq(j << 2), masked.eq(1),
                                     written.eq(j < vl // 4)]
                    else:                            # INTLV: dst0 and dst1 elements in turn
                        assert fam == "INTLV"
                        m.d.comb += [reg.eq(e[0]), idx.eq(((e >> 1) << lw) + k),
                                     written.eq(1)]

    want = Mux(reg, _byte(m, op.src1, idx, "want1"), _byte(m, op.src0, idx, "want0"))
    enabled = written & (~masked | op.mask.bit_select(lane, 1))
    res = dut.res
    ok = res.payload.fault == FaultCode.NONE
    with m.If(h.live & after):
        h.check(res.valid, "result_with_the_write")
        with m.If(ok):
            h.check(dut.ub_wen, "writes_ub")
            h.check(dut.ub_waddr == _ea(m, op, "ea")[:32], "writes_at_the_ea")
            h.check(dut.ub_wbe.bit_select(j, 1) == enabled, "byte_enable_as_the_mode_says")
            with m.If(enabled):
                h.check(_byte(m, dut.ub_wdata, j, "got") == want, "byte_as_the_mode_says")
        with m.Else():
            h.check(~dut.ub_wen, "fault_writes_nothing")
    took_op = h.past(dut.op.valid & dut.op.ready, "took_op")
    with m.If(h.live & dut.ub_wen):
        h.check(took_op, "no_write_without_an_op")
    done = h.live & after & ok
    for d in StoreDist:
        h.cover(done & ~trait2 & (op.dist == d.value), d.name)
    h.cover(done & trait2, "RegTraitNumTwo")
    h.cover(done & (op.mode == Addressing.ADDR_REG), "addr_reg")
    return h
