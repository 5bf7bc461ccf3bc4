"""The TLOAD engine: decoder, fractal address generator, transpose unit, pad/merge.

Ports (stream = valid/ready; Verilog names ``<port>__payload``, ``__valid``, ``__ready``):

* ``instr``  in  -- a decoded TLOAD (:data:`tilecosim.hdl.tload.types.TLoadInstr`)
* ``mem_size`` in -- bytes of global memory, for the OutOfBounds check
* ``req``    out -- memory read requests {addr, len (1..32 bytes)}
* ``resp``   in  -- one W-byte response per request, in order; byte k = memory[addr + k]
* ``write``  out -- tile writes {tile, offset, data (W bytes), be}
* ``done``   out -- one completion per instruction, in order, with its D8 fault code

A faulting instruction makes no request and no write; its completion follows the
completions of the instructions before it.  Instructions stream back to back: the
next one is accepted while the previous one drains, with no bubble, when both move
runs of the same kind and element size (an instruction that switches between the
direct and the transposing path, or changes element size on the transposing one,
waits for the pipeline to drain).

Throughput: one 32-byte line per cycle, hence one W-byte write per cycle at W = 32
and one every two cycles at W = 64 (the datapath is 32 bytes wide; W = 64 widens
the ports).  NORM tiles with rows narrower than 32 bytes take one cycle per row;
b8 ND2ZN/DN2NZ tiles whose transposed extent is 16 take 32 cycles per 16 lines.
Latency from instruction to first write: 3 cycles plus the memory latency.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from tilecosim.hdl.tload.addrgen import KIND_TRANSPOSE, FractalAddressGenerator, Run
from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.hdl.tload.decode import TLoadDecoder, check_config
from tilecosim.hdl.tload.types import Completion, FaultCode, MemRequest, TileWrite, TLoadInstr
from tilecosim.hdl.transpose import NaiveTranspose, SquareTranspose

__all__ = ["TLoadEngine"]

LINE = 32

LineMeta = data.StructLayout({"tile": 3, "line": 13, "last": 1})
GroupMeta = data.StructLayout({"tile": 3, "line": 13, "ll": 3, "v": 6, "av": 6, "le": 2,
                               "pattern": 64, "null": 1, "instr_last": 1})


def _byte_mask(m, count, name):
    """32 bits: the low ``count`` bytes."""
    out = Signal(LINE, name=name)
    m.d.comb += out.eq(Cat(count > b for b in range(LINE)))
    return out


class TLoadEngine(wiring.Component):
    """The TLOAD engine (see module doc).

    Parameters: ``width`` W (32 or 64) of the memory response and tile write beats;
    ``profile`` ("finite" or "ieee-inf") of the Max/Min pad values; ``lcfr``
    (min, max) tile sizes; ``depth`` of the in-flight run queue (>= the memory
    latency + 2 for full throughput); ``transpose`` "square" (one square of storage,
    alternating orientation) or "naive" (fill then drain).
    """

    def __init__(self, width: int = 32, profile: str = "finite",
                 lcfr: tuple[int, int] = (256, 256 * 1024), depth: int = 16,
                 transpose: str = "square"):
        if width not in (32, 64):
            raise ValueError(f"width={width}: the beat width W must be 32 or 64 bytes")
        if depth < 2:
            raise ValueError(f"depth={depth}: need at least 2 runs in flight")
        if transpose not in ("square", "naive"):
            raise ValueError(f"transpose={transpose!r}: choose 'square' or 'naive'")
        self.width = width
        self.profile = profile
        self.lcfr = lcfr
        self.depth = depth
        self.transpose_kind = transpose
        check_config(profile, lcfr)
        super().__init__({
            "instr": In(stream.Signature(TLoadInstr)),
            "mem_size": In(64),
            "req": Out(stream.Signature(MemRequest)),
            "resp": In(stream.Signature(8 * width)),
            "write": Out(stream.Signature(TileWrite(width))),
            "done": Out(stream.Signature(Completion)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.decoder = dec = TLoadDecoder(self.profile, self.lcfr, registered=False)
        m.submodules.addrgen = gen = FractalAddressGenerator()
        m.submodules.runs = runs = fifo.SyncFIFOBuffered(width=Run.size, depth=self.depth)
        m.submodules.transpose = tr = (SquareTranspose() if self.transpose_kind == "square"
                                       else NaiveTranspose())
        m.submodules.groups = groups = fifo.SyncFIFO(width=GroupMeta.size, depth=2)
        m.submodules.padmerge = pm = PadMerge(LineMeta.size)
        m.submodules.completions = comp = fifo.SyncFIFOBuffered(width=3, depth=4)

        connect(m, flipped(self.instr), dec.i)
        connect(m, dec.o, gen.i)
        m.d.comb += dec.mem_size.eq(self.mem_size)

        inflight = Signal(range(64))
        m.d.comb += gen.idle.eq(inflight == 0)

        # --- issue: a run becomes a request (unless it reads nothing) and a queue entry --------
        run = gen.o.payload
        needs_read = run.rbytes != 0
        m.d.comb += [
            self.req.valid.eq(gen.o.valid & needs_read & runs.w_rdy),
            self.req.payload.addr.eq(run.addr),
            self.req.payload.len.eq(run.rbytes),
            gen.o.ready.eq(runs.w_rdy & (~needs_read | self.req.ready)),
            runs.w_en.eq(gen.o.valid & gen.o.ready),
            runs.w_data.eq(run),
        ]

        # --- consume: queue head + its response ------------------------------------------------
        head = Run(runs.r_data)
        head_reads = head.rbytes != 0
        have_data = ~head_reads | self.resp.valid
        keep = _byte_mask(m, head.rbytes, "keep")
        rdata = Signal(8 * LINE)
        m.d.comb += rdata.eq(Cat(Mux(keep[b], self.resp.payload.word_select(b, 8), 0)
                                 for b in range(LINE)))

        # direct path: assemble a line from its runs
        acc_data = Signal(8 * LINE)
        acc_valid = Signal(LINE)
        placed = Signal(8 * LINE)
        placed_valid = Signal(LINE)
        m.d.comb += [placed.eq(rdata << (head.line_off * 8)),
                     placed_valid.eq(keep << head.line_off)]
        direct = head.kind != KIND_TRANSPOSE
        consume = Signal()
        line_out = Signal()                  # a completed direct line goes to pad/merge now
        with m.If(runs.r_rdy & have_data):
            with m.If(direct):
                m.d.comb += [line_out.eq(head.line_end),
                             consume.eq(~head.line_end | pm.i.ready)]
            with m.Else():
                m.d.comb += [tr.i.valid.eq(~head.group_end | groups.w_rdy),
                             consume.eq(tr.i.ready & (~head.group_end | groups.w_rdy))]
        m.d.comb += [
            runs.r_en.eq(consume),
            self.resp.ready.eq(consume & head_reads),
            tr.i.payload.data.eq(rdata),
            tr.i.payload.lb.eq(head.le + 3),
            tr.i.payload.lines.eq(1 << head.ll),
        ]
        line_data = acc_data | placed
        line_valid = acc_valid | placed_valid
        with m.If(consume & direct):
            with m.If(head.line_end):
                m.d.sync += [acc_data.eq(0), acc_valid.eq(0)]
            with m.Else():
                m.d.sync += [acc_data.eq(line_data), acc_valid.eq(line_valid)]
        gm_in = Signal(GroupMeta)
        m.d.comb += [
            gm_in.tile.eq(head.tile), gm_in.line.eq(head.line), gm_in.ll.eq(head.ll),
            gm_in.v.eq(head.v), gm_in.av.eq(head.av), gm_in.le.eq(head.le),
            gm_in.pattern.eq(head.pattern), gm_in.null.eq(head.null),
            gm_in.instr_last.eq(head.instr_last),
            groups.w_data.eq(gm_in),
            groups.w_en.eq(consume & ~direct & head.group_end),
        ]

        # --- transposed lines: the transpose unit's output + its group's extents ---------------
        g = GroupMeta(groups.r_data)
        col = tr.o.payload.index
        tl_valid = Signal(LINE)
        av_bytes = Signal(7)
        m.d.comb += av_bytes.eq(g.av << g.le)
        m.d.comb += tl_valid.eq(Mux(col < g.v, _byte_mask(m, av_bytes, "av_mask"), 0))

        # --- into pad/merge: a direct line, or else a transposed one (the two paths never hold
        # lines at the same time: the address generator drains between them) -----------------
        with m.If(line_out):
            p = pm.i.payload
            m.d.comb += [
                pm.i.valid.eq(1),
                p.data.eq(line_data), p.valid.eq(line_valid), p.le.eq(head.le),
                p.pattern.eq(head.pattern), p.null.eq(head.null),
                p.meta.eq(Cat(head.tile, head.line, head.instr_last)),
            ]
        with m.Else():
            p = pm.i.payload
            m.d.comb += [
                pm.i.valid.eq(tr.o.valid & groups.r_rdy),
                p.data.eq(tr.o.payload.data), p.valid.eq(tl_valid), p.le.eq(g.le),
                p.pattern.eq(g.pattern), p.null.eq(g.null),
                p.meta.eq(Cat(g.tile, (g.line + col)[:13], g.instr_last & tr.o.payload.last)),
                tr.o.ready.eq(pm.i.ready & groups.r_rdy),
                groups.r_en.eq(tr.o.valid & tr.o.ready & tr.o.payload.last),
            ]

        # --- W-byte tile writes and completions -------------------------------------------------
        meta = LineMeta(pm.o.payload.meta)
        wp = self.write.payload
        last_beat = Signal()
        if self.width == LINE:
            m.d.comb += [
                self.write.valid.eq(pm.o.valid & (~meta.last | comp.w_rdy)),
                wp.tile.eq(meta.tile), wp.offset.eq(meta.line << 5),
                wp.data.eq(pm.o.payload.data), wp.be.eq(pm.o.payload.be),
                pm.o.ready.eq(self.write.ready & (~meta.last | comp.w_rdy)),
                last_beat.eq(self.write.valid & self.write.ready & meta.last),
            ]
        else:
            half_data = Signal(8 * LINE)
            half_be = Signal(LINE)
            second = meta.line[0]
            with m.If(~second):
                m.d.comb += pm.o.ready.eq(1)
                with m.If(pm.o.valid):
                    m.d.sync += [half_data.eq(pm.o.payload.data), half_be.eq(pm.o.payload.be)]
            with m.Else():
                m.d.comb += [
                    self.write.valid.eq(pm.o.valid & (~meta.last | comp.w_rdy)),
                    wp.tile.eq(meta.tile), wp.offset.eq((meta.line - 1) << 5),
                    wp.data.eq(Cat(half_data, pm.o.payload.data)),
                    wp.be.eq(Cat(half_be, pm.o.payload.be)),
                    pm.o.ready.eq(self.write.ready & (~meta.last | comp.w_rdy)),
                    last_beat.eq(self.write.valid & self.write.ready & meta.last),
                ]

        with m.If(last_beat):
            m.d.comb += [comp.w_en.eq(1), comp.w_data.eq(FaultCode.NONE)]
        with m.Else():
            m.d.comb += [comp.w_en.eq(gen.fault.valid), comp.w_data.eq(gen.fault.payload),
                         gen.fault.ready.eq(comp.w_rdy)]
        m.d.comb += [self.done.valid.eq(comp.r_rdy), self.done.payload.fault.eq(comp.r_data),
                     comp.r_en.eq(self.done.ready)]
        with m.If(gen.started & ~last_beat):
            m.d.sync += inflight.eq(inflight + 1)
        with m.Elif(~gen.started & last_beat):
            m.d.sync += inflight.eq(inflight - 1)
        return m
