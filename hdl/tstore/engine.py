"""The TSTORE engine: a tile register's footprint to global memory (docs/design.md D15).

Ports (stream = valid/ready):

* ``instr``     in  -- a TSTORE with its operands evaluated and the source register's size and
  element size (:data:`TStoreInstr`)
* ``mem_size``  in  -- bytes of global memory, for OutOfBounds
* ``tile_rd``   out -- a read of the source register: {en, word}, word k = tile bytes
  k*W .. k*W + W - 1
* ``tile_data`` in  -- the word read, the cycle after ``tile_rd.en`` (a synchronous SRAM port)
* ``wr``        out -- memory writes {addr, data (W bytes), be}: byte k of data goes to
  memory[addr + k] when be[k]; any address (no alignment)
* ``done``      out -- one completion per instruction, in order, after its last write was
  taken, with its D8 fault code

The checks are TLOAD's, by the TLOAD decoder on the TLOAD of the same fields and one output
of the source's size (the manual: TSTORE is its inverse), plus the two rules of D15: the
element size must be the source's, and rows (columns) may not overlap in memory.  A faulting
TSTORE reads and writes nothing.

Walks, one instruction at a time:

* direct (NORM at any W, ND2NZ/DN2ZN at W = 32): memory run m (row of ND, column of DN),
  segment s: NORM a row or W bytes of it (rows are powers of two of bytes), ND2NZ/DN2ZN one
  32-byte fractal line -- tile line ``s << log2_block | m``; one tile read and one write per
  segment;
* chunked (ND2NZ/DN2ZN at W = 64, 128; P = W/32): groups of P memory runs x P fractal
  segments: the P tile words of P segments (each word the same segment of P runs) through
  the P x P :class:`ChunkTranspose`, whose P columns are the P runs' W bytes;
* transposing (ND2ZN, DN2NZ): groups of P squares side by side in memory, each S x S
  elements (S = 32/esize): their P x S tile lines (columns of ZN, rows of NZ) are S
  consecutive tile words; chunk p of each word enters transpose lane p (a
  :class:`SquareTranspose`), and the lanes' column c, element e taken from lane e mod P
  (its element e div P), is memory run c's W bytes.  Lines past the tile's block (b8 tiles
  of 16 columns or rows; squares past a narrow tile) are fed as zeros and never read.

Throughput: one W-byte write a cycle when the memory runs of the footprint are W bytes or
more (one tile read a cycle in, one write out, no gap between groups); narrower runs take a
cycle a run (direct), or a group of P runs' or squares' worth (chunked, transposing).
Latency from instruction to first write: 3 cycles (direct), 3 + P (chunked), 3 + S
(transposing: the group's S words must be in before its first column leaves).
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import LINE_BYTES, Completion, FaultCode, check_width
from tilecosim.hdl.tload.decode import LOG2_LINE, MAX_LOG_SIZE, TLoadDecoder, check_config
from tilecosim.hdl.tload.types import PadValue, TileQueue, TLoadLayout
from tilecosim.hdl.transpose import ChunkTranspose, SquareTranspose

__all__ = ["TStoreEngine", "TStoreInstr", "MemWrite", "TileRead"]

#: A TSTORE as the tile system hands it over: operands evaluated, and what the register file
#: keeps of the source register (its size and element size)
TStoreInstr = data.StructLayout({
    "layout": TLoadLayout,
    "dtype": 5,                   # D9 data-type code
    "valid_col": 64,              # LB0
    "valid_row": 64,              # LB1
    "col": 64,                    # LB2
    "base": 64,                   # RegSrc0
    "stride": 64,                 # RegSrc1
    "stride_given": 1,            # 0: RegSrc1 omitted (dense)
    "log2_size": 5,               # the source register's Size
    "src_log2_esize": 2,          # the element size it was written with
})


def MemWrite(width: int) -> data.StructLayout:
    """A memory write of up to ``width`` bytes at any address."""
    return data.StructLayout({"addr": 64, "data": 8 * width, "be": width})


def GroupRow(width: int) -> data.StructLayout:
    """A tile word of a grouped walk on its way to the transposers."""
    return data.StructLayout({"data": 8 * width, "log2_e": 2, "lines": 7})


def TileRead(width: int) -> data.StructLayout:
    return data.StructLayout({"en": 1, "word": MAX_LOG_SIZE - (width.bit_length() - 1)})


#: a group in flight: its first column's address, the bytes of each column, last of all
GroupMeta = data.StructLayout({"addr": 64, "bytes": 8, "last": 1})


class _Walk:
    """The signals the walks share (named fields, for the stages of :meth:`_walk`)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class _State(enum.Enum, shape=2):
    """The engine's state: idle, walking its reads, draining its last writes, completing."""
    IDLE = 0
    WALK = 1          # reads issued
    DRAIN = 2         # every read issued: the last writes leave
    DONE = 3          # the completion


class TStoreEngine(wiring.Component):
    """The TSTORE engine (see module doc).

    Parameters: ``width`` W (32, 64 or 128) of the tile words and the memory writes;
    ``lcfr`` (min, max) tile sizes (the decoder's range check; the tile system gives the
    sizes of its registers, always inside it).
    """

    def __init__(self, width: int = 32, lcfr: tuple[int, int] = (256, 256 * 1024)):
        check_width(width)
        check_config("finite", lcfr)
        self.width = width
        self.log2_w = width.bit_length() - 1
        self.lcfr = tuple(lcfr)
        super().__init__({
            "instr": In(stream.Signature(TStoreInstr)),
            "mem_size": In(64),
            "tile_rd": Out(TileRead(width)),
            "tile_data": In(8 * width),
            "wr": Out(stream.Signature(MemWrite(width))),
            "done": Out(stream.Signature(Completion)),
        })

    def elaborate(self, platform):
        m = Module()
        P = self.width // LINE_BYTES
        m.submodules.decoder = dec = TLoadDecoder(lcfr=self.lcfr, registered=False,
                                                  width=self.width)
        lanes = [SquareTranspose() for _ in range(P)]
        for k, lane in enumerate(lanes):
            m.submodules[f"lane{k}"] = lane
        chunk = None
        if P > 1:
            m.submodules.chunk = chunk = ChunkTranspose(self.width)
        m.submodules.direct = wq = fifo.SyncFIFO(width=MemWrite(self.width).size + 1, depth=4)
        m.submodules.rows = rq = fifo.SyncFIFO(width=GroupRow(self.width).size, depth=4)
        m.submodules.groups = gq = fifo.SyncFIFO(width=GroupMeta.size, depth=4)
        state = Signal(_State)
        cur = self._accept(m, dec, state)
        w = self._walk(m, cur, state, wq, rq, gq)
        self._into_transposers(m, w, rq, lanes, chunk)
        self._writes(m, cur, w, state, wq, gq, lanes, chunk)
        return m

    def _accept(self, m, dec, state):
        """An instruction through the TLOAD decoder, with D15's two rules: latched as
        ``cur`` when idle."""
        ins = self.instr.payload
        t = dec.i.payload
        m.d.comb += [t.layout.eq(ins.layout), t.dtype.eq(ins.dtype), t.pad.eq(PadValue.Null),
                     t.valid_col.eq(ins.valid_col), t.valid_row.eq(ins.valid_row),
                     t.col.eq(ins.col), t.base.eq(ins.base), t.stride.eq(ins.stride),
                     t.stride_given.eq(ins.stride_given), t.n.eq(1),
                     t.queues[0].eq(TileQueue.T), t.sizes[0].eq(Const(1, 64) << ins.log2_size),
                     dec.mem_size.eq(self.mem_size),
                     dec.i.valid.eq(self.instr.valid & (state == _State.IDLE)),
                     self.instr.ready.eq(dec.i.ready & (state == _State.IDLE)),
                     dec.o.ready.eq(state == _State.IDLE)]
        d = dec.o.payload
        esize_differs = d.log2_esize != ins.src_log2_esize
        inner_bytes = d.valid_minor << d.log2_esize
        overlap = (d.valid_major > 1) & (d.valid_minor != 0) & (d.stride < inner_bytes)
        fault = Signal(FaultCode)
        with m.If(d.fault == FaultCode.IllegalInstruction):
            m.d.comb += fault.eq(d.fault)
        with m.Elif(esize_differs | overlap | (d.fault == FaultCode.IllegalParameter)):
            m.d.comb += fault.eq(FaultCode.IllegalParameter)
        with m.Else():
            m.d.comb += fault.eq(d.fault)
        cur = Signal(data.StructLayout({"d": dec.o.payload.shape(), "fault": FaultCode}))
        empty = (d.valid_major == 0) | (d.valid_minor == 0)
        with m.If(dec.o.valid & dec.o.ready):
            m.d.sync += [cur.d.eq(d), cur.fault.eq(fault),
                         state.eq(Mux((fault != FaultCode.NONE) | empty, _State.DONE,
                                      _State.WALK))]
        return cur

    def _walk(self, m, cur, state, wq, rq, gq):
        """Tile reads, one a cycle while the queue behind has room for their data: the
        walk's counters, one of the two walks, the read port, the data of the read."""
        d = cur.d
        log2_w = self.log2_w
        log2_p = log2_w - LOG2_LINE
        transposing = TLoadLayout.where(d.layout, "transposing")
        chunked = Const(0) if log2_p == 0 else (d.layout != TLoadLayout.NORM) & ~transposing
        w = _Walk(d=d, state=state, log2_e=d.log2_esize, log2_p=log2_p,
                  transposing=transposing, chunked=chunked, grouped=transposing | chunked,
                  # lines of a fractal block: rows of an NZ tile, columns of ZN
                  log2_block=Mux(TLoadLayout.where(d.layout, "nz_tile"),
                                 d.log2_rows, d.log2_cols),
                  log2_side=Signal(3),  # runs of a group: S = 32 / esize, or P (chunked)
                  major=Signal(24),     # direct: the memory run; grouped: the group's runs
                  seg=Signal(24),       # direct: the segment; grouped: the group's minor
                  r=Signal(6),          # grouped: the word of the group
                  run_addr=Signal(64),  # base + major * stride (x the group's runs)
                  pend=Signal(),        # a read (or zero row) was issued last cycle
                  pend_meta=Signal(data.StructLayout({
                      "addr": 64, "lane": log2_w, "bytes": 8, "zero": 1, "last": 1,
                      "lines": 7})),
                  go=Signal(), last_major=Signal(),
                  tile_off=Signal(MAX_LOG_SIZE + 1),
                  exists=Signal(init=1),  # grouped: the word is in the tile
                  walking=state == _State.WALK,
                  minor_bytes=d.valid_minor << d.log2_esize)
        m.d.comb += w.log2_side.eq(Mux(chunked, log2_p, LOG2_LINE - w.log2_e))
        m.d.sync += w.pend.eq(w.go)
        with m.If(~w.grouped):
            self._walk_direct(m, w, wq)
        with m.Else():
            self._walk_groups(m, w, rq, gq)
        m.d.comb += [self.tile_rd.en.eq(w.go & w.exists),
                     self.tile_rd.word.eq(w.tile_off >> log2_w)]
        with m.If(state == _State.IDLE):
            m.d.sync += [w.major.eq(0), w.seg.eq(0), w.r.eq(0),
                         w.run_addr.eq(self.instr.payload.base)]
        self._read_data(m, w, wq, rq)
        return w

    def _walk_direct(self, m, w, wq):
        """NORM, ND2NZ, DN2ZN: memory run ``major``, segment ``seg`` -- a NORM row or W bytes
        of it (rows are powers of two of bytes), or one 32-byte fractal line."""
        d, log2_w = w.d, self.log2_w
        log2_row_bytes = d.log2_cols + w.log2_e
        log2_seg = Mux(d.layout == TLoadLayout.NORM,
                       Mux(log2_row_bytes > log2_w, log2_w, log2_row_bytes), LOG2_LINE)
        seg_off = (w.seg << log2_seg)[:24]
        line = (w.seg << w.log2_block) | w.major
        m.d.comb += [
            w.tile_off.eq(Mux(d.layout == TLoadLayout.NORM,
                              (w.major << log2_row_bytes) + seg_off, line << LOG2_LINE)),
            w.go.eq(w.walking & ((wq.level + w.pend) < wq.depth)),
            w.last_major.eq(w.major + 1 == d.valid_major)]
        seg_last = ((w.seg + 1) << log2_seg) >= w.minor_bytes
        left = w.minor_bytes - seg_off
        meta = w.pend_meta
        with m.If(w.go):
            m.d.sync += [meta.addr.eq(w.run_addr + seg_off), meta.lane.eq(w.tile_off[:log2_w]),
                         meta.bytes.eq(Mux(left > (1 << log2_seg), 1 << log2_seg, left)),
                         meta.zero.eq(0), meta.last.eq(seg_last & w.last_major)]
            with m.If(seg_last):
                m.d.sync += [w.seg.eq(0), w.major.eq(w.major + 1),
                             w.run_addr.eq(w.run_addr + d.stride)]
                with m.If(w.last_major):
                    m.d.sync += w.state.eq(_State.DRAIN)
            with m.Else():
                m.d.sync += w.seg.eq(w.seg + 1)

    def _walk_groups(self, m, w, rq, gq):
        """Chunked and transposing: group (``major``, ``seg``) of ``side`` memory runs (S
        or P) by P x 32 bytes, word ``r`` of its ``side`` words; the group's address rides
        ``gq``.  Transposing: tile lines ``major << log2_block + seg * P * S`` on, P a word
        (S consecutive words); chunked: segment ``seg * P + r`` of runs ``major * P`` on,
        tile line ``(seg * P + r) << log2_block | major * P``."""
        d, log2_p = w.d, w.log2_p
        side = Const(1, 24) << w.log2_side
        group_bytes = Const(LINE_BYTES << log2_p, 9)             # W
        minor0 = (w.seg << (LOG2_LINE + log2_p))[:24]           # the group's first byte
        major0 = w.major << w.log2_side
        first = w.r == 0
        square_line = (w.seg << (w.log2_side + log2_p)) + (w.r << log2_p)
        chunk_seg = (w.seg << log2_p) + w.r
        with m.If(w.chunked):
            m.d.comb += [w.exists.eq((chunk_seg << LOG2_LINE) < w.minor_bytes),
                         w.tile_off.eq(((chunk_seg << w.log2_block) | major0) << LOG2_LINE)]
        with m.Else():
            m.d.comb += [w.exists.eq(square_line < (Const(1, 24) << w.log2_block)),
                         w.tile_off.eq(((w.major << w.log2_block) + square_line)
                                       << LOG2_LINE)]
        m.d.comb += [w.go.eq(w.walking & ((rq.level + w.pend) < rq.depth)
                             & (~first | gq.w_rdy)),
                     w.last_major.eq((major0 + side) >= d.valid_major)]
        minor_last = (minor0 + group_bytes) >= w.minor_bytes
        left = w.minor_bytes - minor0
        lines = d.valid_major - major0
        with m.If(w.go):
            m.d.sync += [w.pend_meta.zero.eq(~w.exists),
                         w.pend_meta.lines.eq(Mux(lines > side, side, lines))]
            with m.If(first):
                group = Signal(GroupMeta)
                m.d.comb += [group.bytes.eq(Mux(left > group_bytes, group_bytes, left)),
                             group.last.eq(minor_last & w.last_major),
                             group.addr.eq(w.run_addr + minor0),
                             gq.w_en.eq(1), gq.w_data.eq(group)]
            with m.If(w.r == side - 1):
                m.d.sync += w.r.eq(0)
                with m.If(minor_last):
                    m.d.sync += [w.seg.eq(0), w.major.eq(w.major + 1),
                                 w.run_addr.eq(w.run_addr + (d.stride << w.log2_side))]
                    with m.If(w.last_major):
                        m.d.sync += w.state.eq(_State.DRAIN)
                with m.Else():
                    m.d.sync += w.seg.eq(w.seg + 1)
            with m.Else():
                m.d.sync += w.r.eq(w.r + 1)

    def _read_data(self, m, w, wq, rq):
        """The data of the read issued last cycle: a write into the direct queue, or a
        word (zeros for one past the tile) into the grouped walks' queue."""
        W = self.width
        meta = w.pend_meta
        lane_data = Signal(8 * W)
        m.d.comb += lane_data.eq(self.tile_data >> (meta.lane << 3))
        wr = Signal(MemWrite(W))
        m.d.comb += [wr.addr.eq(meta.addr), wr.data.eq(lane_data),
                     wr.be.eq((Const(1, W + 1) << meta.bytes) - 1),
                     wq.w_data.eq(wr.as_value() | (meta.last << MemWrite(W).size)),
                     wq.w_en.eq(w.pend & ~w.grouped)]
        row = Signal(GroupRow(W))
        m.d.comb += [row.data.eq(Mux(meta.zero, 0, self.tile_data)),
                     row.log2_e.eq(w.log2_e), row.lines.eq(meta.lines),
                     rq.w_data.eq(row), rq.w_en.eq(w.pend & w.grouped)]

    def _into_transposers(self, m, w, rq, lanes, chunk):
        """A queued word into the chunk transposer (chunked), or chunk p of it into lane p
        (transposing); the lanes take their rows together, so they stay in step."""
        row = Signal(GroupRow(self.width))
        m.d.comb += row.eq(rq.r_data)
        for k, lane in enumerate(lanes):
            m.d.comb += [lane.i.payload.data.eq(row.data.word_select(k, 8 * LINE_BYTES)),
                         lane.i.payload.log2_ebits.eq(row.log2_e + 3),
                         lane.i.payload.lines.eq(row.lines)]
        if chunk is None:
            m.d.comb += [lanes[0].i.valid.eq(rq.r_rdy), rq.r_en.eq(lanes[0].i.ready)]
            return
        c = chunk.i.payload
        m.d.comb += [c.data.eq(row.data), c.valid.eq(-1), c.lines.eq(row.lines)]
        with m.If(w.chunked):
            m.d.comb += [chunk.i.valid.eq(rq.r_rdy), rq.r_en.eq(chunk.i.ready)]
        with m.Else():
            m.d.comb += [lane.i.valid.eq(rq.r_rdy) for lane in lanes]
            m.d.comb += rq.r_en.eq(lanes[0].i.ready)

    def _interleave(self, m, lanes, log2_e):
        """Memory run c's W bytes from the P lanes' column c: element e from lane e mod P,
        its element e div P."""
        P = len(lanes)
        out = Signal(8 * self.width)
        if P == 1:
            m.d.comb += out.eq(lanes[0].o.payload.data)
            return out
        with m.Switch(log2_e):
            for k in range(4):
                e = 8 << k
                with m.Case(k):
                    m.d.comb += out.eq(Cat(
                        lanes[i % P].o.payload.data.word_select(i // P, e)
                        for i in range(8 * self.width // e)))
        return out

    def _writes(self, m, cur, walk, state, wq, gq, lanes, chunk):
        """The writes: the direct queue's, or the grouped walks' columns (the chunk
        transposer's or the lanes') at the addresses of their group; the completion after
        the instruction's last."""
        W = self.width
        d = cur.d
        head = Signal(GroupMeta)
        m.d.comb += head.eq(gq.r_data)
        col = Signal(data.StructLayout({"valid": 1, "data": 8 * W, "index": 6, "last": 1}))
        lane0 = lanes[0].o
        m.d.comb += [col.valid.eq(lane0.valid),
                     col.data.eq(self._interleave(m, lanes, walk.log2_e)),
                     col.index.eq(lane0.payload.index), col.last.eq(lane0.payload.last)]
        m.d.comb += [lane.o.ready.eq(self.wr.ready & walk.transposing) for lane in lanes]
        if chunk is not None:
            with m.If(walk.chunked):
                m.d.comb += [col.valid.eq(chunk.o.valid), col.data.eq(chunk.o.payload.data),
                             col.index.eq(chunk.o.payload.index),
                             col.last.eq(chunk.o.payload.last),
                             chunk.o.ready.eq(self.wr.ready)]
        acc = Signal(64)
        col_addr = Mux(col.index == 0, head.addr, acc)
        last_seen = Signal()
        w = self.wr
        with m.If(walk.grouped):
            m.d.comb += [w.valid.eq(col.valid), w.payload.addr.eq(col_addr),
                         w.payload.data.eq(col.data),
                         w.payload.be.eq((Const(1, W + 1) << head.bytes) - 1)]
            with m.If(w.valid & w.ready):
                m.d.sync += acc.eq(col_addr + d.stride)
                with m.If(col.last):
                    m.d.comb += gq.r_en.eq(1)
                    with m.If(head.last):
                        m.d.sync += last_seen.eq(1)
        with m.Else():
            entry = Signal(data.StructLayout({"wr": MemWrite(W), "last": 1}))
            m.d.comb += [entry.eq(wq.r_data), w.valid.eq(wq.r_rdy), w.payload.eq(entry.wr),
                         wq.r_en.eq(w.ready)]
            with m.If(w.valid & w.ready & entry.last):
                m.d.sync += last_seen.eq(1)
        with m.If((state == _State.DRAIN) & last_seen):
            m.d.sync += [state.eq(_State.DONE), last_seen.eq(0)]
        m.d.comb += [self.done.valid.eq(state == _State.DONE),
                     self.done.payload.fault.eq(cur.fault)]
        with m.If(self.done.valid & self.done.ready):
            m.d.sync += state.eq(_State.IDLE)
