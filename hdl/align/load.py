"""The LoadAlign unit: address/alignment unit + distribution mux (seed 003; D11, D12).

Ports:

* ``op``  in  -- a LoadAlign: {dist, t (log2 sizeof T), addr, mode (plain / PostUpdate /
  AddrReg), value (stride or offset, elements, signed), reg_trait}
* ``ub_size`` in -- the bytes of UB, constant during a run (OutOfBounds)
* ``ub_addr``, ``ub_en`` out / ``ub_data`` in -- a synchronous UB read port 2*VL bytes wide:
  ``ub_data`` holds ub[ub_addr : ub_addr + 2*VL] the cycle after ``ub_en`` (an SRAM port;
  it keeps its data while ``ub_en`` is low)
* ``res`` out -- {dst0, dst1 (VL bytes each), next_addr, fault (D8 code)}

One LoadAlign per cycle sustained; latency 2 cycles from ``op`` accepted to ``res`` valid;
the outputs are registered.  A faulting op does not read UB.

Every distribution is a fixed byte wiring of the 2*VL bytes read at the effective address,
so the mux is a ``Switch`` over the mode.  Faults: IllegalParameter (unknown mode, b64 with
a mode other than NORM, RegTraitNumTwo other than NORM of b32/b64 without AddrReg),
Alignment (address, stride or offset not aligned as the mode requires), OutOfBounds (a read
past the end of UB).
"""

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.align.common import AlignOp, Addressing, AlignUnit, LoadDist, address_stage
from tilecosim.hdl.common import LINE_BYTES, FaultCode

__all__ = ["LoadAlignUnit", "LoadAlignResult", "load_wiring"]


def LoadAlignResult(vl: int) -> data.StructLayout:
    """The ``res`` payload: two VL-byte registers, the next address, the fault code."""
    return data.StructLayout({"dst0": 8 * vl, "dst1": 8 * vl, "next_addr": signed(42),
                              "fault": FaultCode})


def load_wiring(dist: LoadDist, vl: int, reg_trait: int = 1, t_bytes: int = 8):
    """For each destination byte, the source byte index (or None for a zero):
    ([dst0 indices], [dst1 indices] or None).  Written from the seed's description of each
    mode, independently of the model's code (the tests hold the two equal)."""
    if reg_trait == 2:
        half = t_bytes // 2
        return ([(b // half) * 2 * half + b % half for b in range(vl)],
                [(b // half) * 2 * half + half + b % half for b in range(vl)])
    w = dist.width or 1
    family = dist.family
    d0, d1 = [], None
    for b in range(vl):
        e, k = divmod(b, w)
        if family == "NORM":
            d0.append(b)
        elif family == "BRC":
            d0.append(k)
        elif family == "US":
            d0.append((e // 2) * w + k)
        elif family == "DS":
            d0.append(2 * e * w + k)
        elif family == "UNPACK4":
            d0.append(b // 4 if b % 4 == 0 else None)
        elif family == "UNPACK":
            src_e, kk = divmod(b, 2 * w)
            d0.append(src_e * w + kk if kk < w else None)
        elif family == "BLK":
            d0.append(b % LINE_BYTES)
        elif family == "E2B":
            d0.append((b // LINE_BYTES) * w + k)
        else:                                                      # DINTLV
            d0.append(2 * e * w + k)
    if dist.dual:
        d1 = [(2 * (b // w) + 1) * w + b % w for b in range(vl)]
    return d0, d1


def _wire(src, idx):
    return Cat(Const(0, 8) if i is None else src[8 * i:8 * i + 8] for i in idx)


class LoadAlignUnit(AlignUnit):
    """The LoadAlign unit (see module doc): ``LoadAlignUnit(vl=256)``."""

    def ports(self, vl: int) -> dict:
        return {
            "op": In(stream.Signature(AlignOp)),
            "ub_addr": Out(32),
            "ub_en": Out(1),
            "ub_data": In(16 * vl),
            "res": Out(stream.Signature(LoadAlignResult(vl))),
        }

    def elaborate(self, platform):
        m = Module()
        vl = self.vl
        op = self.op.payload

        # --- stage A: mode table, legality, address, alignment, bounds ------------------
        nbytes = Signal(range(2 * vl + 1))
        align = Signal(range(vl + 1))
        known = Signal()
        with m.Switch(op.dist):
            for d in LoadDist:
                n, a = d.geometry(vl)
                with m.Case(d.value):
                    m.d.comb += [nbytes.eq(n), align.eq(a), known.eq(1)]
        norm = op.dist == LoadDist.DIST_NORM.value
        trait2 = op.reg_trait == 2
        with m.If(trait2):
            m.d.comb += nbytes.eq(2 * vl)
        illegal = (~known | ((op.t == 3) & ~norm) | ((op.reg_trait != 1) & ~trait2)
                   | (trait2 & (~norm | (op.t < 2) | (op.mode == Addressing.ADDR_REG))))
        ea, nxt, fault = address_stage(m, op, self.ub_size, nbytes, align, illegal, "ld")

        # --- pipeline: A -> B (UB data arrives) -> C (registered result) ----------------
        b_valid = Signal()
        b_dist = Signal(5)
        b_t = Signal(2)
        b_trait2 = Signal()
        b_fault = Signal(FaultCode)
        b_next = Signal(signed(42))
        adv_b = ~self.res.valid | self.res.ready
        adv_a = ~b_valid | adv_b
        m.d.comb += self.op.ready.eq(adv_a)
        take = self.op.valid & adv_a
        m.d.comb += [self.ub_addr.eq(ea[:32]), self.ub_en.eq(take & (fault == FaultCode.NONE))]
        with m.If(adv_b):
            m.d.sync += b_valid.eq(0)
        with m.If(take):
            m.d.sync += [b_valid.eq(1), b_dist.eq(op.dist), b_t.eq(op.t), b_trait2.eq(trait2),
                         b_fault.eq(fault), b_next.eq(Mux(fault == FaultCode.NONE, nxt, op.addr))]

        src = self.ub_data
        dst0 = Signal(8 * vl)
        dst1 = Signal(8 * vl)
        with m.If(b_trait2):
            with m.Switch(b_t):
                for t_log, t_bytes in ((2, 4), (3, 8)):
                    with m.Case(t_log):
                        d0, d1 = load_wiring(LoadDist.DIST_NORM, vl, 2, t_bytes)
                        m.d.comb += [dst0.eq(_wire(src, d0)), dst1.eq(_wire(src, d1))]
        with m.Else():
            with m.Switch(b_dist):
                for d in LoadDist:
                    d0, d1 = load_wiring(d, vl)
                    with m.Case(d.value):
                        m.d.comb += dst0.eq(_wire(src, d0))
                        if d1 is not None:
                            m.d.comb += dst1.eq(_wire(src, d1))

        with m.If(self.res.valid & self.res.ready):
            m.d.sync += self.res.valid.eq(0)
        with m.If(b_valid & adv_b):
            ok = b_fault == FaultCode.NONE
            m.d.sync += [self.res.valid.eq(1),
                         self.res.payload.dst0.eq(Mux(ok, dst0, 0)),
                         self.res.payload.dst1.eq(Mux(ok, dst1, 0)),
                         self.res.payload.next_addr.eq(b_next),
                         self.res.payload.fault.eq(b_fault)]
        return m
