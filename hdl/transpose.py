"""Square-block transpose unit.

A square is S x S elements of 2**log2_ebits bits with S * 2**log2_ebits = 256: 64x64 b4 (with
``max_rows=64``), 32x32 b8, 16x16 b16, 8x8 b32, 4x4 b64 -- one 32-byte row per beat in, one
32-byte column per beat out.  b4 elements are nibbles, the even one in the low nibble.

:class:`SquareTranspose` keeps ONE square of storage (32 rows of 32 bytes) and
alternates the write orientation between consecutive squares: a square written
row by row is read column by column, and while column ``t`` is read the next
square's row ``t`` is written into that same column; that square is then read row
by row.  Input and output both run at one beat per cycle with no gap between
squares.

:class:`NaiveTranspose` (same interface) fills the square, then drains it; it is the
second oracle of the tests.

Interface (independent of TLOAD):

* ``i``: rows.  ``payload.data`` is the row (element b in bits [e*b, e*(b+1)) for
  elements of e bits); ``payload.log2_ebits`` (log2 of the element bits, 2..6) and
  ``payload.lines`` (how many columns to emit, 1..S) are taken from row 0 of each square.
* ``o``: columns 0 .. lines-1 of each square, ``payload.index`` = the column,
  ``payload.last`` on the final one.

Latency: the first column leaves one cycle after row S-1 enters.  Throughput: one
row in and one column out per cycle.  A square whose element size differs from the
one being read waits until that one is drained.
"""


from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import LINE_BYTES, check_choice

__all__ = ["TransposeRow", "TransposeLine", "SquareTranspose", "NaiveTranspose", "ChunkTranspose",
           "lane_rows"]

LINE_BITS = 8 * LINE_BYTES


def row_layout(line_bits: int = LINE_BITS) -> data.StructLayout:
    return data.StructLayout({"data": line_bits, "log2_ebits": 3, "lines": 7})


def line_layout(line_bits: int = LINE_BITS) -> data.StructLayout:
    return data.StructLayout({"data": line_bits, "index": 6, "last": 1})


TransposeRow = row_layout()
TransposeLine = line_layout()


class _Transpose(wiring.Component):
    """The interface both transpose units share (see module doc).

    Parameters
    ----------
    max_rows : int
        The rows of the largest square: line_bits/8 takes b8..b64, line_bits/4 adds b4,
        line_bits/16 (with ``widest`` 128) takes b16..b128.
    line_bits : int
        The width of a row and a column: 256 in both engines; the formal proofs also build
        64-bit instances of the same code, whose squares are 8x8 b8 .. 1x1 b64.
    widest : int
        The widest element in bits, 64 or 128.
    """

    def __init__(self, max_rows: int = 32, line_bits: int = LINE_BITS, widest: int = 64):
        check_choice("line_bits", line_bits, (64, 128, 256))
        check_choice("widest", widest, tuple(w for w in (64, 128) if w <= line_bits))
        # line_bits/8 rows: b8..b64; line_bits/4: b4 too; widest 128: line_bits/16 (b16..)
        check_choice("max_rows", max_rows, (line_bits // 8, line_bits // 4)
                     + ((line_bits // 16,) if widest == 128 else ()))
        self.max_rows = max_rows
        self.line_bits = line_bits
        #: the element sizes (log2 of the bits) the unit takes
        self.sizes = range((line_bits // max_rows).bit_length() - 1, widest.bit_length())
        super().__init__({"i": In(stream.Signature(row_layout(line_bits))),
                          "o": Out(stream.Signature(line_layout(line_bits)))})


def lane_rows(m: Module, data, width: int, code, cases: dict) -> list:
    """The rows of the P = ``width``/32 transpose lanes that take one W-byte beat together.

    ``cases`` maps each value of ``code`` to (e, G): the beat holds G consecutive source rows
    of S x S squares of e-bit elements (S = 256 / e), each row C elements of U squares side by
    side: U = P/G squares of C = S columns when G <= P, else one square's first C = S*P/G
    columns (a square narrower than S).  Row g's elements of square s are chunk g*U + s of
    C elements.  Lane p takes columns p, p+P, p+2P, .. of every square, each as a
    super-element of its G rows (row 0 in the low bits): C/P columns of square s, then of
    square s+1.  A lane is then a square of S/G x S/G elements of G*e bits, and its column c
    is column p + P*(c mod C/P) of square c // (C/P), all S rows: the P lanes' column c is P
    consecutive transposed lines of one square, one W-byte beat, in line order.  The one
    lane at W = 32 takes a beat of G = 1 as it is."""
    P = width // LINE_BYTES
    if P == 1 and all(G == 1 for _, G in cases.values()):
        return [data]
    rows = [Signal(LINE_BITS, name=f"lane{p}_row") for p in range(P)]
    with m.Switch(code):
        for k, (e, G) in cases.items():
            side = LINE_BITS // e
            U, C = (P // G, side) if G <= P else (1, side * P // G)
            with m.Case(k):
                for p in range(P):
                    m.d.comb += rows[p].eq(Cat(
                        data.word_select((g * U + s) * C + p + P * j, e)
                        for s in range(U) for j in range(C // P) for g in range(G)))
    return rows


class _Storage:
    """``max_rows`` rows of one line with row/column access at element granularity."""

    def __init__(self, m: Module, name: str, unit: _Transpose):
        self.bits = unit.line_bits
        self.rows = Array(Signal(self.bits, name=f"{name}_row{r}")
                          for r in range(unit.max_rows))
        # element code -> element bits: log2 bits for the element transposers, one code of
        # a whole chunk for the chunk transposer
        self.sizes = (unit.sizes if isinstance(unit.sizes, dict)
                      else {k: 1 << k for k in unit.sizes})
        self.m = m

    def write_row(self, t, value):
        self.m.d.sync += self.rows[t].eq(value)

    def write_col(self, lb, t, value):
        """Element b of ``value`` -> element t of row b."""
        m = self.m
        with m.Switch(lb):
            for k, e in self.sizes.items():
                with m.Case(k):
                    for b in range(self.bits // e):
                        m.d.sync += self.rows[b].word_select(t, e).eq(value.word_select(b, e))

    def read_col(self, lb, t):
        """Element t of every row, packed as a line."""
        m = self.m
        out = Signal(self.bits, name="col_read")
        with m.Switch(lb):
            for k, e in self.sizes.items():
                with m.Case(k):
                    m.d.comb += out.eq(Cat(self.rows[b].word_select(t, e)
                                           for b in range(self.bits // e)))
        return out


class _Alternating:
    """The control of one square of storage read while the next square is written into it,
    alternating orientation (see module doc).  A unit supplies ``_storage(m)``, the element
    code and column count of the row on ``i`` (``_code_of``, ``_lines_of``), the rows of a
    square of a code (``_side``), the packed row on ``i`` (``_row_in``) and its output
    (``_line_out(m, value)``)."""

    def elaborate(self, platform):
        m = Module()
        st = self._storage(m)

        # writer: square being written
        w_slot = Signal(7)
        w_orient = Signal()          # 0: rows, 1: columns
        w_lb = Signal(3)
        w_lines = Signal(7)
        # reader: square being read (complete)
        r_full = Signal()            # a complete square waits to be read
        r_slot = Signal(7)
        r_orient = Signal()
        r_lb = Signal(3)
        r_lines = Signal(7)

        row_lb = Mux(w_slot == 0, self._code_of(), w_lb)
        row_lines = Mux(w_slot == 0, self._lines_of(), w_lines)
        side = Signal(8)
        m.d.comb += side.eq(self._side(row_lb))

        # output: read slot r_slot of the complete square
        col = st.read_col(r_lb, r_slot)
        row = st.rows[r_slot]
        self._line_out(m, Mux(r_orient, row, col))
        m.d.comb += [
            self.o.valid.eq(r_full),
            self.o.payload.index.eq(r_slot),
            self.o.payload.last.eq(r_slot == r_lines - 1),
        ]
        reading = self.o.valid & self.o.ready
        read_done = reading & (r_slot == r_lines - 1)

        # input: slot w_slot may be overwritten once the reader is past it (or reads it now,
        # getting the old value), or when the square being read does not need it
        slot_free = (~r_full | (w_slot < r_slot) | ((w_slot == r_slot) & reading)
                     | (w_slot >= r_lines))
        same_shape = ~r_full | (row_lb == r_lb) | (w_slot != 0)
        m.d.comb += self.i.ready.eq(slot_free & same_shape)
        writing = self.i.valid & self.i.ready
        write_done = writing & (w_slot == side - 1)

        with m.If(writing):
            with m.If(w_orient):
                st.write_col(row_lb, w_slot, self._row_in())
            with m.Else():
                st.write_row(w_slot, self._row_in())
            m.d.sync += [w_lb.eq(row_lb), w_lines.eq(row_lines)]
            m.d.sync += w_slot.eq(Mux(write_done, 0, w_slot + 1))

        with m.If(reading):
            m.d.sync += r_slot.eq(Mux(read_done, 0, r_slot + 1))
        with m.If(write_done):
            # the new square becomes readable; the next one is written the other way round
            m.d.sync += [r_full.eq(1), r_orient.eq(w_orient), r_lb.eq(row_lb),
                         r_lines.eq(row_lines), w_orient.eq(~w_orient)]
        with m.Elif(read_done):
            m.d.sync += r_full.eq(0)
        # the state, for the invariants of the proof (tilecosim.formal.transpose)
        self.state = dict(rows=list(st.rows), w_slot=w_slot, w_orient=w_orient, w_lb=w_lb,
                          w_lines=w_lines, r_full=r_full, r_slot=r_slot, r_orient=r_orient,
                          r_lb=r_lb, r_lines=r_lines)
        return m


class SquareTranspose(_Alternating, _Transpose):
    """Transpose with one square of storage, alternating orientation (see module doc).

    ``max_rows`` 32 handles b8..b64 (1 KB of storage); 64 adds b4 (2 KB); ``widest`` 128
    adds b128, and with it ``max_rows`` 16 (b16..b128, 512 B; the lanes of the L1 -> L0
    engine at W = 128).
    """

    def _storage(self, m):
        return _Storage(m, "sq", self)

    def _code_of(self):
        return self.i.payload.log2_ebits

    def _lines_of(self):
        return self.i.payload.lines

    def _side(self, code):
        return self.line_bits >> code

    def _row_in(self):
        return self.i.payload.data

    def _line_out(self, m, value):
        m.d.comb += self.o.payload.data.eq(value)


class ChunkTranspose(_Alternating, wiring.Component):
    """A P x P transpose of 32-byte chunks, P = ``width`` / 32: P rows of W bytes in, up to
    P columns out, each chunk with its 32 byte-valid bits.  Column c of a square is chunk c
    of its P rows, in row order.  One square of storage (P x W bytes and P x W valid bits),
    written in alternating orientation like :class:`SquareTranspose`, so a row enters and a
    column leaves every cycle with no gap between squares.

    ``i``: rows {data (8W), valid (W), lines (the columns to emit, 1..P; from row 0),
    log2_pair (from row 0; W = 128 only)}; ``o``: columns {data, valid, index, last}.  With
    ``log2_pair`` 1 a square is P/2 rows of P/2 super-chunks of two chunks each: column c is
    super-chunk c of its rows (a row's chunks 2c and 2c+1, then the next row's).  Latency: the
    first column leaves one cycle after the square's last row enters.

    Parameters
    ----------
    width : int
        W, the bytes of a row: 64 or 128 (P = 2 or 4).
    """

    def __init__(self, width: int = 64):
        check_choice("width", width, (64, 128))
        self.width = width
        self.chunks = width // LINE_BYTES
        self.chunk_bits = 8 * LINE_BYTES + LINE_BYTES
        self.max_rows = self.chunks
        self.line_bits = self.chunks * self.chunk_bits
        self.paired = self.chunks == 4                   # super-chunks of two (W = 128)
        self.sizes = {0: self.chunk_bits}
        row = {"data": 8 * width, "valid": width, "lines": 3}
        if self.paired:
            self.sizes[1] = 2 * self.chunk_bits
            row["log2_pair"] = 1
        super().__init__({
            "i": In(stream.Signature(data.StructLayout(row))),
            "o": Out(stream.Signature(data.StructLayout(
                {"data": 8 * width, "valid": width, "index": 2, "last": 1}))),
        })

    def _storage(self, m):
        return _Storage(m, "chunk", self)

    def _code_of(self):
        return self.i.payload.log2_pair if self.paired else 0

    def _lines_of(self):
        return self.i.payload.lines

    def _side(self, code):
        return self.chunks >> code

    def _row_in(self):
        i, c = self.i.payload, 8 * LINE_BYTES
        return Cat(Cat(i.data.word_select(k, c), i.valid.word_select(k, LINE_BYTES))
                   for k in range(self.chunks))

    def _line_out(self, m, value):
        c, b = 8 * LINE_BYTES, self.chunk_bits
        chunks = [value[k * b:(k + 1) * b] for k in range(self.chunks)]
        m.d.comb += [self.o.payload.data.eq(Cat(ch[:c] for ch in chunks)),
                     self.o.payload.valid.eq(Cat(ch[c:] for ch in chunks))]


class NaiveTranspose(_Transpose):
    """Fill-then-drain transpose: S rows in, then the lines out; no overlap."""

    def elaborate(self, platform):
        m = Module()
        st = _Storage(m, "naive", self)
        slot = Signal(7)
        draining = Signal()
        lb = Signal(3)
        lines = Signal(7)
        row_lb = Mux(slot == 0, self.i.payload.log2_ebits, lb)
        side = Signal(8)
        m.d.comb += side.eq(self.line_bits >> row_lb)
        m.d.comb += [
            self.i.ready.eq(~draining),
            self.o.valid.eq(draining),
            self.o.payload.data.eq(st.read_col(lb, slot)),
            self.o.payload.index.eq(slot),
            self.o.payload.last.eq(slot == lines - 1),
        ]
        with m.If(self.i.valid & self.i.ready):
            st.write_row(slot, self.i.payload.data)
            with m.If(slot == 0):
                m.d.sync += [lb.eq(self.i.payload.log2_ebits), lines.eq(self.i.payload.lines)]
            with m.If(slot == side - 1):
                m.d.sync += [slot.eq(0), draining.eq(1)]
            with m.Else():
                m.d.sync += slot.eq(slot + 1)
        with m.If(self.o.valid & self.o.ready):
            with m.If(slot == lines - 1):
                m.d.sync += [slot.eq(0), draining.eq(0)]
            with m.Else():
                m.d.sync += slot.eq(slot + 1)
        return m
