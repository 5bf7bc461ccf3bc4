"""The L1 -> L0 engine: LoadDataWithTranspose V1 and V2 (seed 001; D10).

Ports (streams):

* ``op`` in -- {v2, log2_ebits (log2 element bits: 2 int4b, 3 (u)int8, 4 half/bfloat16, 5
  float/(u)int32), dst_l0b, repeat, start, src_stride, dst_gap, dst_frac_gap, src_frac_gap,
  addr_mode, src, dst} (byte addresses in L1 and L0)
* ``l1_size``, ``l0_size`` in -- buffer sizes, for the OutOfBounds checks
* ``rd`` out / ``rd_data`` in -- L1 reads of W bytes (P = W/32 consecutive 32-byte rows of
  one fractal, at a 32-byte aligned address), responses in order
* ``wr`` out -- L0 writes of W bytes {addr, data}: P consecutive lines of one fractal, at a
  W-aligned address
* ``done`` out -- one completion per op, in order, with its D8 fault code

Each iteration's square goes through the transpose unit shared with TLOAD (b4 64x64 nibbles,
b8 32x32, b16 16x16); a b32 square of two 16x8 fractals side by side is four 8x8 b32
squares: [[A, B], [C, D]] transposed is [[A', C'], [B', D']], so A and B fill the first
destination fractal and C and D the second.  P source rows are read a cycle and P lines
written a cycle, with no gap between squares or ops; the first lines of a square leave after
its S rows have arrived (S = 64, 32, 16, 8), S/P cycles after its first read.

At W = 32 (P = 1) one transpose unit takes the rows as they come.  At W = 64 and 128 a read
brings P rows of one square, and P transpose lanes take it together (lane p: columns p, p+P,
.. of the square as super-elements of P rows; see :func:`~tilecosim.hdl.transpose.lane_rows`):
each lane is a square of S/P x S/P elements of P times the element bits, and the lanes' column
c is lines P*c .. P*c+P-1 of the transposed square, which lie side by side in L0 (P divides
the 16 lines of a fractal and the 8 of a b32 quarter).  Storage is P squares of 256 bits x
S/P rows: 2 KB at W = 32 (b4), 2 KB at W = 64 and 128 (W=128: 4 lanes x 16 rows).

Latency: the first lines are written S/P + 3 cycles after the op is accepted, at L1 latency 2
(S/P reads, L1's two cycles, the lanes' output register).  Throughput: W bytes a cycle in and
out.

Faults are found before the first read, in the model's order: ParameterRange,
IllegalParameter (int4b or V2 to L0A, V2 with int4b), Alignment (dst 512 B, src 32 B), and
when repeat > 0 overlapping destination fractals (IllegalParameter) and OutOfBounds.  A
faulting op and an op with repeat 0 make no access; their completion follows the ones
before them.

Stages of ``elaborate``: check (the fault of the op offered), read (the rows of the op
being issued), accept, rows into the transpose unit, lines out to L0.
"""

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from tilecosim.hdl.common import (FRACTAL_BYTES, LINE_BYTES, Completion, FaultCode,
                                  check_at_least, check_choice, check_width, first_fault)
from tilecosim.hdl.completion import CompletionQueue
from tilecosim.hdl.transpose import NaiveTranspose, SquareTranspose, lane_rows

__all__ = ["L1L0Engine", "LdtOp"]


LdtOp = data.StructLayout({
    "v2": 1, "log2_ebits": 3, "dst_l0b": 1, "repeat": 32, "start": 32, "src_stride": 32,
    "dst_gap": 32, "dst_frac_gap": 32, "src_frac_gap": 32, "addr_mode": 1, "src": 32, "dst": 32,
})

#: where the lines of one square go: the first destination fractal, the step between
#: fractals, which b32 quarter (A, B, C, D) it is, and whether it ends the op
Square = data.StructLayout({"dst_base": 48, "frac_step": 32, "quarter": 2, "b32": 1, "last": 1})


class L1L0Engine(wiring.Component):
    """LoadDataWithTranspose engine (see module doc for the ports).

    Parameters
    ----------
    width : int
        Bytes per L1 read and L0 write (32, 64 or 128).
    depth : int
        L1 reads in flight.
    transpose : str
        The transpose unit: ``"square"`` (alternating orientation) or ``"naive"``."""

    def __init__(self, width: int = 32, depth: int = 16, transpose: str = "square"):
        check_width(width)
        check_at_least("depth", depth, 2, "reads in flight")
        check_choice("transpose", transpose, ("square", "naive"))
        self.width = width
        self.depth = depth
        self.transpose_kind = transpose
        super().__init__({
            "op": In(stream.Signature(LdtOp)),
            "l1_size": In(32),
            "l0_size": In(32),
            "rd": Out(stream.Signature(data.StructLayout({"addr": 32}))),
            "rd_data": In(stream.Signature(8 * width)),
            "wr": Out(stream.Signature(data.StructLayout({"addr": 32, "data": 8 * width}))),
            "done": Out(stream.Signature(Completion)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.rows = rows = fifo.SyncFIFOBuffered(width=3, depth=self.depth)  # per read
        m.submodules.squares = squares = fifo.SyncFIFO(width=Square.size, depth=4)
        m.submodules.completions = cq = CompletionQueue()
        P = self.width // LINE_BYTES
        unit = SquareTranspose if self.transpose_kind == "square" else NaiveTranspose
        # the lanes' elements are P x 4 .. P x 32 bits: 64 rows at P = 1, 32 at 2, 16 at 4
        lanes = [unit(max_rows=64 // P, widest=128 if P == 4 else 64) for _ in range(P)]
        for k, lane in enumerate(lanes):
            m.submodules[f"transpose{k}" if P > 1 else "transpose"] = lane
        connect(m, cq.done, flipped(self.done))

        fault = self._check(m)
        cur = Signal(LdtOp)              # the op being issued
        busy = Signal()
        i = Signal(8)                    # iteration
        q = Signal(2)                    # b32: sub-square A, B, C, D
        r = Signal(7)                    # row of the square (the first of the P read)
        finishing = self._read(m, cur, busy, i, q, r, rows.w_stream, squares.w_stream)
        self._accept(m, fault, cur, busy, i, q, r, finishing, cq)
        self._rows_in(m, rows.r_stream, lanes)
        self._lines_out(m, lanes, squares.r_stream, cq)
        return m

    def _check(self, m):
        """The fault of the op offered on ``op``, in the model's order."""
        op = self.op.payload
        log2_ebits = op.log2_ebits
        known = (log2_ebits >= 2) & (log2_ebits <= 5)
        nfrac = Signal(3)
        with m.Switch(log2_ebits):
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
        int4 = log2_ebits == 2
        rule_bad = ~known | (op.v2 & ~op.dst_l0b) | (op.v2 & int4) | (int4 & ~op.dst_l0b)
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
        sq_bytes = nfrac * FRACTAL_BYTES
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
            m.d.comb += [src_lo.eq(op.src + lo_sq * FRACTAL_BYTES),
                         src_hi.eq(op.src + (hi_sq + (nfrac - 1) * (op.src_frac_gap[:16] + 1))
                                   * FRACTAL_BYTES)]
        with m.Else():
            m.d.comb += [src_lo.eq(op.src + lo_sq * sq_bytes),
                         src_hi.eq(op.src + hi_sq * sq_bytes + (nfrac - 1) * FRACTAL_BYTES)]
        dst_hi = op.dst + (a * (R - 1) + b * (nfrac - 1)) * FRACTAL_BYTES
        oob = (R != 0) & ((src_lo < 0) | (src_hi + FRACTAL_BYTES > self.l1_size)
                          | (dst_hi + FRACTAL_BYTES > self.l0_size))
        return first_fault(m, [(out_of_range, FaultCode.ParameterRange),
                               (rule_bad, FaultCode.IllegalParameter),
                               (misaligned, FaultCode.Alignment),
                               (overlaps, FaultCode.IllegalParameter),
                               (oob, FaultCode.OutOfBounds)], name="fault")

    def _read(self, m, cur, busy, i, q, r, rows, squares):
        """P L1 rows a cycle of the op being issued (its element size into ``rows``), its
        square's destination into ``squares`` with its last read (both FIFO write streams);
        returns ``finishing`` (the op's last read goes now)."""
        P = self.width // LINE_BYTES
        c_b32 = cur.log2_ebits == 5
        side = Signal(8)
        m.d.comb += side.eq(Mux(c_b32, 8, 256 >> cur.log2_ebits))
        c_nfrac = Mux(cur.log2_ebits == 2, 4, Mux(cur.log2_ebits == 4, 1, 2))
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
        frac = FRACTAL_BYTES
        with m.If(cur.v2):
            m.d.comb += frac_addr.eq(cur.src + (sq_index + j * (cur.src_frac_gap[:16] + 1)) * frac)
        with m.Else():
            m.d.comb += frac_addr.eq(cur.src + sq_index * (c_nfrac * frac) + j * frac)
        last_row = r == side - P
        last_q = ~c_b32 | (q == 3)
        last_i = i == cur.repeat[:8] - 1
        m.d.comb += [
            self.rd.valid.eq(busy & rows.ready & (~last_row | squares.ready)),
            self.rd.payload.addr.eq((frac_addr + row_in_frac * LINE_BYTES)[:32]),
            rows.payload.eq(cur.log2_ebits),
        ]
        issue = self.rd.valid & self.rd.ready
        m.d.comb += rows.valid.eq(issue)
        sq = Signal(Square)
        m.d.comb += [
            sq.dst_base.eq(cur.dst + (cur.dst_gap[:16] + 1) * i * FRACTAL_BYTES),
            sq.frac_step.eq((cur.dst_frac_gap[:16] + 1) * FRACTAL_BYTES),
            sq.quarter.eq(q), sq.b32.eq(c_b32), sq.last.eq(last_i & last_q),
            squares.payload.eq(sq),
            squares.valid.eq(issue & last_row),
        ]
        finishing = Signal()
        with m.If(issue):
            with m.If(~last_row):
                m.d.sync += r.eq(r + P)
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
        return finishing

    def _accept(self, m, fault, cur, busy, i, q, r, finishing, cq):
        """Legal ops stream in; a faulting op or one with repeat 0 completes once the
        pipeline has drained."""
        op = self.op.payload
        free = ~busy | finishing
        quiet = (fault != FaultCode.NONE) | (op.repeat == 0)
        m.d.comb += [cq.fault.valid.eq(free & self.op.valid & quiet & cq.idle & ~busy),
                     cq.fault.payload.eq(fault)]
        with m.If(free & self.op.valid):
            with m.If(quiet):
                m.d.comb += self.op.ready.eq(cq.idle & ~busy & cq.fault.ready)
            with m.Else():
                m.d.comb += [cq.started.eq(1), self.op.ready.eq(1)]
        with m.If(cq.started):
            m.d.sync += [cur.eq(op), busy.eq(1), i.eq(0), q.eq(0), r.eq(0)]

    def _rows_in(self, m, rows, lanes):
        """Rows from L1 into the transpose lanes, each read with the element size it was
        read for (at W > 32 the lanes' elements are P times as wide, P rows deep)."""
        P = self.width // LINE_BYTES
        log2_p = P.bit_length() - 1
        lb = rows.payload
        data = lane_rows(m, self.rd_data.payload, self.width, lb,
                         {k: (1 << k, P) for k in range(2, 6)})
        lane0 = lanes[0]
        for lane, row in zip(lanes, data):
            m.d.comb += [
                lane.i.valid.eq(self.rd_data.valid & rows.valid),
                lane.i.payload.data.eq(row),
                lane.i.payload.log2_ebits.eq(lb + log2_p),
                lane.i.payload.lines.eq(Mux(lb == 5, 8, 256 >> lb) >> log2_p),
            ]
        m.d.comb += [
            self.rd_data.ready.eq(lane0.i.ready & rows.valid),
            rows.ready.eq(self.rd_data.valid & self.rd_data.ready),
        ]

    def _lines_out(self, m, lanes, squares, cq):
        """The lanes' columns (P transposed lines) to their L0 addresses; an op's last lines
        go only when its completion can be queued."""
        P = self.width // LINE_BYTES
        tr = lanes[0]
        g = Square(squares.payload)
        line = Signal(7)
        m.d.comb += line.eq(tr.o.payload.index * P)
        waddr = Mux(g.b32,
                    g.dst_base + g.quarter[1] * g.frac_step + Cat(line[:3], g.quarter[0]) * 32,
                    g.dst_base + (line >> 4) * g.frac_step + line[:4] * 32)
        last_line = tr.o.payload.last & g.last
        can = squares.valid & (~last_line | cq.room)      # the lines' place, room to complete
        ready = self.wr.ready & can
        m.d.comb += [
            self.wr.valid.eq(tr.o.valid & can),
            self.wr.payload.addr.eq(waddr[:32]),
            self.wr.payload.data.eq(Cat(lane.o.payload.data for lane in lanes)),
            squares.ready.eq(tr.o.valid & ready & tr.o.payload.last),
            cq.finished.eq(tr.o.valid & ready & last_line),
        ]
        m.d.comb += [lane.o.ready.eq(ready) for lane in lanes]
