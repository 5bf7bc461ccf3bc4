"""The record assembler: block-template records in, one decoded instruction out.

Ports:

* ``i`` in  -- record beats (:data:`~tilecosim.hdl.tiles.types.RecordBeat`), the last of a
  block marked ``end``
* ``o`` out -- the instruction (:data:`Instr`): a TLOAD as the engine takes it (every
  operand evaluated: ``reg + imm`` is a 64-bit add, as the model's), a TSTORE (the same
  fields, its source in ``src[0]``), or a TADD/TSUB with its two sources and its
  destination queue

A block that does not start with BSTART, a TADD/TSUB without two sources and a
destination, or a TSTORE without exactly one source or with a destination, is ``bad`` (the
system completes it with IllegalInstruction).

Stages of ``elaborate``: the next state from the beat, the output register.

Throughput one record per cycle, with no bubble between blocks (the output register is
refilled in the cycle it is emptied).  Latency: the instruction is on ``o`` the cycle after
its last record.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.tiles.types import Opcode, RecordBeat, RecordKind
from tilecosim.hdl.tload.types import MAX_OUTPUTS, PadValue, TLoadInstr

__all__ = ["RecordAssembler", "Instr", "Source"]

#: a tile-register source of TADD/TSUB or TSTORE
Source = data.StructLayout({"queue": 3, "index": 5, "reuse": 1})

Instr = data.StructLayout({
    "opcode": Opcode,
    "bad": 1,
    "tload": TLoadInstr,
    "src": data.ArrayLayout(Source, 2),
    "dst": 3,
})

_Acc = data.StructLayout({
    "instr": Instr,
    "started": 1,
    "col_given": 1,
    "nsrc": 2,
    "has_dst": 1,
})


class RecordAssembler(wiring.Component):
    """Assembles block records into instructions (see module doc)."""

    def __init__(self):
        super().__init__({
            "i": In(stream.Signature(RecordBeat)),
            "o": Out(stream.Signature(Instr)),
        })

    def elaborate(self, platform):
        m = Module()
        acc = Signal(_Acc)
        nxt = self._next_state(m, acc)
        self._output(m, acc, nxt)
        return m

    def _next_state(self, m, acc):
        """The accumulated block after the beat on ``i``."""
        beat = self.i.payload
        rec = beat.record
        nxt = Signal(_Acc)
        ins = nxt.instr
        t = ins.tload
        value = Signal(64)
        m.d.comb += [nxt.eq(acc), value.eq(beat.value0 + rec.imm)]
        with m.Switch(rec.kind):
            with m.Case(RecordKind.BSTART_TMA, RecordKind.BSTART_TEW):
                m.d.comb += [nxt.eq(0), nxt.started.eq(1), t.valid_row.eq(1),
                             t.pad.eq(PadValue.Null)]
                with m.If(rec.kind == RecordKind.BSTART_TMA):
                    store = rec.f0 == Opcode.TSTORE.value
                    m.d.comb += [ins.opcode.eq(Mux(store, Opcode.TSTORE, Opcode.TLOAD)),
                                 t.dtype.eq(rec.f1),
                                 ins.bad.eq((rec.f0 != Opcode.TLOAD.value) & ~store)]
                with m.Else():
                    m.d.comb += [ins.opcode.eq(rec.f0),
                                 ins.bad.eq((rec.f0 != Opcode.TADD.value)
                                            & (rec.f0 != Opcode.TSUB.value))]
            with m.Case(RecordKind.B_DATR):
                m.d.comb += [t.layout.eq(rec.f0), t.pad.eq(rec.f1)]
            with m.Case(RecordKind.B_DIM):
                with m.Switch(rec.f0):
                    with m.Case(0):
                        m.d.comb += t.valid_col.eq(value)
                    with m.Case(1):
                        m.d.comb += t.valid_row.eq(value)
                    with m.Case(2):
                        m.d.comb += [t.col.eq(value), nxt.col_given.eq(1)]
            with m.Case(RecordKind.B_IOT):
                m.d.comb += [ins.dst.eq(rec.f0), nxt.has_dst.eq(1)]
                for k in range(MAX_OUTPUTS):
                    with m.If(acc.instr.tload.n == k):
                        m.d.comb += [t.queues[k].eq(rec.f0),
                                     t.sizes[k].eq(Mux(rec.f2, beat.value0, rec.imm))]
                with m.If(acc.instr.tload.n != 15):
                    m.d.comb += t.n.eq(acc.instr.tload.n + 1)
            with m.Case(RecordKind.B_IOR):
                m.d.comb += [t.base.eq(beat.value0), t.stride.eq(beat.value1),
                             t.stride_given.eq(rec.f2)]
            with m.Case(RecordKind.B_IOS):
                for k in range(2):
                    with m.If(acc.nsrc == k):
                        m.d.comb += [ins.src[k].queue.eq(rec.f0), ins.src[k].index.eq(rec.f1),
                                     ins.src[k].reuse.eq(rec.f2)]
                with m.If(acc.nsrc != 3):
                    m.d.comb += nxt.nsrc.eq(acc.nsrc + 1)
        bstart = (rec.kind == RecordKind.BSTART_TMA) | (rec.kind == RecordKind.BSTART_TEW)
        with m.If(~bstart & ~acc.started):            # a record before any BSTART
            m.d.comb += ins.bad.eq(1)
        return nxt

    def _output(self, m, acc, nxt):
        """The block ends: its instruction into the output register (LB2 defaults to LB0)."""
        take = self.i.valid & self.i.ready
        m.d.comb += self.i.ready.eq(~self.i.payload.end | ~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(take):
            m.d.sync += acc.eq(nxt)
            with m.If(self.i.payload.end):
                ins = Signal(Instr)
                op = nxt.instr.opcode
                ew = (op == Opcode.TADD) | (op == Opcode.TSUB)
                m.d.comb += [ins.eq(nxt.instr),
                             ins.tload.col.eq(Mux(nxt.col_given, nxt.instr.tload.col,
                                                  nxt.instr.tload.valid_col))]
                with m.If(ew & ((nxt.nsrc != 2) | ~nxt.has_dst)):
                    m.d.comb += ins.bad.eq(1)
                with m.If((op == Opcode.TSTORE) & ((nxt.nsrc != 1) | nxt.has_dst)):
                    m.d.comb += ins.bad.eq(1)
                m.d.sync += [self.o.valid.eq(1), self.o.payload.eq(ins), acc.eq(0)]
        return m
