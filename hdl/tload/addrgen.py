"""Fractal address generator: one source run per cycle, in destination order.

A *line* is 32 bytes of a destination tile: a fractal row (NZ), a fractal column
(ZN) or a row segment (ND).  The generator walks the destination lines of output
tile 0, 1, .. n-1 and emits, one per cycle, the *runs* that fill them:

* NORM -- a run is a row or W bytes of it (W the beat width; a beat of rows narrower than
  W takes W/rowbytes runs);
* ND2NZ, DN2ZN -- a run is the same fractal row of U fractals side by side (U =
  2**log2_lanes <= W/32, 1 at W = 32): line ``major`` of each, its lanes; at W > 32 the
  runs go to the chunk transposer, P rows at a time (a dense tile whose rows are narrower
  than W: G rows a run, P/G runs);
* ND2ZN, DN2NZ -- a group of L lines (L = min(S, tile extent), S = 32/esize) of each of U
  squares side by side is the transpose of S source runs of U * L elements: the runs go
  to the transpose lanes; a dense tile whose rows are narrower than W (the decoder's
  ``log2_stack``) reads G = 2**log2_stack rows a run, S/G runs a group;
* a flat tile (see the decoder) -- run q is bytes q*W .. q*W + W - 1 of tile and source.

Each run carries its memory address, how many of its bytes are valid (0: a
padding-only run, no memory request), where its bytes land (tile, line, byte
offset), and for a transpose group its validity extents (``valid_lines`` lines hold
data, each in its first ``valid_elems`` elements).  All tile dimensions are powers of
two (see the decoder), so the loop indices are bit fields of one run counter.

Stages of ``elaborate``: the run of the loop indices (per layout), accepting an
instruction, the output register.

Throughput: one run per cycle.  Latency: one cycle from a decoded instruction to
its first run.  Faulting instructions produce no run: they leave on ``fault``.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import LINE_BYTES, FaultCode, check_width
from tilecosim.hdl.tload.decode import LOG2_LINE, Decoded
from tilecosim.hdl.tload.types import TLoadLayout

__all__ = ["FractalAddressGenerator", "Run", "KIND_DIRECT", "KIND_TRANSPOSE", "KIND_CHUNK"]

KIND_DIRECT, KIND_TRANSPOSE = 0, 1

KIND_CHUNK = 2


def Run(width: int = LINE_BYTES) -> data.StructLayout:
    """A run of the generator at beat width ``width``."""
    wbits = width.bit_length()
    return data.StructLayout({
        "addr": 64,
        "read_bytes": wbits,  # valid bytes to read from addr (0: no request)
        "kind": 2,            # KIND_DIRECT / KIND_TRANSPOSE / KIND_CHUNK
        "tile": 3,
        "line": 13,           # direct: first line of the destination beat; otherwise the line
                              # of lane 0 (chunk) or the first line of the group (transpose)
        "line_off": wbits - 1,  # direct: byte offset of the run inside its beat
        "line_end": 1,        # direct: last run of its beat
        "group_end": 1,       # transpose: last run of its square; chunk: of its P rows
        "log2_lines": 3,      # transpose: log2 lines of the group
        "log2_lanes": 2,      # chunk, transpose: log2 lanes of the run
        "log2_stack": 2,      # transpose, chunk: log2 source rows of the run (G)
        "log2_step": 5,       # chunk: log2 lines from one lane's lines to the next
        "valid_lines": 8,     # transpose: elements of the run holding data (all its lanes)
        "valid_elems": 6,     # transpose: valid elements in each of those lines
        "log2_esize": 2,
        "pattern": 64,
        "null": 1,
        "instr_last": 1,      # last run of the instruction
    })


def _mask(width_sig):
    return (1 << width_sig) - 1


def _clamp(m, value, hi, name):
    out = Signal(8, name=name)
    with m.If(value <= 0):
        m.d.comb += out.eq(0)
    with m.Elif(value >= hi):
        m.d.comb += out.eq(hi)
    with m.Else():
        m.d.comb += out.eq(value)
    return out


class _Walk:
    """The terms of one run, each a named signal (the ``walk_*`` nets of the Verilog).

    Not one StructLayout: ``line`` reads ``major`` and ``valid_lines`` reads ``minor``, and
    fields of one packed vector that feed each other make a combinational loop at the
    vector level (Verilator's UNOPTFLAT)."""

    def __init__(self, log2_w: int):
        def sig(width, name):
            return Signal(width, name=f"walk_{name}")
        self.major = sig(24, "major")      # source row (ND) / column (DN) of the first element
        self.minor = sig(24, "minor")      # its element index along that row (column)
        self.square_major = sig(24, "square_major")  # transpose: first row of the square
        self.row_in_square = sig(6, "row_in_square")  # transpose: the run's row in it
        self.run_elems = sig(8, "run_elems")  # elements a run spans along the minor axis
        self.line = sig(20, "line")        # destination line (see Run.line)
        self.line_off = sig(log2_w, "line_off")  # direct: byte offset in its beat
        self.line_end = sig(1, "line_end")  # direct: last run of its beat
        self.kind = sig(2, "kind")
        self.log2_step = sig(5, "log2_step")  # chunk: log2 lines between lanes' lines
        # set after the walk, from its terms
        self.valid_lines = None            # transpose: elements of the run holding data
        self.read_elems = None             # elements read from memory (0: padding only)
        self.valid_elems = None            # transpose: valid elements in each line


class FractalAddressGenerator(wiring.Component):
    """Decoded TLOADs in, runs out (see module doc).

    ``idle`` (in) tells that nothing is in flight downstream: a faulting
    instruction waits for it before reporting, so completions stay in order, and an
    instruction whose run kind or element size differs from the previous one waits
    for it too (the transpose unit holds one element size at a time).

    Parameters
    ----------
    width : int
        Bytes of a line, the largest request (32, 64 or 128).
    """

    def __init__(self, width: int = LINE_BYTES):
        check_width(width)
        self.width = width
        self.log2_p = (width // LINE_BYTES).bit_length() - 1      # log2 lanes of a beat
        super().__init__({
            "i": In(stream.Signature(Decoded)),
            "o": Out(stream.Signature(Run(width))),
            "fault": Out(stream.Signature(FaultCode)),
            "started": Out(1),               # pulses when a legal instruction starts
            "idle": In(1),
        })

    def kind_of(self, layout):
        """The run kind of a layout signal: transposing layouts through the transpose unit;
        at W > 32 ND2NZ and DN2ZN through the chunk transposer; the rest direct."""
        if self.log2_p == 0:
            return TLoadLayout.where(layout, "transposing")
        return Mux(TLoadLayout.where(layout, "transposing"), KIND_TRANSPOSE,
                   Mux(layout == TLoadLayout.NORM, KIND_DIRECT, KIND_CHUNK))

    def elaborate(self, platform):
        m = Module()
        cur = Signal(Decoded)          # the instruction being walked
        busy = Signal()
        k = Signal(4)                  # output tile
        q = Signal(20)                 # run within the tile
        finishing = Signal()           # the current instruction's last run leaves now
        run = self._run_of(m, cur, k, q)
        self._accept(m, busy, finishing)
        self._output(m, cur, busy, k, q, run, finishing)
        with m.If(self.started):       # after the output stage: takes precedence
            m.d.sync += [cur.eq(self.i.payload), busy.eq(1), k.eq(0), q.eq(0)]
        return m

    def _run_of(self, m, cur, k, q):
        """The run of tile ``k``, index ``q``: where it reads and where it lands."""
        log2_esize = cur.log2_esize
        log2_side = Signal(3)                  # elements per line: S = 32 / esize
        m.d.comb += log2_side.eq(LOG2_LINE - log2_esize)
        log2_w = self.width.bit_length() - 1
        lanes = cur.log2_lanes
        log2_span = Signal(4)                  # ND2NZ, DN2ZN: log2 elements of a run
        m.d.comb += log2_span.eq(log2_side + lanes)
        dn = TLoadLayout.where(cur.layout, "source_dn")
        tile_minor = Mux(dn, k << cur.log2_rows, k << cur.log2_cols)   # tile k's first element
        w = _Walk(log2_w)
        with m.Switch(cur.layout):
            with m.Case(TLoadLayout.NORM):
                self._walk_norm(m, cur, q, w, tile_minor)
            with m.Case(TLoadLayout.ND2NZ, TLoadLayout.DN2ZN):
                self._walk_fractal_rows(m, cur, q, w, tile_minor, dn, log2_span)
            with m.Case(TLoadLayout.ND2ZN):
                self._walk_squares(m, cur, q, w, tile_minor, log2_side,
                                   cur.log2_cols, "nd2zn")
            with m.Case(TLoadLayout.DN2NZ):
                self._walk_squares(m, cur, q, w, tile_minor, log2_side,
                                   cur.log2_rows, "dn2nz")
        flat_valid = self._flat_run(m, cur, q, w)
        w.valid_lines = _clamp(m, cur.valid_minor - w.minor, w.run_elems, "valid_elems")
        w.read_elems = Mux(cur.flat, flat_valid >> log2_esize,
                           Mux(w.major < cur.valid_major, w.valid_lines, 0))
        w.valid_elems = _clamp(m, cur.valid_major - w.square_major,
                               LINE_BYTES >> log2_esize, "valid_runs")
        return w

    def _walk_norm(self, m, cur, q, w, tile_minor):
        """NORM: run q is bytes of a row, 2**log2_lines of them (a row, W bytes of it, or
        rows narrower than W side by side in one beat)."""
        log2_w = self.width.bit_length() - 1
        log2_run_bytes = cur.log2_lines
        log2_runs_per_row = Signal(5)
        log2_run_elems = Signal(3)
        m.d.comb += [log2_runs_per_row.eq(cur.log2_cols + cur.log2_esize - log2_run_bytes),
                     log2_run_elems.eq(log2_run_bytes - cur.log2_esize)]
        m.d.comb += [
            w.major.eq(q >> log2_runs_per_row),
            w.minor.eq(tile_minor + ((q & _mask(log2_runs_per_row)) << log2_run_elems)),
            w.run_elems.eq(1 << log2_run_elems),
            w.line.eq(((q << log2_run_bytes) >> log2_w) << (log2_w - LOG2_LINE)),
            w.line_off.eq((q << log2_run_bytes)[:log2_w]),
            w.line_end.eq(((q + 1) << log2_run_bytes)[:log2_w] == 0),
        ]

    def _walk_fractal_rows(self, m, cur, q, w, tile_minor, dn, log2_span):
        """ND2NZ, DN2ZN: lane l of run q is fractal line ``major`` of the fractal column
        (ND2NZ; row for DN2ZN) block (q >> B) * lanes + l, its line
        ((q >> B) * lanes + l) << log2_block_lines | major, with 2**B runs a block.  Stacked
        (G rows a run): run q is rows G * (q mod R/G) .. of block q // (R/G) (R: the rows of
        ND2NZ, the columns of DN2ZN)."""
        log2_runs_per_block = Signal(5)
        log2_block_lines = Mux(dn, cur.log2_cols, cur.log2_rows)
        block = q >> log2_runs_per_block
        m.d.comb += [log2_runs_per_block.eq(log2_block_lines - cur.log2_stack),
                     w.major.eq((q & _mask(log2_runs_per_block)) << cur.log2_stack),
                     w.minor.eq(tile_minor + (block << log2_span)),
                     w.run_elems.eq(1 << log2_span), w.line_end.eq(1),
                     w.kind.eq(self.kind_of(cur.layout)),
                     w.line.eq((block << (log2_block_lines + cur.log2_lanes)) | w.major),
                     w.log2_step.eq(log2_block_lines)]

    def _walk_squares(self, m, cur, q, w, tile_minor, log2_side, log2_tile_lines, layout):
        """ND2ZN, DN2NZ: the groups of one square of each of U squares side by side, S/G
        runs a group.  ``log2_tile_lines`` is the fractal lines of the tile (columns of
        ND2ZN, rows of DN2NZ); a group is ``log2_lines`` of them, so 2**G' groups (G' =
        log2_tile_lines - log2_lines - log2_lanes) cross the tile, and group g is group
        g mod 2**G' of fractal block g >> G'."""
        log2_runs_per_group = Signal(3)        # S / G
        log2_groups = Signal(5, name=f"{layout}_log2_groups")
        m.d.comb += [log2_runs_per_group.eq(log2_side - cur.log2_stack),
                     log2_groups.eq(log2_tile_lines - cur.log2_lines - cur.log2_lanes)]
        group = q >> log2_runs_per_group
        block = group >> log2_groups           # the fractal block: S source rows (columns)
        group_in_block = group & _mask(log2_groups)
        log2_group_elems = cur.log2_lines + cur.log2_lanes
        m.d.comb += [w.kind.eq(KIND_TRANSPOSE),
                     w.row_in_square.eq((q & _mask(log2_runs_per_group)) << cur.log2_stack),
                     w.square_major.eq(block << log2_side),
                     w.major.eq((block << log2_side) + w.row_in_square),
                     w.minor.eq(tile_minor + (group_in_block << log2_group_elems)),
                     w.run_elems.eq(1 << log2_group_elems),
                     w.line.eq((block << log2_tile_lines)
                               + (group_in_block << log2_group_elems))]

    def _flat_run(self, m, cur, q, w):
        """A flat tile (see the decoder): run q is bytes q*W .. q*W+W-1 of the tile and of
        the source (overriding the layout's walk); returns its valid bytes, those before
        ``flat_bytes``."""
        log2_w = self.width.bit_length() - 1
        log2_flat_elems = Signal(3)            # log2 elements of a W-byte run
        m.d.comb += log2_flat_elems.eq(log2_w - cur.log2_esize)
        with m.If(cur.flat):
            m.d.comb += [w.kind.eq(KIND_DIRECT), w.major.eq(0), w.square_major.eq(0),
                         w.minor.eq(q << log2_flat_elems), w.run_elems.eq(1 << log2_flat_elems),
                         w.line.eq(q << self.log2_p), w.line_off.eq(0), w.line_end.eq(1)]
        return _clamp(m, cur.flat_bytes - (q << log2_w), self.width, "flat_valid")

    def _accept(self, m, busy, finishing):
        """Take an instruction when idle, or in the cycle the current one ends: a faulting
        one once nothing is in flight, a legal one unless it changes the run kind or the
        element size while runs are in flight (the last started instruction's kind and
        element size are kept for that)."""
        last_kind = Signal(2)
        last_log2_esize = Signal(2)
        have_last = Signal()
        d = self.i.payload
        d_kind = Mux(d.flat, KIND_DIRECT, self.kind_of(d.layout))
        with m.If(self.started):
            m.d.sync += [last_kind.eq(d_kind), last_log2_esize.eq(d.log2_esize),
                         have_last.eq(1)]
        same_kind = (d_kind == last_kind) & (d.log2_esize == last_log2_esize)
        compatible = ~have_last | same_kind | self.idle
        m.d.comb += self.fault.payload.eq(d.fault)
        free = ~busy | finishing
        with m.If(free & self.i.valid):
            with m.If(d.fault != FaultCode.NONE):
                m.d.comb += self.fault.valid.eq(self.idle & ~busy)
                m.d.comb += self.i.ready.eq(self.idle & ~busy & self.fault.ready)
            with m.Elif(compatible):
                m.d.comb += [self.i.ready.eq(1), self.started.eq(1)]

    def _output(self, m, cur, busy, k, q, run, finishing):
        """The output register: one run per cycle while busy and not back-pressured."""
        log2_esize = cur.log2_esize
        last_q = q == _mask(cur.log2_runs)
        last_k = k == cur.n - 1
        advance = busy & (~self.o.valid | self.o.ready)
        chunk_rows = Signal(2)                 # chunk: log2 runs of a square, P / G
        m.d.comb += chunk_rows.eq(self.log2_p - cur.log2_stack)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(advance):
            o = self.o.payload
            major, minor = run.major, run.minor
            m.d.sync += [
                self.o.valid.eq(1),
                o.addr.eq(cur.base + major * cur.stride + (minor << log2_esize)),
                o.read_bytes.eq((run.read_elems << log2_esize) << cur.log2_stack),
                o.kind.eq(run.kind), o.tile.eq(k), o.line.eq(run.line),
                o.line_off.eq(run.line_off), o.line_end.eq(run.line_end),
                o.group_end.eq(Mux(run.kind == KIND_CHUNK,       # P/G runs a square
                                   (q & _mask(chunk_rows)) == _mask(chunk_rows),
                                   run.row_in_square == (LINE_BYTES >> log2_esize) - (1 << cur.log2_stack))),
                o.log2_lines.eq(cur.log2_lines), o.valid_lines.eq(run.valid_lines),
                o.log2_lanes.eq(cur.log2_lanes), o.log2_stack.eq(cur.log2_stack),
                o.log2_step.eq(run.log2_step),
                o.valid_elems.eq(run.valid_elems), o.log2_esize.eq(log2_esize),
                o.pattern.eq(cur.pattern), o.null.eq(cur.null),
                o.instr_last.eq(last_q & last_k),
            ]
            with m.If(last_q):
                m.d.sync += [q.eq(0), k.eq(k + 1)]
                with m.If(last_k):
                    m.d.comb += finishing.eq(1)
                    m.d.sync += busy.eq(0)
            with m.Else():
                m.d.sync += q.eq(q + 1)
