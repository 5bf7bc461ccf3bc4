"""The L1 -> L0 engine: LoadDataWithTranspose V1 and V2 (seed 001; D10).

Ports (streams):

* ``op`` in -- {v2, lb (log2 element bits: 2 int4b, 3 (u)int8, 4 half/bfloat16, 5
  float/(u)int32), dst_l0b, repeat, start, src_stride, dst_gap, dst_frac_gap, src_frac_gap,
  addr_mode, src, dst} (byte addresses in L1 and L0)
* ``l1_size``, ``l0_size`` in -- buffer sizes, for the OutOfBounds checks
* ``rd`` out / ``rd_data`` in -- L1 reads of one 32-byte row, responses in order
* ``wr`` out -- L0 writes of one 32-byte line {addr, data}
* ``done`` out -- one completion per op, in order, with its D8 fault code

Each iteration's square goes through the transpose unit shared with TLOAD (b4 64x64 nibbles,
b8 32x32, b16 16x16); a b32 square of two 16x8 fractals side by side is four 8x8 b32
squares: [[A, B], [C, D]] transposed is [[A', C'], [B', D']], so A and B fill the first
destination fractal and C and D the second.  Source rows are read at one per cycle and lines
written at one per cycle, with no gap between squares or ops; the first line of a square
leaves after its S rows have arrived (S = 64, 32, 16, 8).

Faults are found before the first read, in the model's order: ParameterRange,
IllegalParameter (int4b or V2 to L0A, V2 with int4b), Alignment (dst 512 B, src 32 B), and
when repeat > 0 overlapping destination fractals (IllegalParameter) and OutOfBounds.  A
faulting op and an op with repeat 0 make no access; their completion follows the ones
before them.
"""

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.tload.types import FaultCode
from tilecosim.hdl.transpose import NaiveTranspose, SquareTranspose

__all__ = ["L1L0Engine", "LdtOp"]

FRAC = 512

LdtOp = data.StructLayout({
    "v2": 1, "lb": 3, "dst_l0b": 1, "repeat": 32, "start": 32, "src_stride": 32,
    "dst_gap": 32, "dst_frac_gap": 32, "src_frac_gap": 32, "addr_mode": 1, "src": 32, "dst": 32,
})

Square = data.StructLayout({"d0": 48, "fs": 32, "q": 2, "b32": 1, "last": 1})


class L1L0Engine(wiring.Component):
    """LoadDataWithTranspose engine (see module doc).  ``depth``: L1 reads in flight."""

    def __init__(self, depth: int = 16, transpose: str = "square"):
        if depth < 2:
            raise ValueError(f"depth={depth}: need at least 2 reads in flight")
        if transpose not in ("square", "naive"):
            raise ValueError(f"transpose={transpose!r}: choose 'square' or 'naive'")
        self.depth = depth
        self.transpose_kind = transpose
        super().__init__({
            "op": In(stream.Signature(LdtOp)),
            "l1_size": In(32),
            "l0_size": In(32),
            "rd": Out(stream.Signature(data.StructLayout({"addr": 32}))),
            "rd_data": In(stream.Signature(256)),
            "wr": Out(stream.Signature(data.StructLayout({"addr": 32, "data": 256}))),
            "done": Out(stream.Signature(data.StructLayout({"fault": FaultCode}))),
        })

    def elaborate(self, platform):
        m = Module()
        op = self.op.payload

        # --- checks ----------------------------------------------------------------------
        lb = op.lb
        known = (lb >= 2) & (lb <= 5)
        nfrac = Signal(3)
        with m.Switch(lb):
            with m.Case(2):
                m.d.comb += nfrac.eq(4)
            with m.Case(3, 5):
                m.d.comb += nfrac.eq(2)
            with m.Case(4):
                m.d.comb += nfrac.eq(1)
        lim16 = 65535
        out_of_range = ((op.start > lim16) | (op.src_stride > lim16) | (op.dst_gap > lim16)
                        | (op.dst_frac_gap > lim16) | (op.v2 & (op.src_frac_gap > lim16))
                        | (op.repeat > 255) | (op.v2 & (op.repeat == 0)))
        rule_bad = ~known | (op.v2 & ~op.dst_l0b) | (op.v2 & (lb == 2)) | ((lb == 2) & ~op.dst_l0b)
        misaligned = (op.dst[:9] != 0) | (op.src[:5] != 0)
        R = op.repeat[:8]
        a = op.dst_gap[:16] + 1
        b = op.dst_frac_gap[:16] + 1
        overlap = []
        for j in (1, 2, 3):
            t = b * j
            overlap.append((nfrac > j) & (t % a == 0) & (t // a <= R - 1))
        overlaps = (R != 0) & Cat(*overlap).any()
        # source fractal addresses are linear in (i, j): the extremes are at the corners
        sq_bytes = nfrac * FRAC
        step = Signal(signed(48))
        m.d.comb += step.eq(Mux(op.addr_mode, -op.src_stride[:16], op.src_stride[:16]))
        first_sq = op.start[:16]
        last_sq = Signal(signed(48))
        m.d.comb += last_sq.eq(first_sq + step * (R - 1))
        lo_sq = Mux(last_sq < first_sq, last_sq, first_sq)
        hi_sq = Mux(last_sq < first_sq, first_sq, last_sq)
        src_lo = Signal(signed(56))
        src_hi = Signal(signed(56))
        with m.If(op.v2):
            m.d.comb += [src_lo.eq(op.src + lo_sq * FRAC),
                         src_hi.eq(op.src + (hi_sq + (nfrac - 1) * (op.src_frac_gap[:16] + 1))
                                   * FRAC)]
        with m.Else():
            m.d.comb += [src_lo.eq(op.src + lo_sq * sq_bytes),
                         src_hi.eq(op.src + hi_sq * sq_bytes + (nfrac - 1) * FRAC)]
        dst_hi = op.dst + (a * (R - 1) + b * (nfrac - 1)) * FRAC
        oob = (R != 0) & ((src_lo < 0) | (src_hi + FRAC > self.l1_size)
                          | (dst_hi + FRAC > self.l0_size))
        fault = Signal(FaultCode)
        with m.If(out_of_range):
            m.d.comb += fault.eq(FaultCode.ParameterRange)
        with m.Elif(rule_bad):
            m.d.comb += fault.eq(FaultCode.IllegalParameter)
        with m.Elif(misaligned):
            m.d.comb += fault.eq(FaultCode.Alignment)
        with m.Elif(overlaps):
            m.d.comb += fault.eq(FaultCode.IllegalParameter)
        with m.Elif(oob):
            m.d.comb += fault.eq(FaultCode.OutOfBounds)

        # --- the op being issued ------------------------------------------------------------
        cur = Signal(LdtOp)
        busy = Signal()
        i = Signal(8)            # iteration
        q = Signal(2)            # b32: sub-square A, B, C, D
        r = Signal(7)            # row of the square
        inflight = Signal(range(64))
        m.submodules.rows = rows = fifo.SyncFIFOBuffered(width=3, depth=self.depth)     # lb per read
        m.submodules.squares = squares = fifo.SyncFIFO(width=Square.size, depth=4)
        m.submodules.completions = comp = fifo.SyncFIFOBuffered(width=3, depth=4)
        m.submodules.transpose = tr = (SquareTranspose(max_rows=64) if self.transpose_kind == "square"
                                       else NaiveTranspose(max_rows=64))

        c_b32 = cur.lb == 5
        side = Signal(8)
        m.d.comb += side.eq(Mux(c_b32, 8, 256 >> cur.lb))
        c_nfrac = Mux(cur.lb == 2, 4, Mux(cur.lb == 4, 1, 2))
        j = Signal(2)
        row_in_frac = Signal(5)
        with m.If(c_b32):
            m.d.comb += [j.eq(q[0]), row_in_frac.eq(Cat(r[:3], q[1]))]
        with m.Else():
            m.d.comb += [j.eq(r >> 4), row_in_frac.eq(r[:4])]
        c_step = Mux(cur.addr_mode, -cur.src_stride[:16], cur.src_stride[:16])
        sq_index = Signal(signed(48))
        m.d.comb += sq_index.eq(cur.start[:16] + c_step * i)
        frac_addr = Signal(signed(56))
        with m.If(cur.v2):
            m.d.comb += frac_addr.eq(cur.src + (sq_index + j * (cur.src_frac_gap[:16] + 1)) * FRAC)
        with m.Else():
            m.d.comb += frac_addr.eq(cur.src + sq_index * (c_nfrac * FRAC) + j * FRAC)
        last_row = r == side - 1
        last_q = ~c_b32 | (q == 3)
        last_i = i == cur.repeat[:8] - 1
        m.d.comb += [
            self.rd.valid.eq(busy & rows.w_rdy & (~last_row | squares.w_rdy)),
            self.rd.payload.addr.eq((frac_addr + row_in_frac * 32)[:32]),
            rows.w_data.eq(cur.lb),
        ]
        issue = self.rd.valid & self.rd.ready
        m.d.comb += rows.w_en.eq(issue)
        sq = Signal(Square)
        m.d.comb += [
            sq.d0.eq(cur.dst + (cur.dst_gap[:16] + 1) * i * FRAC),
            sq.fs.eq((cur.dst_frac_gap[:16] + 1) * FRAC),
            sq.q.eq(q), sq.b32.eq(c_b32), sq.last.eq(last_i & last_q),
            squares.w_data.eq(sq),
            squares.w_en.eq(issue & last_row),
        ]
        finishing = Signal()
        with m.If(issue):
            with m.If(~last_row):
                m.d.sync += r.eq(r + 1)
            with m.Else():
                m.d.sync += r.eq(0)
                with m.If(~last_q):
                    m.d.sync += q.eq(q + 1)
                with m.Else():
                    m.d.sync += q.eq(0)
                    with m.If(~last_i):
                        m.d.sync += i.eq(i + 1)
                    with m.Else():
                        m.d.comb += finishing.eq(1)
                        m.d.sync += busy.eq(0)

        # --- accept an op: legal ones stream in, the others wait for the pipeline to drain ----
        idle = inflight == 0
        free = ~busy | finishing
        quiet = (fault != FaultCode.NONE) | (op.repeat == 0)
        started = Signal()
        quiet_done = Signal()
        with m.If(free & self.op.valid):
            with m.If(quiet):
                m.d.comb += [quiet_done.eq(idle & ~busy & comp.w_rdy),
                             self.op.ready.eq(idle & ~busy & comp.w_rdy)]
            with m.Else():
                m.d.comb += [started.eq(1), self.op.ready.eq(1)]
        with m.If(started):
            m.d.sync += [cur.eq(op), busy.eq(1), i.eq(0), q.eq(0), r.eq(0)]

        # --- rows into the transpose unit ---------------------------------------------------
        m.d.comb += [
            tr.i.valid.eq(self.rd_data.valid & rows.r_rdy),
            tr.i.payload.data.eq(self.rd_data.payload),
            tr.i.payload.lb.eq(rows.r_data),
            tr.i.payload.lines.eq(Mux(rows.r_data == 5, 8, 256 >> rows.r_data)),
            self.rd_data.ready.eq(tr.i.ready & rows.r_rdy),
            rows.r_en.eq(self.rd_data.valid & self.rd_data.ready),
        ]

        # --- lines out to L0 ----------------------------------------------------------------
        g = Square(squares.r_data)
        line = tr.o.payload.index
        waddr = Mux(g.b32, g.d0 + g.q[1] * g.fs + Cat(line[:3], g.q[0]) * 32,
                    g.d0 + (line >> 4) * g.fs + line[:4] * 32)
        last_line = tr.o.payload.last & g.last
        m.d.comb += [
            self.wr.valid.eq(tr.o.valid & squares.r_rdy & (~last_line | comp.w_rdy)),
            self.wr.payload.addr.eq(waddr[:32]),
            self.wr.payload.data.eq(tr.o.payload.data),
            tr.o.ready.eq(self.wr.ready & squares.r_rdy & (~last_line | comp.w_rdy)),
            squares.r_en.eq(tr.o.valid & tr.o.ready & tr.o.payload.last),
        ]
        wrote_last = tr.o.valid & tr.o.ready & last_line

        # --- completions ------------------------------------------------------------------------
        with m.If(wrote_last):
            m.d.comb += [comp.w_en.eq(1), comp.w_data.eq(FaultCode.NONE)]
        with m.Elif(quiet_done):
            m.d.comb += [comp.w_en.eq(1), comp.w_data.eq(fault)]
        m.d.comb += [self.done.valid.eq(comp.r_rdy), self.done.payload.fault.eq(comp.r_data),
                     comp.r_en.eq(self.done.ready)]
        with m.If(started & ~wrote_last):
            m.d.sync += inflight.eq(inflight + 1)
        with m.Elif(~started & wrote_last):
            m.d.sync += inflight.eq(inflight - 1)
        return m
