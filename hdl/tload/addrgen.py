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
        last = self._accept(m, busy, finishing)
        self._output(m, cur, busy, k, q, run, finishing)
        with m.If(self.started):       # after the output stage: takes precedence
            m.d.sync += [cur.eq(self.i.payload), busy.eq(1), k.eq(0), q.eq(0),
                         last["kind"].eq(last["d_kind"]),
                         last["log2_esize"].eq(self.i.payload.log2_esize),
                         last["valid"].eq(1)]
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
        minor_off = Mux(dn, k << cur.log2_rows, k << cur.log2_cols)
        r = {name: Signal(width, name=name) for name, width in (
            ("major", 24), ("minor", 24), ("major0", 24), ("nel", 8), ("line", 20),
            ("line_off", log2_w), ("line_end", 1), ("kind", 2), ("a", 6), ("step", 5))}
        major, minor, major0, nel, line = r["major"], r["minor"], r["major0"], r["nel"], r["line"]
        line_off, line_end, kind, a = r["line_off"], r["line_end"], r["kind"], r["a"]
        rsh = Signal(5)                        # NORM: log2 runs per row
        esh = Signal(3)                        # NORM: log2 elements per run
        gsh = Signal(5)                        # transpose: log2 groups per fractal row/column
        log2_rq = Signal(3)                    # transpose: log2 runs per group (S / G)
        m.d.comb += log2_rq.eq(log2_side - cur.log2_stack)
        log2_rq_major = Signal(5)              # ND2NZ, DN2ZN: log2 runs per fractal block
        with m.Switch(cur.layout):
            with m.Case(TLoadLayout.NORM):
                lrl = cur.log2_lines
                m.d.comb += [rsh.eq(cur.log2_cols + log2_esize - lrl), esh.eq(lrl - log2_esize)]
                m.d.comb += [
                    major.eq(q >> rsh),
                    minor.eq(minor_off + ((q & _mask(rsh)) << esh)),
                    nel.eq(1 << esh),
                    line.eq(((q << lrl) >> log2_w) << (log2_w - LOG2_LINE)),
                    line_off.eq((q << lrl)[:log2_w]),
                    line_end.eq(((q + 1) << lrl)[:log2_w] == 0),
                ]
            # lane l of run q is fractal line major of the fractal column (row) block
            # (q >> M) * lanes + l: line ((q >> M) * lanes + l) << M | major
            # stacked (G rows a run): run q is rows G * (q mod R/G) .. of block q // (R/G)
            # (ND2NZ: R = rows; DN2ZN: R = columns)
            with m.Case(TLoadLayout.ND2NZ, TLoadLayout.DN2ZN):
                rq, ax = log2_rq_major, Mux(dn, cur.log2_cols, cur.log2_rows)
                m.d.comb += [rq.eq(ax - cur.log2_stack),
                             major.eq((q & _mask(rq)) << cur.log2_stack),
                             minor.eq(minor_off + ((q >> rq) << log2_span)),
                             nel.eq(1 << log2_span), line_end.eq(1), kind.eq(self.kind_of(cur.layout)),
                             line.eq(((q >> rq) << (ax + lanes)) | major), r["step"].eq(ax)]
            with m.Case(TLoadLayout.ND2ZN):
                g = q >> log2_rq
                m.d.comb += gsh.eq(cur.log2_cols - cur.log2_lines - lanes)
                fi = g >> gsh
                jg = g & _mask(gsh)
                m.d.comb += [kind.eq(KIND_TRANSPOSE), a.eq((q & _mask(log2_rq)) << cur.log2_stack),
                             major0.eq(fi << log2_side),
                             major.eq((fi << log2_side) + a),
                             minor.eq(minor_off + (jg << (cur.log2_lines + lanes))),
                             nel.eq(1 << (cur.log2_lines + lanes)),
                             line.eq((fi << cur.log2_cols) + (jg << (cur.log2_lines + lanes)))]
            with m.Case(TLoadLayout.DN2NZ):
                g = q >> log2_rq
                m.d.comb += gsh.eq(cur.log2_rows - cur.log2_lines - lanes)
                fj = g >> gsh
                ig = g & _mask(gsh)
                m.d.comb += [kind.eq(KIND_TRANSPOSE), a.eq((q & _mask(log2_rq)) << cur.log2_stack),
                             major0.eq(fj << log2_side),
                             major.eq((fj << log2_side) + a),
                             minor.eq(minor_off + (ig << (cur.log2_lines + lanes))),
                             nel.eq(1 << (cur.log2_lines + lanes)),
                             line.eq((fj << cur.log2_rows) + (ig << (cur.log2_lines + lanes)))]
        flat_valid = self._flat_run(m, cur, q, r)
        span = _clamp(m, cur.valid_minor - minor, nel, "valid_elems")
        r["span"] = span
        r["velems"] = Mux(cur.flat, flat_valid >> log2_esize,
                          Mux(major < cur.valid_major, span, 0))
        r["av"] = _clamp(m, cur.valid_major - major0, LINE_BYTES >> log2_esize, "valid_runs")
        return r

    def _flat_run(self, m, cur, q, r):
        """A flat tile (see the decoder): run q is bytes q*W .. q*W+W-1 of the tile and of
        the source (overriding the layout's walk); returns its valid bytes, those before
        ``flat_bytes``."""
        log2_w = self.width.bit_length() - 1
        flat_esh = Signal(3)                   # log2 elements of a W-byte run
        m.d.comb += flat_esh.eq(log2_w - cur.log2_esize)
        with m.If(cur.flat):
            m.d.comb += [r["kind"].eq(KIND_DIRECT), r["major"].eq(0), r["major0"].eq(0),
                         r["minor"].eq(q << flat_esh), r["nel"].eq(1 << flat_esh),
                         r["line"].eq(q << self.log2_p), r["line_off"].eq(0),
                         r["line_end"].eq(1)]
        return _clamp(m, cur.flat_bytes - (q << log2_w), self.width, "flat_valid")

    def _accept(self, m, busy, finishing):
        """Take an instruction when idle, or in the cycle the current one ends: a faulting
        one once nothing is in flight, a legal one unless it changes the run kind or the
        element size while runs are in flight.  Returns the registers of the last
        instruction's kind, for the start of the next."""
        last = {"kind": Signal(2, name="last_kind"), "log2_esize": Signal(2, name="last_log2_esize"),
                "valid": Signal(name="have_last")}
        d = self.i.payload
        d_kind = Mux(d.flat, KIND_DIRECT, self.kind_of(d.layout))
        last["d_kind"] = d_kind
        same_kind = (d_kind == last["kind"]) & (d.log2_esize == last["log2_esize"])
        compatible = ~last["valid"] | same_kind | self.idle
        m.d.comb += self.fault.payload.eq(d.fault)
        free = ~busy | finishing
        with m.If(free & self.i.valid):
            with m.If(d.fault != FaultCode.NONE):
                m.d.comb += self.fault.valid.eq(self.idle & ~busy)
                m.d.comb += self.i.ready.eq(self.idle & ~busy & self.fault.ready)
            with m.Elif(compatible):
                m.d.comb += [self.i.ready.eq(1), self.started.eq(1)]
        return last

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
            major, minor = run["major"], run["minor"]
            m.d.sync += [
                self.o.valid.eq(1),
                o.addr.eq(cur.base + major * cur.stride + (minor << log2_esize)),
                o.read_bytes.eq((run["velems"] << log2_esize) << cur.log2_stack),
                o.kind.eq(run["kind"]), o.tile.eq(k), o.line.eq(run["line"]),
                o.line_off.eq(run["line_off"]), o.line_end.eq(run["line_end"]),
                o.group_end.eq(Mux(run["kind"] == KIND_CHUNK,       # P/G runs a square
                                   (q & _mask(chunk_rows)) == _mask(chunk_rows),
                                   run["a"] == (LINE_BYTES >> log2_esize) - (1 << cur.log2_stack))),
                o.log2_lines.eq(cur.log2_lines), o.valid_lines.eq(run["span"]),
                o.log2_lanes.eq(cur.log2_lanes), o.log2_stack.eq(cur.log2_stack),
                o.log2_step.eq(run["step"]),
                o.valid_elems.eq(run["av"]), o.log2_esize.eq(log2_esize),
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
