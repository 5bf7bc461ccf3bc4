"""The TLOAD engine: decoder, fractal address generator, transpose unit, pad/merge.

Ports (stream = valid/ready; Verilog names ``<port>__payload``, ``__valid``, ``__ready``):

* ``instr``  in  -- a decoded TLOAD (:data:`tilecosim.hdl.tload.types.TLoadInstr`)
* ``mem_size`` in -- bytes of global memory, for the OutOfBounds check
* ``req``    out -- memory read requests {addr, len (1..32 bytes)}
* ``resp``   in  -- one W-byte response per request, in order; byte k = memory[addr + k]
* ``write``  out -- tile writes {tile, offset, data (W bytes), be}
* ``done``   out -- one completion per instruction, in order, with its D8 fault code

With ``checked=True`` (the engine inside the tile system) two more ports let the tile
register file decide on an instruction before the engine takes it:

* ``check``  out -- the decoder's verdict on the instruction on ``instr`` (combinational):
  its fault code and the geometry of its output tiles (:data:`Check`)
* ``veto``   in  -- the destination registers cannot be allocated: an instruction the
  decoder finds legal completes with TileAllocation instead (no request, no write), the
  model's fault order (decode and memory checks first, then allocation)

A faulting instruction makes no request and no write; its completion follows the
completions of the instructions before it.  Instructions stream back to back: the
next one is accepted while the previous one drains, with no bubble, when both move
runs of the same kind and element size (an instruction that switches between the
direct and the transposing path, or changes element size on the transposing one,
waits for the pipeline to drain).

Stages of ``elaborate``: issue (a run becomes a request and a queue entry), consume (the
queue head and its response, into a direct line or the transpose unit), transposed lines
(with their group's extents), into pad/merge, and the W-byte writes with the completions.

Throughput: one 32-byte line per cycle, hence one W-byte write per cycle at W = 32
and one every two cycles at W = 64 (the datapath is 32 bytes wide; W = 64 widens
the ports).  NORM tiles with rows narrower than 32 bytes take one cycle per row;
b8 ND2ZN/DN2NZ tiles whose transposed extent is 16 take 32 cycles per 16 lines.
Latency from instruction to first write: 3 cycles plus the memory latency.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from tilecosim.hdl.common import (LINE_BYTES, Completion, FaultCode, check_at_least,
                                  check_choice)
from tilecosim.hdl.completion import CompletionQueue
from tilecosim.hdl.tload.addrgen import KIND_TRANSPOSE, FractalAddressGenerator, Run
from tilecosim.hdl.tload.decode import TLoadDecoder, check_config
from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.hdl.tload.types import MemRequest, TileWrite, TLoadInstr
from tilecosim.hdl.transpose import NaiveTranspose, SquareTranspose

__all__ = ["TLoadEngine", "Check"]

#: what the decoder says of the instruction on ``instr``, for the tile register file
Check = data.StructLayout({"fault": FaultCode, "log2_rows": 5, "log2_cols": 5,
                           "log2_size": 5})

LineMeta = data.StructLayout({"tile": 3, "line": 13, "last": 1})
GroupMeta = data.StructLayout({"tile": 3, "line": 13, "log2_lines": 3, "valid_lines": 6,
                               "valid_elems": 6, "log2_esize": 2, "pattern": 64, "null": 1,
                               "instr_last": 1})


def _byte_mask(m, count, name):
    """32 bits: the low ``count`` bytes."""
    out = Signal(LINE_BYTES, name=name)
    m.d.comb += out.eq(Cat(count > b for b in range(LINE_BYTES)))
    return out


class TLoadEngine(wiring.Component):
    """The TLOAD engine (see module doc).

    Parameters: ``width`` W (32 or 64) of the memory response and tile write beats;
    ``profile`` ("finite" or "ieee-inf") of the Max/Min pad values; ``lcfr``
    (min, max) tile sizes; ``depth`` of the in-flight run queue (>= the memory
    latency + 2 for full throughput); ``transpose`` "square" (one square of storage,
    alternating orientation) or "naive" (fill then drain); ``checked``: add the ``check``
    and ``veto`` ports of the tile system.
    """

    def __init__(self, width: int = 32, profile: str = "finite",
                 lcfr: tuple[int, int] = (256, 256 * 1024), depth: int = 16,
                 transpose: str = "square", checked: bool = False):
        check_choice("width", width, (32, 64))
        check_at_least("depth", depth, 2, "runs in flight")
        check_choice("transpose", transpose, ("square", "naive"))
        check_config(profile, lcfr)
        self.width = width
        self.profile = profile
        self.lcfr = lcfr
        self.depth = depth
        self.transpose_kind = transpose
        self.checked = checked
        members = {
            "instr": In(stream.Signature(TLoadInstr)),
            "mem_size": In(64),
            "req": Out(stream.Signature(MemRequest)),
            "resp": In(stream.Signature(8 * width)),
            "write": Out(stream.Signature(TileWrite(width))),
            "done": Out(stream.Signature(Completion)),
        }
        if checked:
            members.update(check=Out(Check), veto=In(1))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.decoder = dec = TLoadDecoder(self.profile, self.lcfr, registered=False)
        m.submodules.addrgen = gen = FractalAddressGenerator()
        m.submodules.runs = runs = fifo.SyncFIFOBuffered(width=Run.size, depth=self.depth)
        m.submodules.transpose = tr = (SquareTranspose() if self.transpose_kind == "square"
                                       else NaiveTranspose())
        m.submodules.groups = groups = fifo.SyncFIFO(width=GroupMeta.size, depth=2)
        m.submodules.padmerge = pm = PadMerge(LineMeta.size)
        m.submodules.completions = cq = CompletionQueue()

        connect(m, flipped(self.instr), dec.i)
        if self.checked:
            self._checked(m, dec, gen)
        else:
            connect(m, dec.o, gen.i)
        connect(m, gen.fault, cq.fault)
        m.d.comb += [dec.mem_size.eq(self.mem_size), gen.idle.eq(cq.idle),
                     cq.started.eq(gen.started)]
        connect(m, cq.done, flipped(self.done))

        # the FIFOs are joined by their streams: a write is valid & ready on w_stream
        self._issue(m, gen, runs.w_stream)
        line = self._consume(m, runs.r_stream, tr, groups.w_stream, pm)
        self._into_padmerge(m, line, tr, groups.r_stream, pm)
        self._write(m, pm, cq)
        return m

    def _checked(self, m, dec, gen):
        """The decoder's verdict out on ``check``; a legal instruction that ``veto`` stops
        becomes a TileAllocation fault."""
        d = dec.o.payload
        m.d.comb += [
            self.check.fault.eq(d.fault), self.check.log2_rows.eq(d.log2_rows),
            self.check.log2_cols.eq(d.log2_cols), self.check.log2_size.eq(dec.log2_size),
            gen.i.valid.eq(dec.o.valid), dec.o.ready.eq(gen.i.ready), gen.i.payload.eq(d),
        ]
        with m.If((d.fault == FaultCode.NONE) & self.veto):
            m.d.comb += gen.i.payload.fault.eq(FaultCode.TileAllocation)

    def _issue(self, m, gen, runs):
        """A run becomes a memory request (unless it reads nothing) and an entry of ``runs``
        (the run queue's write stream)."""
        run = gen.o.payload
        needs_read = run.read_bytes != 0
        m.d.comb += [
            self.req.valid.eq(gen.o.valid & needs_read & runs.ready),
            self.req.payload.addr.eq(run.addr),
            self.req.payload.len.eq(run.read_bytes),
            gen.o.ready.eq(runs.ready & (~needs_read | self.req.ready)),
            runs.valid.eq(gen.o.valid & (~needs_read | self.req.ready)),
            runs.payload.eq(run),
        ]

    def _consume(self, m, runs, tr, groups, pm):
        """The head of ``runs`` (the run queue's read stream) and its response: a direct run is placed into the line being
        assembled, a transposing run goes to the transpose unit (its group's extents to
        ``groups``, a write stream).  Returns the direct line: {out, data, valid, head}."""
        head = Run(runs.payload)
        head_reads = head.read_bytes != 0
        have_data = ~head_reads | self.resp.valid
        keep = _byte_mask(m, head.read_bytes, "keep")
        rdata = Signal(8 * LINE_BYTES)
        m.d.comb += rdata.eq(Cat(Mux(keep[b], self.resp.payload.word_select(b, 8), 0)
                                 for b in range(LINE_BYTES)))

        acc_data = Signal(8 * LINE_BYTES)
        acc_valid = Signal(LINE_BYTES)
        placed = Signal(8 * LINE_BYTES)
        placed_valid = Signal(LINE_BYTES)
        m.d.comb += [placed.eq(rdata << (head.line_off * 8)),
                     placed_valid.eq(keep << head.line_off)]
        direct = head.kind != KIND_TRANSPOSE
        consume = Signal()
        line_out = Signal()                  # a completed direct line goes to pad/merge now
        with m.If(runs.valid & have_data):
            with m.If(direct):
                m.d.comb += [line_out.eq(head.line_end),
                             consume.eq(~head.line_end | pm.i.ready)]
            with m.Else():
                m.d.comb += [tr.i.valid.eq(~head.group_end | groups.ready),
                             consume.eq(tr.i.ready & (~head.group_end | groups.ready))]
        m.d.comb += [
            runs.ready.eq(consume),
            self.resp.ready.eq(consume & head_reads),
            tr.i.payload.data.eq(rdata),
            tr.i.payload.log2_ebits.eq(head.log2_esize + 3),
            tr.i.payload.lines.eq(1 << head.log2_lines),
        ]
        line_data = acc_data | placed
        line_valid = acc_valid | placed_valid
        with m.If(consume & direct):
            with m.If(head.line_end):
                m.d.sync += [acc_data.eq(0), acc_valid.eq(0)]
            with m.Else():
                m.d.sync += [acc_data.eq(line_data), acc_valid.eq(line_valid)]
        group = Signal(GroupMeta)
        m.d.comb += [
            group.tile.eq(head.tile), group.line.eq(head.line),
            group.log2_lines.eq(head.log2_lines), group.valid_lines.eq(head.valid_lines),
            group.valid_elems.eq(head.valid_elems), group.log2_esize.eq(head.log2_esize),
            group.pattern.eq(head.pattern), group.null.eq(head.null),
            group.instr_last.eq(head.instr_last),
            groups.payload.eq(group),
            groups.valid.eq(consume & ~direct & head.group_end),
        ]
        return {"out": line_out, "data": line_data, "valid": line_valid, "head": head}

    def _into_padmerge(self, m, line, tr, groups, pm):
        """A direct line, or else a transposed one with its group's extents (the two paths
        never hold lines at the same time: the address generator drains between them)."""
        g = GroupMeta(groups.payload)
        col = tr.o.payload.index
        tl_valid = Signal(LINE_BYTES)
        valid_bytes = Signal(7)
        m.d.comb += valid_bytes.eq(g.valid_elems << g.log2_esize)
        m.d.comb += tl_valid.eq(Mux(col < g.valid_lines,
                                    _byte_mask(m, valid_bytes, "av_mask"), 0))
        p = pm.i.payload
        with m.If(line["out"]):
            head = line["head"]
            m.d.comb += [
                pm.i.valid.eq(1),
                p.data.eq(line["data"]), p.valid.eq(line["valid"]),
                p.log2_esize.eq(head.log2_esize), p.pattern.eq(head.pattern),
                p.null.eq(head.null), p.meta.eq(Cat(head.tile, head.line, head.instr_last)),
            ]
        with m.Else():
            m.d.comb += [
                pm.i.valid.eq(tr.o.valid & groups.valid),
                p.data.eq(tr.o.payload.data), p.valid.eq(tl_valid),
                p.log2_esize.eq(g.log2_esize), p.pattern.eq(g.pattern), p.null.eq(g.null),
                p.meta.eq(Cat(g.tile, (g.line + col)[:13], g.instr_last & tr.o.payload.last)),
                tr.o.ready.eq(pm.i.ready & groups.valid),
                groups.ready.eq(tr.o.valid & tr.o.ready & tr.o.payload.last),
            ]

    def _write(self, m, pm, cq):
        """W-byte tile writes (two lines a beat at W = 64); the last one of an instruction
        goes only when its completion can be queued."""
        meta = LineMeta(pm.o.payload.meta)
        wp = self.write.payload
        last_beat = Signal()
        if self.width == LINE_BYTES:
            m.d.comb += [
                self.write.valid.eq(pm.o.valid & (~meta.last | cq.room)),
                wp.tile.eq(meta.tile), wp.offset.eq(meta.line << 5),
                wp.data.eq(pm.o.payload.data), wp.be.eq(pm.o.payload.be),
                pm.o.ready.eq(self.write.ready & (~meta.last | cq.room)),
                last_beat.eq(self.write.valid & self.write.ready & meta.last),
            ]
        else:
            half_data = Signal(8 * LINE_BYTES)
            half_be = Signal(LINE_BYTES)
            second = meta.line[0]
            with m.If(~second):
                m.d.comb += pm.o.ready.eq(1)
                with m.If(pm.o.valid):
                    m.d.sync += [half_data.eq(pm.o.payload.data), half_be.eq(pm.o.payload.be)]
            with m.Else():
                m.d.comb += [
                    self.write.valid.eq(pm.o.valid & (~meta.last | cq.room)),
                    wp.tile.eq(meta.tile), wp.offset.eq((meta.line - 1) << 5),
                    wp.data.eq(Cat(half_data, pm.o.payload.data)),
                    wp.be.eq(Cat(half_be, pm.o.payload.be)),
                    pm.o.ready.eq(self.write.ready & (~meta.last | cq.room)),
                    last_beat.eq(self.write.valid & self.write.ready & meta.last),
                ]
        m.d.comb += cq.finished.eq(last_beat)
