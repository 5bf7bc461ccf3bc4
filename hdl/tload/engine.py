"""The TLOAD engine: decoder, fractal address generator, transpose unit, pad/merge.

Ports (stream = valid/ready; Verilog names ``<port>__payload``, ``__valid``, ``__ready``):

* ``instr``  in  -- a decoded TLOAD (:data:`tilecosim.hdl.tload.types.TLoadInstr`)
* ``mem_size`` in -- bytes of global memory, for the OutOfBounds check
* ``req``    out -- memory read requests {addr, len (1..W bytes)}
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
queue head and its response, into a direct beat, the transpose lanes or the chunk
transposer), the beats into pad/merge (direct, transposed or chunked, with their extents),
and the W-byte writes with the completions.

Width W = 32, 64 or 128 bytes (P = W/32 lines a beat).  A run reads up to W contiguous
bytes: NORM a row or W bytes of it; ND2NZ/DN2ZN the same row of up to P fractals side by
side, P such runs turned into P beats by the P x P :class:`ChunkTranspose` (W > 32); ND2ZN/
DN2NZ a row of up to P squares side by side into P transpose lanes, lane p taking columns
p, p+P, .. of each square so that the lanes' column is one beat; a flat tile (one output,
rows narrower than W back to back in the source, see the decoder) W bytes of source.

Throughput: one W-byte beat per cycle when each run fills a beat: rows (NORM), fractal
rows (ND2NZ, DN2ZN) or square rows (ND2ZN, DN2NZ) of at least W bytes side by side in the
source, or a flat tile.  Narrower ones that are not flat take a run per row (NORM), per
fractal row of their fractals side by side (ND2NZ, DN2ZN) or per square row (ND2ZN,
DN2NZ); b8 ND2ZN/DN2NZ tiles whose transposed extent is 16 take 32 cycles per 16 lines at
W = 32.  Latency from instruction to first write: 3 cycles plus the memory latency (direct
runs), plus P for chunked runs, plus S for transposing ones (S = 32/esize: the square's
source rows).
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from tilecosim.hdl.common import (LINE_BYTES, Completion, FaultCode, check_at_least,
                                  check_choice, check_width)
from tilecosim.hdl.completion import CompletionQueue
from tilecosim.hdl.tload.addrgen import (KIND_CHUNK, KIND_DIRECT, KIND_TRANSPOSE,
                                         FractalAddressGenerator, Run)
from tilecosim.hdl.tload.decode import LOG2_LINE, MAX_LOG_SIZE, TLoadDecoder, check_config
from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.hdl.tload.types import MemRequest, TileWrite, TLoadInstr
from tilecosim.hdl.transpose import ChunkTranspose, NaiveTranspose, SquareTranspose, lane_rows

__all__ = ["TLoadEngine", "Check"]

#: what the decoder says of the instruction on ``instr``, for the tile register file
Check = data.StructLayout({"fault": FaultCode, "log2_rows": 5, "log2_cols": 5,
                           "log2_size": 5})

#: bits of a 32-byte line's index in a tile (a tile is at most 2**MAX_LOG_SIZE bytes)
LINE_INDEX_BITS = MAX_LOG_SIZE - LOG2_LINE

#: what travels with a line through pad/merge to the tile write: its tile, its line index,
#: and whether it is the instruction's last
LineMeta = data.StructLayout({"tile": 3, "line": LINE_INDEX_BITS, "last": 1})
GroupMeta = data.StructLayout({"tile": 3, "line": LINE_INDEX_BITS, "log2_lines": 3,
                               "valid_lines": 8, "valid_elems": 6, "log2_esize": 2,
                               "pattern": 64, "null": 1, "instr_last": 1})
#: a square of the chunk transposer: the line of its column 0's first chunk, log2 lines
#: between its columns, and how its beats are padded
ChunkMeta = data.StructLayout({"tile": 3, "line": LINE_INDEX_BITS, "log2_step": 5, "log2_esize": 2,
                               "pattern": 64, "null": 1, "instr_last": 1})


def _line_meta(m, name, tile, line, last):
    """A :data:`LineMeta` of these fields (``line`` keeps its low LINE_INDEX_BITS)."""
    meta = Signal(LineMeta, name=name)
    m.d.comb += [meta.tile.eq(tile), meta.line.eq(line), meta.last.eq(last)]
    return meta


def _byte_mask(m, count, name, nbytes=LINE_BYTES):
    """``nbytes`` bits: the low ``count`` bytes."""
    out = Signal(nbytes, name=name)
    m.d.comb += out.eq(Cat(count > b for b in range(nbytes)))
    return out


class TLoadEngine(wiring.Component):
    """The TLOAD engine (see module doc).

    Parameters: ``width`` W (32, 64 or 128) of the memory response and tile write beats;
    ``profile`` ("finite" or "ieee-inf") of the Max/Min pad values; ``lcfr``
    (min, max) tile sizes; ``depth`` of the in-flight run queue (>= the memory
    latency + 2 for full throughput); ``transpose`` "square" (one square of storage,
    alternating orientation) or "naive" (fill then drain); ``checked``: add the ``check``
    and ``veto`` ports of the tile system.
    """

    def __init__(self, width: int = 32, profile: str = "finite",
                 lcfr: tuple[int, int] = (256, 256 * 1024), depth: int = 16,
                 transpose: str = "square", checked: bool = False):
        check_width(width)
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
            "req": Out(stream.Signature(MemRequest(width))),
            "resp": In(stream.Signature(8 * width)),
            "write": Out(stream.Signature(TileWrite(width))),
            "done": Out(stream.Signature(Completion)),
        }
        if checked:
            members.update(check=Out(Check), veto=In(1))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        W, P = self.width, self.width // LINE_BYTES
        m.submodules.decoder = dec = TLoadDecoder(self.profile, self.lcfr, registered=False,
                                                  width=W)
        m.submodules.addrgen = gen = FractalAddressGenerator(W)
        m.submodules.runs = runs = fifo.SyncFIFOBuffered(width=Run(W).size, depth=self.depth)
        unit = SquareTranspose if self.transpose_kind == "square" else NaiveTranspose
        lanes = [unit() for _ in range(P)]
        for k, lane in enumerate(lanes):
            m.submodules[f"transpose{k}" if P > 1 else "transpose"] = lane
        m.submodules.groups = groups = fifo.SyncFIFO(width=GroupMeta.size, depth=2)
        m.submodules.padmerge = pm = PadMerge(LineMeta.size, width=W)
        m.submodules.completions = cq = CompletionQueue()
        chunk = cmeta = None
        if P > 1:
            m.submodules.chunks = chunk = ChunkTranspose(W)
            m.submodules.chunk_groups = cmeta = fifo.SyncFIFO(width=ChunkMeta.size, depth=2)

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
        line = self._consume(m, runs.r_stream, lanes, groups.w_stream, pm, chunk,
                             cmeta and cmeta.w_stream)
        if P == 1:
            self._into_padmerge(m, line, lanes[0], groups.r_stream, pm)
        else:
            self._wide_into_padmerge(m, line, lanes, groups.r_stream, chunk, cmeta.r_stream, pm)
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

    def _consume(self, m, runs, lanes, groups, pm, chunk, cgroups):
        """The head of ``runs`` (the run queue's read stream) and its response: a direct run
        is placed into the beat being assembled; a transposing run goes to the transpose
        lanes, 32 bytes to each (its group's extents to ``groups``, a write stream); a chunk
        run (W > 32) goes to the chunk transposer (its square's place to ``cgroups``).
        Returns the direct beat: {out, data, valid, head}."""
        W, P = self.width, self.width // LINE_BYTES
        head = Run(W)(runs.payload)
        head_reads = head.read_bytes != 0
        have_data = ~head_reads | self.resp.valid
        keep = _byte_mask(m, head.read_bytes, "keep", W)
        rdata = Signal(8 * W)
        m.d.comb += rdata.eq(Cat(Mux(keep[b], self.resp.payload.word_select(b, 8), 0)
                                 for b in range(W)))

        acc_data = Signal(8 * W)
        acc_valid = Signal(W)
        placed = Signal(8 * W)
        placed_valid = Signal(W)
        m.d.comb += [placed.eq(rdata << (head.line_off * 8)),
                     placed_valid.eq(keep << head.line_off)]
        direct = head.kind == KIND_DIRECT
        lane0 = lanes[0]
        consume = Signal()
        line_out = Signal()                  # a completed direct beat goes to pad/merge now
        with m.If(runs.valid & have_data):
            with m.If(direct):
                m.d.comb += [line_out.eq(head.line_end),
                             consume.eq(~head.line_end | pm.i.ready)]
            with m.Elif(head.kind == KIND_TRANSPOSE):
                m.d.comb += [lane.i.valid.eq(~head.group_end | groups.ready) for lane in lanes]
                m.d.comb += consume.eq(lane0.i.ready & (~head.group_end | groups.ready))
            if chunk is not None:
                with m.Elif(~lane0.o.valid):         # KIND_CHUNK; the lanes are drained
                    m.d.comb += [
                        chunk.i.valid.eq(~head.group_end | cgroups.ready),
                        chunk.i.payload.lines.eq(1 << head.log2_lanes),
                        consume.eq(chunk.i.ready & (~head.group_end | cgroups.ready)),
                    ]
        m.d.comb += [runs.ready.eq(consume), self.resp.ready.eq(consume & head_reads)]
        if chunk is not None:
            self._chunk_row(m, chunk, rdata, keep, head)
        rows = self._lane_rows(m, rdata, head.log2_esize, head.log2_stack)
        for k, lane in enumerate(lanes):
            m.d.comb += [
                lane.i.payload.data.eq(rows[k]),
                lane.i.payload.log2_ebits.eq(head.log2_esize + 3 + head.log2_stack),
                # each lane emits its share of the group's lines (W > 32: a P-th)
                lane.i.payload.lines.eq(((1 << head.log2_lines) << head.log2_lanes) >> (P.bit_length() - 1)),
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
            group.log2_lines.eq(head.log2_lines),
            group.valid_lines.eq(head.valid_lines),
            group.valid_elems.eq(head.valid_elems), group.log2_esize.eq(head.log2_esize),
            group.pattern.eq(head.pattern), group.null.eq(head.null),
            group.instr_last.eq(head.instr_last),
            groups.payload.eq(group),
            groups.valid.eq(consume & (head.kind == KIND_TRANSPOSE) & head.group_end),
        ]
        if chunk is not None:
            square = Signal(ChunkMeta)
            m.d.comb += [
                square.tile.eq(head.tile), square.line.eq(head.line & ~(P - 1)),
                square.log2_step.eq(head.log2_step), square.log2_esize.eq(head.log2_esize),
                square.pattern.eq(head.pattern), square.null.eq(head.null),
                square.instr_last.eq(head.instr_last),
                cgroups.payload.eq(square),
                cgroups.valid.eq(consume & (head.kind == KIND_CHUNK) & head.group_end),
            ]
        return {"out": line_out, "data": line_data, "valid": line_valid, "head": head}

    def _chunk_row(self, m, chunk, rdata, keep, head):
        """A chunk run into the chunk transposer: its P chunks (32 bytes and their valid bits)
        as they come; a stacked run (W = 128: G = 2 rows of U = 2 fractals, chunk g*2 + u)
        reordered to u*2 + g, so that super-chunk u holds fractal u's two lines."""
        P, c = self.width // LINE_BYTES, 8 * LINE_BYTES
        order = [(k % 2) * 2 + k // 2 for k in range(P)] if chunk.paired else list(range(P))
        paired = (head.log2_stack != 0) if chunk.paired else 0
        m.d.comb += [
            chunk.i.payload.data.eq(Mux(paired, Cat(rdata.word_select(k, c) for k in order),
                                        rdata)),
            chunk.i.payload.valid.eq(Mux(paired, Cat(keep.word_select(k, LINE_BYTES)
                                                     for k in order), keep)),
        ]
        if chunk.paired:
            m.d.comb += chunk.i.payload.log2_pair.eq(paired)

    def _lane_rows(self, m, rdata, log2_esize, log2_stack):
        """The rows of the P transpose lanes for a run of G source rows (G = 2**log2_stack;
        see the decoder's ``_stack``) of U <= P/G squares side by side, or of half a b8 square
        (G = 2P), :func:`~tilecosim.hdl.transpose.lane_rows`; G x element bits <= 64."""
        log2_p = self.width.bit_length() - 1 - LOG2_LINE
        cases = {lg | ls << 2: (8 << lg, 1 << ls) for lg in range(4) for ls in range(4)
                 if ls == 0 or ((8 << lg << ls) <= 64 and ls <= log2_p + (lg == 0))}
        return lane_rows(m, rdata, self.width, Cat(log2_esize, log2_stack), cases)

    def _wide_into_padmerge(self, m, line, lanes, groups, chunk, cgroups, pm):
        """W > 32: a direct beat; else the P transpose lanes' column c (lines of one square,
        see :meth:`_lane_rows`), its bytes past the group's valid columns and rows invalid;
        else a beat of the chunk transposer, whose column c of a square lands at the square's
        line + c << log2_step.  The three never hold data at once: the address generator
        drains the pipeline between run kinds."""
        P = self.width // LINE_BYTES
        log2_p = P.bit_length() - 1
        g, cm, p = GroupMeta(groups.payload), ChunkMeta(cgroups.payload), pm.i.payload
        lane0 = lanes[0]
        with m.If(line["out"]):
            self._direct_into_padmerge(m, line, pm)
        with m.Elif(lane0.o.valid):
            c = lane0.o.payload.index
            lsp = Signal(3)                               # log2 columns of a square per lane
            m.d.comb += lsp.eq(LOG2_LINE - g.log2_esize - log2_p)
            q = c >> lsp
            k = c & ((1 << lsp) - 1)
            first = (q << g.log2_lines) + (k << log2_p)   # the beat's first line in the group
            av = self._row_mask(m, g)
            m.d.comb += [
                pm.i.valid.eq(groups.valid),
                p.data.eq(Cat(lane.o.payload.data for lane in lanes)),
                p.valid.eq(Cat(Mux(first + j < g.valid_lines, av, 0) for j in range(P))),
                p.log2_esize.eq(g.log2_esize), p.pattern.eq(g.pattern), p.null.eq(g.null),
                p.meta.eq(_line_meta(m, "lanes_meta", g.tile, g.line + first,
                                     g.instr_last & lane0.o.payload.last)),
                groups.ready.eq(pm.i.ready & lane0.o.payload.last),
            ]
            m.d.comb += [lane.o.ready.eq(pm.i.ready & groups.valid) for lane in lanes]
        with m.Else():
            c = chunk.o.payload.index
            m.d.comb += [
                pm.i.valid.eq(chunk.o.valid & cgroups.valid),
                p.data.eq(chunk.o.payload.data), p.valid.eq(chunk.o.payload.valid),
                p.log2_esize.eq(cm.log2_esize), p.pattern.eq(cm.pattern), p.null.eq(cm.null),
                p.meta.eq(_line_meta(m, "chunk_meta", cm.tile, cm.line + (c << cm.log2_step),
                                     cm.instr_last & chunk.o.payload.last)),
                chunk.o.ready.eq(pm.i.ready & cgroups.valid),
                cgroups.ready.eq(chunk.o.valid & chunk.o.ready & chunk.o.payload.last),
            ]

    @staticmethod
    def _row_mask(m, g):
        """32 bits: the bytes of a transposed line's valid elements (group ``g``'s rows)."""
        valid_bytes = Signal(7)
        m.d.comb += valid_bytes.eq(g.valid_elems << g.log2_esize)
        return _byte_mask(m, valid_bytes, "av_mask")

    def _direct_into_padmerge(self, m, line, pm):
        head, p = line["head"], pm.i.payload
        m.d.comb += [
            pm.i.valid.eq(1),
            p.data.eq(line["data"]), p.valid.eq(line["valid"]),
            p.log2_esize.eq(head.log2_esize), p.pattern.eq(head.pattern),
            p.null.eq(head.null), p.meta.eq(_line_meta(m, "direct_meta", head.tile, head.line,
                                                      head.instr_last)),
        ]

    def _into_padmerge(self, m, line, tr, groups, pm):
        """A direct line, or else a transposed one with its group's extents (the two paths
        never hold lines at the same time: the address generator drains between them)."""
        g = GroupMeta(groups.payload)
        col = tr.o.payload.index
        tl_valid = Signal(LINE_BYTES)
        m.d.comb += tl_valid.eq(Mux(col < g.valid_lines, self._row_mask(m, g), 0))
        p = pm.i.payload
        with m.If(line["out"]):
            self._direct_into_padmerge(m, line, pm)
        with m.Else():
            m.d.comb += [
                pm.i.valid.eq(tr.o.valid & groups.valid),
                p.data.eq(tr.o.payload.data), p.valid.eq(tl_valid),
                p.log2_esize.eq(g.log2_esize), p.pattern.eq(g.pattern), p.null.eq(g.null),
                p.meta.eq(_line_meta(m, "transposed_meta", g.tile, g.line + col,
                                     g.instr_last & tr.o.payload.last)),
                tr.o.ready.eq(pm.i.ready & groups.valid),
                groups.ready.eq(tr.o.valid & tr.o.ready & tr.o.payload.last),
            ]

    def _write(self, m, pm, cq):
        """W-byte tile writes; the last one of an instruction goes only when its completion
        can be queued."""
        meta = LineMeta(pm.o.payload.meta)
        wp = self.write.payload
        go = ~meta.last | cq.room
        m.d.comb += [
            self.write.valid.eq(pm.o.valid & go),
            wp.tile.eq(meta.tile), wp.offset.eq(meta.line << LOG2_LINE),
            wp.data.eq(pm.o.payload.data), wp.be.eq(pm.o.payload.be),
            pm.o.ready.eq(self.write.ready & go),
            cq.finished.eq(self.write.valid & self.write.ready & meta.last),
        ]
