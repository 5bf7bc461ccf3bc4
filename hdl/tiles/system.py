"""The tile system: one instruction stream of TLOAD, TSTORE and TADD/TSUB over the tile
register file, with the TLOAD engine writing straight into the allocated registers and the
TSTORE engine reading them out to global memory.

Ports (stream = valid/ready):

* ``records``  in  -- block records, one per beat, the scalar register values beside them
  (:mod:`tilecosim.hdl.tiles.types`)
* ``mem_size`` in  -- bytes of global memory, for OutOfBounds
* ``req``      out -- global-memory read requests {addr, len (1..32 bytes)}
* ``resp``     in  -- one W-byte response per request, in order
* ``mem_wr``   out -- global-memory writes {addr, data (W bytes), be} of TSTORE; a write is
  done when taken
* ``done``     out -- one completion per instruction, in order, with its D8 fault code
* ``dbg_addr`` in  -- debug read: {queue, index, word} of a tile register by relative name
* ``dbg_data`` out -- that word, the cycle after the address
* ``dbg_status`` out -- the name's :class:`~tilecosim.hdl.tiles.types.LookupStatus` now
* ``live``     out -- per queue, which relative names are live (bit k: ``Q#k+1``)
* ``wr_active`` out -- a tile word is written this cycle (for benches and waveforms)

Instructions, in program order:

* TLOAD: the engine's decoder checks it (its faults first, as the model's), then the
  register file allocates every destination in one cycle or vetoes it (TileAllocation); the
  engine takes it and writes each output tile into its register's slot.  TLOADs stream back
  to back: allocation happens as the engine takes the instruction, and the engine overlaps
  consecutive instructions as it does alone.
* TADD/TSUB: waits until every instruction before it has completed (its sources must be
  committed), checks in the model's order (TileReleased of each source, IllegalInstruction
  of the destination, IllegalParameter when the sources differ in type, layout, shape or
  size, IllegalInstruction for a non-integer type, TileAllocation), commits (allocates the
  destination, releases the sources read without ``.reuse``) and then streams the two
  sources through the ALU into the destination, one W-byte beat per cycle.  The next
  instruction waits for its completion.
* TSTORE: waits until every instruction before it has completed, checks its source
  (TileReleased or IllegalInstruction), then the TSTORE engine checks the rest (D15) and
  reads the source's slot through read port 0, writing global memory on ``mem_wr``; its
  completion releases the source unless ``.reuse``.  The next instruction waits for that
  completion, so memory follows program order (a TLOAD after a TSTORE reads what it wrote):
  the simplest rule, whose cost is that a TSTORE overlaps nothing.
* A malformed block completes with IllegalInstruction.

A faulting instruction changes nothing: no allocation, no release, no write.

Stages of ``elaborate``: the record assembler, TLOAD issue (check, allocate, hand over), the
elementwise sequencer, TSTORE, the engine's writes into the SRAM, the debug port.

Throughput: the TLOAD engine's (one W-byte beat per cycle at W = 32), with no bubble added
between TLOADs while the records of the next arrive during the current one (a TLOAD is
6 + outputs records); TADD/TSUB one beat per cycle once started.  Latency from the last
record of a TLOAD to its first tile write: the engine's (3 cycles + the memory latency) + 1
(the assembler's output register).
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, fifo, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from tilecosim.hdl.common import Completion, FaultCode, check_choice, check_width
from tilecosim.hdl.tiles.elementwise import ElementwiseALU, lane_width_of
from tilecosim.hdl.tiles.records import RecordAssembler
from tilecosim.hdl.tiles.regfile import NQUEUES, SLOT_SIZES, TileRegisterFile
from tilecosim.hdl.tiles.types import (QUEUE_DEPTH, DebugAddr, LookupStatus, Opcode,
                                       RecordBeat, TILE_LAYOUT_CODES)
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.tload.decode import check_config
from tilecosim.hdl.tload.types import MAX_OUTPUTS, MemRequest, TLoadLayout
from tilecosim.hdl.tload.dtype_rom import DTYPE_ROM
from tilecosim.hdl.tstore.engine import MemWrite, TStoreEngine

__all__ = ["TileSystem"]


class _EW(enum.Enum, shape=2):
    """The state of the element-wise instruction in flight: none, streaming, completing."""
    IDLE = 0
    RUN = 1
    DONE = 2


def _source_fault(status):
    """The fault of reading a source whose lookup says ``status`` (NONE when live)."""
    return Mux(status == LookupStatus.LIVE, FaultCode.NONE,
               Mux(status == LookupStatus.ILLEGAL, FaultCode.IllegalInstruction,
                   FaultCode.TileReleased))


class TileSystem(wiring.Component):
    """TLOAD and TADD/TSUB over the tile register file (see module doc).

    Parameters: ``width`` W (32 or 64); ``profile`` of the pad values; ``lcfr`` (min, max)
    tile sizes, the max being each register's slot; ``depth`` of the engine's run queue;
    ``arith`` "integer" (the only arithmetic of this RTL: floating-point TADD/TSUB are
    IllegalInstruction, as the Machine's ``arith="integer"``).
    """

    def __init__(self, width: int = 32, profile: str = "finite",
                 lcfr: tuple[int, int] = (256, 4096), depth: int = 16,
                 arith: str = "integer"):
        check_width(width)
        check_config(profile, lcfr)
        check_choice("lcfr max", lcfr[1], SLOT_SIZES)
        check_choice("arith", arith, ("integer",))
        self.width = width
        self.log2_width = width.bit_length() - 1
        self.profile = profile
        self.lcfr = tuple(lcfr)
        self.depth = depth
        self.arith = arith
        super().__init__({
            "records": In(stream.Signature(RecordBeat)),
            "mem_size": In(64),
            "req": Out(stream.Signature(MemRequest(width))),
            "resp": In(stream.Signature(8 * width)),
            "mem_wr": Out(stream.Signature(MemWrite(width))),
            "done": Out(stream.Signature(Completion)),
            "dbg_addr": In(DebugAddr),
            "dbg_data": Out(8 * width),
            "dbg_status": Out(LookupStatus),
            "live": Out(data.ArrayLayout(QUEUE_DEPTH, NQUEUES)),
            "wr_active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.width
        m.submodules.assembler = asm = RecordAssembler()
        m.submodules.engine = eng = TLoadEngine(width=W, profile=self.profile, lcfr=self.lcfr,
                                                depth=self.depth, checked=True)
        m.submodules.regfile = rf = TileRegisterFile(width=W, slot_bytes=self.lcfr[1])
        m.submodules.alu = alu = ElementwiseALU(W)
        m.submodules.store = st = TStoreEngine(width=W, lcfr=self.lcfr)
        slots = data.ArrayLayout(6, MAX_OUTPUTS)
        m.submodules.writemap = wmap = fifo.SyncFIFOBuffered(
            width=slots.size + 17, depth=4)

        connect(m, flipped(self.records), asm.i)
        connect(m, eng.req, flipped(self.req))
        connect(m, flipped(self.resp), eng.resp)
        m.d.comb += [eng.mem_size.eq(self.mem_size), self.live.eq(rf.live)]

        self.engine_done = eng.done
        pend = asm.o
        is_tload = (pend.payload.opcode == Opcode.TLOAD) & ~pend.payload.bad
        is_store = (pend.payload.opcode == Opcode.TSTORE) & ~pend.payload.bad
        outstanding = Signal(range(64))
        state = Signal(_EW)
        self._tload_issue(m, pend, is_tload, eng, rf, wmap, outstanding, state, slots)
        # the TSTORE engine reads its source through read port 0 while it has it (busy)
        store = {"busy": Signal(name="store_busy"), "slot": Signal(6, name="store_slot")}
        ew_write = self._elementwise(m, pend, is_tload | is_store, rf, alu, outstanding, state,
                                     store, st)
        self._tstore(m, pend, is_store, st, rf, outstanding, state, store)
        self._tile_writes(m, eng, rf, wmap, slots, ew_write)
        self._debug(m, rf)
        return m

    def _tload_issue(self, m, pend, is_tload, eng, rf, wmap, outstanding, state, slots):
        """A TLOAD goes to the engine when no TADD/TSUB is in progress; as the engine takes
        it, its destinations are allocated (or vetoed) and their slots queued for the
        writes."""
        t = pend.payload.tload
        chk = eng.check
        m.d.comb += [eng.instr.payload.eq(t),
                     eng.instr.valid.eq(pend.valid & is_tload & (state == _EW.IDLE)
                                        & wmap.w_rdy),
                     eng.veto.eq(~rf.alloc_ok)]
        with m.If(is_tload):
            m.d.comb += [rf.alloc_n.eq(Mux(t.n > MAX_OUTPUTS, 0, t.n)),
                         rf.alloc_meta.dtype.eq(t.dtype),
                         rf.alloc_meta.log2_rows.eq(chk.log2_rows),
                         rf.alloc_meta.log2_cols.eq(chk.log2_cols),
                         rf.alloc_meta.log2_size.eq(chk.log2_size)]
            for k in range(MAX_OUTPUTS):
                m.d.comb += rf.alloc[k].eq(t.queues[k])
            with m.Switch(t.layout):
                for lay in TLoadLayout:
                    with m.Case(lay):
                        dest = ("ND" if lay is TLoadLayout.NORM
                                else "NZ" if lay.nz_tile else "ZN")
                        m.d.comb += rf.alloc_meta.layout.eq(TILE_LAYOUT_CODES[dest])
        accept = eng.instr.valid & eng.instr.ready
        legal = (chk.fault == FaultCode.NONE) & rf.alloc_ok
        beats = Signal(17)
        m.d.comb += beats.eq(t.n << (chk.log2_size - self.log2_width)[:5])
        with m.If(accept):
            m.d.comb += pend.ready.eq(1)
            with m.If(legal):
                m.d.comb += [rf.commit.eq(1), wmap.w_en.eq(1),
                             wmap.w_data.eq(Cat(rf.alloc_slots.as_value()[:slots.size], beats))]
        done = eng.done.valid & eng.done.ready
        with m.If(accept & ~done):
            m.d.sync += outstanding.eq(outstanding + 1)
        with m.Elif(~accept & done):
            m.d.sync += outstanding.eq(outstanding - 1)

    def _elementwise(self, m, pend, is_tload, rf, alu, outstanding, state, store, st):
        """TADD/TSUB (and a malformed block): wait for the instructions before, check,
        commit, then one beat per cycle through the ALU.  Returns the write it makes:
        {valid, slot, word, data}."""
        p = pend.payload
        W = self.width
        words_bits = (self.lcfr[1] // W - 1).bit_length() + 1
        for k in range(2):
            m.d.comb += [rf.lookup[k].queue.eq(p.src[k].queue),
                         rf.lookup[k].index.eq(p.src[k].index)]
        f0, f1 = rf.found[0], rf.found[1]
        is_int, lane = lane_width_of(f0.meta.dtype)
        differ = f0.meta.as_value() != f1.meta.as_value()
        fault = Signal(FaultCode)
        checks = [(p.bad, FaultCode.IllegalInstruction),
                  (f0.status != LookupStatus.LIVE, _source_fault(f0.status)),
                  (f1.status != LookupStatus.LIVE, _source_fault(f1.status)),
                  (p.dst >= NQUEUES, FaultCode.IllegalInstruction),
                  (differ, FaultCode.IllegalParameter),
                  (~is_int, FaultCode.IllegalInstruction),
                  (~rf.alloc_ok, FaultCode.TileAllocation)]
        for k, (broken, code) in enumerate(checks):
            with (m.If if k == 0 else m.Elif)(broken):
                m.d.comb += fault.eq(code)
        with m.If(~is_tload):
            m.d.comb += [rf.alloc[0].eq(p.dst), rf.alloc_n.eq(1), rf.alloc_meta.eq(f0.meta)]

        result = Signal(FaultCode)
        slot_a, slot_b, slot_d = Signal(6), Signal(6), Signal(6)
        sub = Signal()
        lane_r = Signal.like(alu.lane)
        words = Signal(words_bits)
        k = Signal(words_bits)
        w_valid, w_word = Signal(), Signal(words_bits)
        m.d.comb += [alu.a.eq(rf.rd_data[0]), alu.b.eq(rf.rd_data[1]), alu.sub.eq(sub),
                     alu.lane.eq(lane_r),
                     # one unconditional driver per port: Yosys then writes plain assigns
                     # (a part driven by an always @* of a never-changing register stays X
                     # in Icarus, which runs such a block only on an event)
                     rf.rd[0].slot.eq(Mux(store["busy"], store["slot"], slot_a)),
                     rf.rd[0].word.eq(Mux(store["busy"], st.tile_rd.word, k)),
                     rf.rd[1].slot.eq(slot_b), rf.rd[1].word.eq(k)]
        m.d.sync += w_valid.eq(0)
        m.d.comb += [self.done.valid.eq(self.engine_done.valid),
                     self.done.payload.eq(self.engine_done.payload),
                     self.engine_done.ready.eq(self.done.ready)]
        with m.Switch(state):
            with m.Case(_EW.IDLE):
                with m.If(pend.valid & ~is_tload & (outstanding == 0)):
                    with m.If(fault != FaultCode.NONE):
                        m.d.sync += [result.eq(fault), state.eq(_EW.DONE)]
                    with m.Else():
                        m.d.comb += [rf.commit.eq(1),
                                     rf.release.eq(Cat(~p.src[0].reuse, ~p.src[1].reuse))]
                        m.d.sync += [result.eq(FaultCode.NONE), state.eq(_EW.RUN),
                                     slot_a.eq(f0.slot), slot_b.eq(f1.slot),
                                     slot_d.eq(rf.alloc_slots[0]),
                                     sub.eq(p.opcode == Opcode.TSUB), lane_r.eq(lane), k.eq(0),
                                     words.eq(Const(1, words_bits) << (f0.meta.log2_size - self.log2_width)[:5])]
            with m.Case(_EW.RUN):
                with m.If(k != words):
                    m.d.sync += [k.eq(k + 1), w_valid.eq(1), w_word.eq(k)]
                with m.Elif(~w_valid):
                    m.d.sync += state.eq(_EW.DONE)
            with m.Case(_EW.DONE):
                m.d.comb += [self.done.valid.eq(1), self.done.payload.fault.eq(result)]
                with m.If(self.done.ready):
                    m.d.comb += pend.ready.eq(1)
                    m.d.sync += state.eq(_EW.IDLE)
        return {"valid": w_valid, "slot": slot_d, "word": w_word, "data": alu.y}

    def _tstore(self, m, pend, is_store, st, rf, outstanding, ew_state, store):
        """TSTORE: waits until every instruction before it has completed (their tiles are
        written, their memory reads done), checks its source (TileReleased or
        IllegalInstruction, the model's first check), and hands it to the TSTORE engine,
        which reads the source's slot through read port 0 and writes global memory on
        ``mem_wr``.  Its completion is the engine's; a legal one releases the source
        (unless ``.reuse``) as it leaves.  The next instruction waits for it: memory follows
        program order because nothing overlaps a TSTORE."""
        p = pend.payload
        f0 = rf.found[0]
        log2_esize = Signal(2)
        with m.Switch(f0.meta.dtype):
            for code, row in DTYPE_ROM.items():
                with m.Case(code):
                    m.d.comb += log2_esize.eq(row[0])
        t = p.tload
        ins = st.instr.payload
        m.d.comb += [ins.layout.eq(t.layout), ins.dtype.eq(t.dtype),
                     ins.valid_col.eq(t.valid_col), ins.valid_row.eq(t.valid_row),
                     ins.col.eq(t.col), ins.base.eq(t.base), ins.stride.eq(t.stride),
                     ins.stride_given.eq(t.stride_given), ins.log2_size.eq(f0.meta.log2_size),
                     ins.src_log2_esize.eq(log2_esize), st.mem_size.eq(self.mem_size)]
        connect(m, st.wr, flipped(self.mem_wr))
        busy, slot = store["busy"], store["slot"]     # the engine has it; its source's slot
        looked = Signal()               # its source fault is being reported
        m.d.comb += st.tile_data.eq(rf.rd_data[0])
        ready = pend.valid & is_store & (outstanding == 0) & (ew_state == _EW.IDLE)
        src_fault = _source_fault(f0.status)
        with m.If(ready & ~busy & ~looked):
            with m.If(src_fault != FaultCode.NONE):
                m.d.sync += looked.eq(1)
            with m.Else():
                m.d.comb += st.instr.valid.eq(1)
                with m.If(st.instr.ready):
                    m.d.sync += [busy.eq(1), slot.eq(f0.slot)]
        with m.If(busy):
            m.d.comb += [self.done.valid.eq(st.done.valid),
                         self.done.payload.eq(st.done.payload),
                         st.done.ready.eq(self.done.ready)]
            with m.If(st.done.valid & self.done.ready):
                m.d.comb += pend.ready.eq(1)
                m.d.sync += busy.eq(0)
                with m.If(st.done.payload.fault == FaultCode.NONE):
                    m.d.comb += [rf.commit.eq(1), rf.release.eq(~p.src[0].reuse)]
        with m.If(looked):
            m.d.comb += [self.done.valid.eq(1), self.done.payload.fault.eq(src_fault)]
            with m.If(self.done.ready):
                m.d.comb += pend.ready.eq(1)
                m.d.sync += looked.eq(0)

    def _tile_writes(self, m, eng, rf, wmap, slots, ew):
        """The engine's writes go to the slots of their instruction (the head of the write
        map, popped after its last beat); the elementwise sequencer's to its destination.
        The two never overlap: a TADD/TSUB starts when the engine has finished."""
        head = Signal(data.StructLayout({"slots": slots, "beats": 17}))
        count = Signal(17)
        wr = eng.write.payload
        m.d.comb += [head.eq(wmap.r_data), eng.write.ready.eq(1)]
        with m.If(ew["valid"]):
            m.d.comb += [rf.wr_en.eq(1), rf.wr.at.slot.eq(ew["slot"]),
                         rf.wr.at.word.eq(ew["word"]), rf.wr.data.eq(ew["data"]),
                         rf.wr.be.eq(Const(-1, self.width))]
        with m.Else():
            m.d.comb += [rf.wr_en.eq(eng.write.valid), rf.wr.at.slot.eq(head.slots[wr.tile]),
                         rf.wr.at.word.eq(wr.offset >> self.log2_width),
                         rf.wr.data.eq(wr.data), rf.wr.be.eq(wr.be)]
        m.d.comb += self.wr_active.eq(rf.wr_en)
        with m.If(eng.write.valid):
            with m.If(count + 1 == head.beats):
                m.d.comb += wmap.r_en.eq(1)
                m.d.sync += count.eq(0)
            with m.Else():
                m.d.sync += count.eq(count + 1)

    def _debug(self, m, rf):
        """A word of any register by relative name, for checking."""
        a = self.dbg_addr
        m.d.comb += [rf.lookup[2].queue.eq(a.queue), rf.lookup[2].index.eq(a.index),
                     rf.rd[2].slot.eq(rf.found[2].slot), rf.rd[2].word.eq(a.word),
                     self.dbg_data.eq(rf.rd_data[2]), self.dbg_status.eq(rf.found[2].status)]
