"""The square transposer against a scoreboard, proved for every length of input.

Every row that enters is kept by the harness, and every column that leaves must be the
transpose of its square's rows, with the columns of each square numbered 0..lines-1 and
``last`` on the final one.  Row data, element sizes, column counts and the back-pressure of
both streams are arbitrary in every step; squares of different sizes follow each other in any
order.  The input keeps to what the engines send: a supported size and 1..S columns on the
first row of a square (``lines`` 0 would let the next square overwrite the one being read).

The proof is by k-induction, so it holds at every depth, not only to a bound.  Its invariants
say where each element of the square being read and of the square being written sits in the
unit's storage (the state :class:`~tilecosim.hdl.transpose.SquareTranspose` records for
them): a square written as rows (even squares) has input row ``r`` in storage row ``r``, one
written as columns (odd squares) in storage column ``r``; the writer is never past the
reader; and a square of another size waits until the one being read is drained.  The unit
keeps one square, so the scoreboard holds two: the one being read and the one being written.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Mux, Signal, Value

from tilecosim.hdl.transpose import SquareTranspose

from .common import Harness

__all__ = ["transpose_scoreboard"]

COUNT_BITS = 4                    # squares counted modulo 16; at most two are in flight


def _all(conds) -> Value:
    conds = list(conds)
    return Cat(*conds).all() if conds else Const(1)


def transpose_scoreboard(line_bits: int, sizes) -> Harness:
    """Squares of the element sizes ``sizes`` (log2 bits) through a ``line_bits`` unit (the
    one that takes b4 when 2 is in ``sizes``)."""
    sizes = sorted(set(sizes))
    h = Harness()
    m = h.m
    b4 = 2 in sizes
    dut = SquareTranspose(max_rows=line_bits // (4 if b4 else 8), line_bits=line_bits)
    bad = [k for k in sizes if k not in dut.sizes]
    if bad or not sizes:
        raise ValueError(f"sizes={sizes}: not sizes of a {line_bits}-bit unit")
    m.submodules.dut = dut.elaborate(None)       # elaborated here: its state is then known
    dut._MustUse__used = True                    # (its module is what the harness holds)
    st = dut.state
    i, o = dut.i, dut.o
    h.free(i.valid, i.payload, o.ready)
    h.stream(i, "in", "i")
    h.stream(o, "out", "o")
    side_of = {k: line_bits >> k for k in sizes}
    max_side = max(side_of.values())
    log2_max = max_side.bit_length() - 1

    # the input side: row within the square, square count, the square's size and columns
    in_row, in_sq = Signal(7, name="in_row"), Signal(COUNT_BITS, name="in_sq")
    lbs = Array(Signal(3, name=f"sq{p}_lb") for p in range(2))
    lines = Array(Signal(7, name=f"sq{p}_lines") for p in range(2))
    q = in_sq[0]                                 # the parity of the square being written
    first = in_row == 0
    lb_now = Mux(first, i.payload.log2_ebits, lbs[q])
    side = Signal(8, name="in_side")
    m.d.comb += side.eq(line_bits >> lb_now)
    with m.If(i.valid & first):
        h.assume(i.payload.log2_ebits.matches(*sizes), "legal_size")
        h.assume((i.payload.lines >= 1) & (i.payload.lines <= side), "legal_lines")
    accept = i.valid & i.ready
    with m.If(accept):
        m.d.sync += in_row.eq(Mux(in_row == side - 1, 0, in_row + 1))
        with m.If(in_row == side - 1):
            m.d.sync += in_sq.eq(in_sq + 1)
        with m.If(first):
            m.d.sync += [lbs[q].eq(i.payload.log2_ebits), lines[q].eq(i.payload.lines)]

    # the scoreboard: the rows of the last two squares, by square parity
    sb = [[Signal(line_bits, name=f"sb{p}_row{r}") for r in range(max_side)] for p in range(2)]
    with m.If(accept):
        with m.Switch(Cat(in_row[:log2_max], q)):
            for p in range(2):
                for r in range(max_side):
                    with m.Case(r | (p << log2_max)):
                        m.d.sync += sb[p][r].eq(i.payload.data)

    # the output side and the property: each column is the transpose of its square's rows
    out_col, out_sq = Signal(7, name="out_col"), Signal(COUNT_BITS, name="out_sq")
    p = out_sq[0]                                # the parity of the square being read
    take = o.valid & o.ready
    with m.If(take):
        m.d.sync += out_col.eq(Mux(o.payload.last, 0, out_col + 1))
        with m.If(o.payload.last):
            m.d.sync += out_sq.eq(out_sq + 1)

    def elem(row, b, k):
        e = 1 << k
        return row[b * e:(b + 1) * e]

    expect = Signal(line_bits, name="expect")
    with m.Switch(Cat(out_col[:log2_max], p)):
        for par in range(2):
            for c in range(max_side):
                with m.Case(c | (par << log2_max)):
                    with m.Switch(lbs[par]):
                        for k in sizes:
                            if c < side_of[k]:
                                with m.Case(k):
                                    m.d.comb += expect.eq(Cat(elem(sb[par][r], c, k)
                                                              for r in range(side_of[k])))
    ahead = Signal(COUNT_BITS, name="ahead")
    m.d.comb += ahead.eq(in_sq - out_sq)
    with m.If(h.live & o.valid):
        h.check(ahead != 0, "no_column_before_its_square")
        h.check(o.payload.index == out_col, "column_index")
        h.check(o.payload.last == (out_col == lines[p] - 1), "last_column")
        h.check(o.payload.data == expect, "column_is_the_transpose")

    # the invariants
    w_slot, r_slot, r_lines, r_full = st["w_slot"], st["r_slot"], st["r_lines"], st["r_full"]

    def side_ok(lb, n):
        return _all([lb.matches(*sizes), n >= 1, n <= (line_bits >> lb)])

    with m.If(h.live):
        h.check(_all([ahead <= 1, r_full == (ahead == 1), w_slot == in_row,
                      st["w_orient"] == q]), "inv_writer")
        with m.If(w_slot != 0):
            h.check(_all([st["w_lb"] == lbs[q], st["w_lines"] == lines[q],
                          side_ok(lbs[q], lines[q]), in_row < (line_bits >> lbs[q])]),
                    "inv_writer_square")
        with m.If(r_full):
            h.check(_all([st["r_orient"] == p, r_slot == out_col, r_slot < r_lines,
                          r_lines == lines[p], st["r_lb"] == lbs[p], side_ok(lbs[p], lines[p]),
                          w_slot <= r_slot, (w_slot == 0) | (lbs[q] == lbs[p])]),
                    "inv_reader")
        with m.Else():
            h.check((r_slot == 0) & (out_col == 0), "inv_reader_idle")
        rows = st["rows"]
        for k in sizes:
            s = side_of[k]
            for par in range(2):
                written, unread = [], []
                for a in range(s):
                    for b in range(s):
                        here = elem(rows[a], b, k)
                        if par == 0:      # as rows: storage row a is input row a
                            want = elem(sb[0][a], b, k)
                            written.append(~(a < w_slot) | (here == want))
                            unread.append(~((b >= r_slot) & (b < r_lines)) | (here == want))
                        else:             # as columns: storage column b is input row b
                            want = elem(sb[1][b], a, k)
                            written.append(~(b < w_slot) | (here == want))
                            unread.append(~((a >= r_slot) & (a < r_lines)) | (here == want))
                with m.If((q == par) & (lbs[q] == k)):
                    h.check(_all(written), f"inv_b{1 << k}_written_as_{('rows', 'columns')[par]}")
                with m.If(r_full & (p == par) & (lbs[p] == k)):
                    h.check(_all(unread), f"inv_b{1 << k}_unread_as_{('rows', 'columns')[par]}")

    # not vacuous: for each size, a full square leaves after one of the same size (both
    # orientations), and after one of another size; back-pressure on both sides (the stream
    # covers)
    last_out = h.live & take & o.payload.last
    for k in sizes:
        full = lines[p] == side_of[k]
        h.cover(last_out & (out_sq == 1) & (lbs[0] == k) & (lbs[1] == k) & full,
                f"b{1 << k}_second_full_square")
        if len(sizes) > 1:
            h.cover(last_out & (out_sq == 1) & (lbs[0] != k) & (lbs[1] == k),
                    f"b{1 << k}_after_another_size")
    return h
