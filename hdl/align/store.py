"""The StoreAlign unit: address/alignment unit + pack/interleave mux + byte enables (D12).

Ports:

* ``op`` in -- a StoreAlign: the addressing of :data:`tilecosim.hdl.align.common.AlignOp` with
  ``dist`` a StoreDist, plus ``src0``, ``src1`` (VL bytes each) and ``mask`` (one bit per
  byte lane; an element is active when the bit of its first byte is set)
* ``ub_size`` in -- the bytes of UB, constant during a run (OutOfBounds)
* ``ub_waddr``, ``ub_wen``, ``ub_wdata`` (2*VL bytes), ``ub_wbe`` out -- a synchronous UB
  write port: byte k of ``ub_wdata`` goes to ub[ub_waddr + k] where ``ub_wbe[k]``
* ``res`` out -- {next_addr, fault}

One StoreAlign per cycle; latency 1 cycle (the write and the result leave registered
together).  A faulting op writes nothing.
"""

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.align.common import Addressing, AlignUnit, StoreDist, address_stage
from tilecosim.hdl.common import FaultCode

__all__ = ["StoreAlignUnit", "StoreAlignOp", "StoreAlignResult", "store_wiring"]

T_BYTES = (1, 2, 4, 8)


def StoreAlignOp(vl: int) -> data.StructLayout:
    """The ``op`` payload: the addressing of ``AlignOp`` (``dist`` a StoreDist), the two
    VL-byte source registers and the mask (one bit per byte lane)."""
    return data.StructLayout({"dist": 5, "t": 2, "addr": 32, "mode": Addressing,
                              "value": signed(32), "reg_trait": 2, "src0": 8 * vl,
                              "src1": 8 * vl, "mask": vl})


#: The ``res`` payload: the next address (PostUpdate) and the fault code.
StoreAlignResult = data.StructLayout({"next_addr": signed(42), "fault": FaultCode})


def store_wiring(dist: StoreDist, vl: int, t_bytes: int, reg_trait: int = 1):
    """For each UB byte of the store: (register, byte index) or None, and the mask lane that
    enables it (None: always written)."""
    out = []
    if reg_trait == 2:
        half = t_bytes // 2
        for b in range(2 * vl):
            el, kk = divmod(b, 2 * half)
            out.append(((kk // half, el * half + kk % half), el * half))
        return out
    w = dist.width or t_bytes
    n, _ = dist.geometry(t_bytes, vl)
    family = dist.family
    for b in range(n):
        if family == "NORM":
            out.append(((0, b), (b // w) * w))
        elif family == "FIRST_ELEMENT":
            out.append(((0, b), None))
        elif family == "PACK4":
            out.append(((0, 4 * b), 4 * b))
        elif family == "PACK":
            e, k = divmod(b, w // 2)
            out.append(((0, e * w + k), e * w))
        else:                                                    # INTLV
            e, k = divmod(b, w)
            out.append(((e % 2, (e // 2) * w + k), None))
    return out


class StoreAlignUnit(AlignUnit):
    """The StoreAlign unit (see module doc): ``StoreAlignUnit(vl=256)``."""

    def ports(self, vl: int) -> dict:
        return {
            "op": In(stream.Signature(StoreAlignOp(vl))),
            "ub_waddr": Out(32),
            "ub_wen": Out(1),
            "ub_wdata": Out(16 * vl),
            "ub_wbe": Out(2 * vl),
            "res": Out(stream.Signature(StoreAlignResult)),
        }

    def elaborate(self, platform):
        m = Module()
        vl = self.vl
        op = self.op.payload
        regs = (op.src0, op.src1)

        nbytes = Signal(range(2 * vl + 1))
        align = Signal(range(vl + 1))
        known = Signal()
        wdata = Signal(16 * vl)
        wbe = Signal(2 * vl)

        def drive(wiring_list):
            bytes_, bes = [], []
            for src, lane in wiring_list:
                r, k = src
                bytes_.append(regs[r][8 * k:8 * k + 8])
                bes.append(Const(1) if lane is None else op.mask[lane])
            m.d.comb += [wdata.eq(Cat(*bytes_)), wbe.eq(Cat(*bes))]

        trait2 = op.reg_trait == 2
        with m.Switch(op.t):
            for t_log, t_bytes in enumerate(T_BYTES):
                with m.Case(t_log):
                    with m.If(trait2):
                        if t_bytes >= 4:
                            m.d.comb += [nbytes.eq(2 * vl), align.eq(32)]
                            drive(store_wiring(StoreDist.DIST_NORM, vl, t_bytes, 2))
                    with m.Else():
                        with m.Switch(op.dist):
                            for d in StoreDist:
                                n, a = d.geometry(t_bytes, vl)
                                with m.Case(d.value):
                                    m.d.comb += [nbytes.eq(n), align.eq(a), known.eq(1)]
                                    drive(store_wiring(d, vl, t_bytes))
        b64_ok = (op.dist == StoreDist.DIST_NORM.value) | (op.dist == StoreDist.DIST_PACK_B64.value)
        norm = op.dist == StoreDist.DIST_NORM.value
        illegal = (((op.reg_trait != 1) & ~trait2) | (~trait2 & ~known)
                   | (~trait2 & (op.t == 3) & ~b64_ok)
                   | (trait2 & (~norm | (op.t < 2) | (op.mode == Addressing.ADDR_REG))))
        ea, nxt, fault = address_stage(m, op, self.ub_size, nbytes, align, illegal, "st")

        m.d.comb += self.op.ready.eq(~self.res.valid | self.res.ready)
        take = self.op.valid & self.op.ready
        m.d.sync += self.ub_wen.eq(0)
        with m.If(self.res.valid & self.res.ready):
            m.d.sync += self.res.valid.eq(0)
        with m.If(take):
            ok = fault == FaultCode.NONE
            m.d.sync += [self.res.valid.eq(1), self.res.payload.fault.eq(fault),
                         self.res.payload.next_addr.eq(Mux(ok, nxt, op.addr)),
                         self.ub_wen.eq(ok), self.ub_waddr.eq(ea[:32]),
                         self.ub_wdata.eq(wdata), self.ub_wbe.eq(wbe)]
        return m
