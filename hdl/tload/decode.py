"""TLOAD decoder: checks an instruction and derives its geometry, in one cycle.

Every output tile of a legal TLOAD holds R_out x C_out elements with
R_out * C_out * esize = Size, and Size is a power of two -- so R_out and the row
width C_out * esize are powers of two too (D3, D6).  The decoder therefore needs
no divider: it finds p with ``Col*esize == n << p`` (ND source) or
``Col*esize == 1 << p`` (DN source) with a bank of comparators, and everything
downstream works with log2 sizes (shifts and masks).

Checks, with the fault the golden model raises for them (D8), in priority order:

* IllegalInstruction -- n outside 1..8, a destination queue other than T/U/M/N, an
  unknown data-type code;
* IllegalParameter -- a Size that is not a power of two >= 256 inside the LCFR
  range, Sizes that differ, Col = 0, ValidCol > Col, Row not a whole number or a
  band split that does not divide, ValidRow > Row, the NZ/ZN shape rule per tile;
* OutOfBounds -- the last byte of the valid block at or past ``mem_size``.

Stages of ``elaborate``: data type, instruction checks, geometry, memory bounds, the fault,
runs per tile, output.

Latency 1 cycle (registered output) or 0 (``registered=False``: combinational, as the
engine uses it, the address generator registering the result); one instruction per cycle;
``i.ready`` follows ``o.ready``.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import LINE_BYTES, FaultCode, check_choice, check_width, first_fault
from tilecosim.hdl.tload.dtype_rom import DTYPE_ROM, pad_pattern
from tilecosim.hdl.tload.types import MAX_OUTPUTS, PadValue, TileQueue, TLoadInstr, TLoadLayout

__all__ = ["TLoadDecoder", "Decoded", "MAX_LOG_SIZE", "check_config"]

MAX_LOG_SIZE = 18            # 256 KB
LOG2_LINE = LINE_BYTES.bit_length() - 1

Decoded = data.StructLayout({
    "layout": TLoadLayout,
    "log2_esize": 2,         # log2 element bytes
    "pattern": 64,           # pad element pattern (little-endian, esize bytes used)
    "null": 1,               # PadValue Null: leave padded bytes unwritten
    "n": 4,
    "log2_rows": 5,          # log2 rows of each output tile
    "log2_cols": 5,          # log2 columns of each output tile
    "log2_runs": 5,          # log2 runs per output tile
    "log2_lines": 3,         # log2 lines per transpose group / log2 bytes per NORM run
    "log2_lanes": 2,         # log2 32-byte lanes a run of ND2NZ..DN2NZ spans (W > 32)
    "log2_stack": 2,         # log2 source rows a transposing or chunk run reads (_stack)
    "valid_major": 23,       # valid extent along the source's major axis (rows of ND, cols of DN)
    "valid_minor": 23,       # valid extent along the minor axis
    "base": 64,
    "stride": 64,
    "fault": FaultCode,
    "flat": 1,               # the tile is one contiguous run of the source (see _flat)
    "flat_bytes": 19,        # flat: the valid bytes at its start
})


def _log2_of_pow2(m, value, width, name):
    """log2 of a one-hot value (a priority encoder)."""
    out = Signal(range(width + 1), name=name)
    for b in range(width):
        with m.If(value[b]):
            m.d.comb += out.eq(b)
    return out


def check_config(profile: str, lcfr: tuple[int, int]) -> None:
    """Raise ValueError naming a bad ``profile`` or ``lcfr`` parameter."""
    check_choice("profile", profile, ("finite", "ieee-inf"))
    lo, hi = lcfr
    if not (256 <= lo <= hi <= 1 << MAX_LOG_SIZE) or lo & (lo - 1) or hi & (hi - 1):
        raise ValueError(f"lcfr={lcfr!r}: need powers of two with 256 <= MIN <= MAX <= 256 KB")


class TLoadDecoder(wiring.Component):
    """Checks and decodes one TLOAD per cycle (see module doc for the ports and checks).

    Parameters
    ----------
    profile : str
        The pad values of Max/Min in the pad ROM: ``"finite"`` or ``"ieee-inf"`` (D5).
    lcfr : tuple of int
        The tile sizes a TLOAD may request, ``(min, max)`` bytes (D7).
    registered : bool
        Register the output (latency 1); False: combinational (latency 0).
    width : int
        The beat width W in bytes the runs are cut for (32, 64 or 128).
    """

    def __init__(self, profile: str = "finite", lcfr: tuple[int, int] = (256, 256 * 1024),
                 registered: bool = True, width: int = LINE_BYTES):
        check_config(profile, lcfr)
        check_width(width)
        self.width = width
        self.registered = registered
        self.profile = profile
        self.lcfr = lcfr
        super().__init__({
            "i": In(stream.Signature(TLoadInstr)),
            "o": Out(stream.Signature(Decoded)),
            "mem_size": In(64),
            "log2_size": Out(5),            # of the instruction on ``i`` (combinational)
        })

    def elaborate(self, platform):
        m = Module()
        ins = self.i.payload
        log2_esize, known, pattern = self._data_type(m, ins)
        illegal_instruction, size_bad, size_differs = self._instruction_checks(m, ins, known)
        geo = self._geometry(m, ins, log2_esize)
        m.d.comb += self.log2_size.eq(geo["log2_size"])
        illegal_parameter = (size_bad | size_differs | (ins.col == 0)
                             | (ins.valid_col > ins.col) | ~geo["ok"]
                             | (ins.valid_row > geo["row"]) | geo["shape_bad"])
        valid_major, valid_minor, stride, out_of_bounds = self._bounds(m, ins, log2_esize)

        fault = first_fault(m, [(illegal_instruction, FaultCode.IllegalInstruction),
                                (illegal_parameter, FaultCode.IllegalParameter),
                                (out_of_bounds, FaultCode.OutOfBounds)], name="fault")

        log2_runs, log2_lines, log2_lanes = self._runs_per_tile(m, ins, log2_esize, geo)
        flat, flat_bytes, narrow = self._flat(m, ins, log2_esize, geo, stride, valid_major,
                                              valid_minor)
        log2_w = self.width.bit_length() - 1
        log2_stack = self._stack(m, ins, log2_esize, narrow, valid_major)
        with m.If(flat):                 # W-byte runs
            m.d.comb += [log2_runs.eq(geo["log2_size"] - log2_w), log2_lines.eq(log2_w),
                         log2_lanes.eq(0)]
        with m.Elif(log2_stack != 0):    # several source rows a run
            m.d.comb += log2_runs.eq(Mux(TLoadLayout.where(ins.layout, "transposing"),
                                         geo["log2_rows"] + geo["log2_cols"] - log2_lines,
                                         geo["log2_size"] - LOG2_LINE) - log2_lanes - log2_stack)
        decoded = Signal(Decoded)
        limit = 1 << 22
        m.d.comb += [
            decoded.layout.eq(ins.layout), decoded.log2_esize.eq(log2_esize),
            decoded.pattern.eq(pattern), decoded.null.eq(ins.pad == PadValue.Null),
            decoded.n.eq(ins.n), decoded.log2_rows.eq(geo["log2_rows"]),
            decoded.log2_cols.eq(geo["log2_cols"]), decoded.log2_runs.eq(log2_runs),
            decoded.log2_lines.eq(log2_lines), decoded.log2_lanes.eq(log2_lanes),
            decoded.log2_stack.eq(log2_stack),
            decoded.valid_major.eq(Mux(valid_major > limit, limit, valid_major)),
            decoded.valid_minor.eq(Mux(valid_minor > limit, limit, valid_minor)),
            decoded.base.eq(ins.base), decoded.stride.eq(stride), decoded.fault.eq(fault),
            decoded.flat.eq(flat), decoded.flat_bytes.eq(flat_bytes),
        ]
        self._output(m, decoded)
        return m

    def _data_type(self, m, ins):
        """(log2 element bytes, known code, pad pattern) of the data-type code."""
        log2_esize = Signal(2)
        known = Signal()
        pattern = Signal(64)
        with m.Switch(ins.dtype):
            for code, (lg, *_rest) in DTYPE_ROM.items():
                with m.Case(code):
                    m.d.comb += [log2_esize.eq(lg), known.eq(1)]
                    with m.Switch(ins.pad):
                        for pad in range(4):
                            with m.Case(pad):
                                m.d.comb += pattern.eq(pad_pattern(code, pad, self.profile))
        return log2_esize, known, pattern

    def _instruction_checks(self, m, ins, known):
        """(IllegalInstruction, a bad Size, Sizes that differ)."""
        lo, hi = self.lcfr
        n = ins.n
        n_ok = (n >= 1) & (n <= MAX_OUTPUTS)
        queue_bad, size_bad, size_differs = [], [], []
        for k in range(MAX_OUTPUTS):
            used = n > k
            size = ins.sizes[k]
            pow2 = (size & (size - 1)) == 0
            queue_bad.append(used & (ins.queues[k].as_value() >= TileQueue.ACC.value))
            size_bad.append(used & (~pow2 | (size < lo) | (size > hi)))
            size_differs.append(used & (size != ins.sizes[0]))
        illegal = ~n_ok | Cat(queue_bad).any() | ~known
        return illegal, Cat(size_bad).any(), Cat(size_differs).any()

    def _geometry(self, m, ins, log2_esize):
        """Col*e = n << p (ND) or 1 << p (DN): log2 rows and columns of each tile, Row, and
        the NZ/ZN shape rule."""
        log2_size = _log2_of_pow2(m, ins.sizes[0], MAX_LOG_SIZE + 1, "log_size")
        dn = TLoadLayout.where(ins.layout, "source_dn")
        colbytes = Signal(68)
        m.d.comb += colbytes.eq(ins.col << log2_esize)
        scale = Mux(dn, 1, ins.n)
        p = Signal(range(MAX_LOG_SIZE + 1))
        p_found = Signal()
        for cand in range(MAX_LOG_SIZE + 1):
            with m.If(colbytes == (scale << cand)):
                m.d.comb += [p.eq(cand), p_found.eq(1)]
        log2_cols = Signal(5)
        log2_rows = Signal(5)
        m.d.comb += [log2_cols.eq(p - log2_esize), log2_rows.eq(log2_size - p)]
        row = Signal(23)
        m.d.comb += row.eq(Mux(dn, ins.n << log2_rows, 1 << log2_rows))
        log2_side = Signal(3)               # log2 elements per line: a fractal's short side
        m.d.comb += log2_side.eq(LOG2_LINE - log2_esize)
        nz = TLoadLayout.where(ins.layout, "nz_tile")
        zn = TLoadLayout.where(ins.layout, "zn_tile")
        shape_bad = ((nz & ((log2_rows < 4) | (log2_cols < log2_side)))
                     | (zn & ((log2_rows < log2_side) | (log2_cols < 4))))
        return {"ok": p_found & (p <= log2_size) & (p >= log2_esize), "row": row,
                "log2_rows": log2_rows, "log2_cols": log2_cols, "log2_size": log2_size,
                "log2_side": log2_side, "shape_bad": shape_bad}

    def _bounds(self, m, ins, log2_esize):
        """The valid block's extents, the row stride and OutOfBounds."""
        dn = TLoadLayout.where(ins.layout, "source_dn")
        vr, vc = ins.valid_row, ins.valid_col
        valid_major = Mux(dn, vc, vr)
        valid_minor = Mux(dn, vr, vc)
        stride = Signal(64)
        m.d.comb += stride.eq(Mux(ins.stride_given, ins.stride, (valid_minor << log2_esize)[:64]))
        last = Signal(96)
        m.d.comb += last.eq(ins.base + (valid_major - 1) * stride
                            + ((valid_minor - 1) << log2_esize) + (1 << log2_esize) - 1)
        out_of_bounds = (vr != 0) & (vc != 0) & (last >= self.mem_size)
        return valid_major, valid_minor, stride, out_of_bounds

    def _flat(self, m, ins, log2_esize, geo, stride, valid_major, valid_minor):
        """A *flat* tile: one output whose rows (NORM, ND2NZ) or columns (DN2ZN) are narrower
        than W and lie back to back in the source (the stride is their length), all of
        each valid; NORM, and ND2NZ/DN2ZN of one fractal column/row (32 bytes), store it
        in source order, so it moves as W-byte runs of the source, several rows a beat.
        Returns (flat, its valid bytes, ``narrow``: {dense, log2_minor_bytes}, whether the
        tile has such rows whatever its layout, for :meth:`_stack`)."""
        dn = TLoadLayout.where(ins.layout, "source_dn")
        log2_minor = Mux(dn, geo["log2_rows"], geo["log2_cols"])
        log2_minor_bytes = Signal(6)
        m.d.comb += log2_minor_bytes.eq(log2_minor + log2_esize)
        narrow = {"log2_minor_bytes": log2_minor_bytes,
                  "dense": ((ins.n == 1) & (log2_minor_bytes < self.width.bit_length() - 1)
                            & (stride == (1 << log2_minor_bytes))
                            & (valid_minor == (1 << log2_minor)))}
        in_order = ((ins.layout == TLoadLayout.NORM)
                    | (((ins.layout == TLoadLayout.ND2NZ) | (ins.layout == TLoadLayout.DN2ZN))
                       & (log2_minor_bytes == LOG2_LINE)))
        flat = narrow["dense"] & in_order
        flat_bytes = Mux(valid_major > (1 << MAX_LOG_SIZE), 0, valid_major << log2_minor_bytes)
        return flat, flat_bytes, narrow

    def _stack(self, m, ins, log2_esize, narrow, valid_major):
        """log2 G, the source rows one transposing run reads (ND2ZN, DN2NZ).  A run reads a
        row of the tile (an ND source's row, a DN source's column); when the rows are
        narrower than W and lie back to back in the source (the stride is their length), the
        tile being one output (``narrow``, see :meth:`_flat`), all of each row valid and the
        valid rows a multiple of G,
        G = W / row bytes rows are one W-byte read, and the transpose lanes take them as
        elements G times as wide (at most 64 bits; the ZN/NZ shape rules keep every legal
        G within it): U = P / G squares side by side, or at b8 with rows of 16 elements one
        half-square of G = 2P rows.  ND2NZ and DN2ZN likewise when a row spans U = 2 .. P/2
        fractals (one fractal is a flat tile): the chunk transposer then takes P/G runs, each
        G rows of U fractals, as a square of U x U super-chunks of G fractal lines.  0
        otherwise."""
        log2_minor_bytes = narrow["log2_minor_bytes"]
        g = Signal(3)
        m.d.comb += g.eq(self.width.bit_length() - 1 - log2_minor_bytes)
        dense = (narrow["dense"]
                 & ((valid_major & ((1 << g) - 1)) == 0))
        transposing = TLoadLayout.where(ins.layout, "transposing")
        chunked = (ins.layout == TLoadLayout.ND2NZ) | (ins.layout == TLoadLayout.DN2ZN)
        log2_stack = Signal(2)
        with m.If(dense & ((transposing & (g + log2_esize <= 3))
                           | (chunked & (log2_minor_bytes > LOG2_LINE)))):
            m.d.comb += log2_stack.eq(g)
        return log2_stack

    def _runs_per_tile(self, m, ins, log2_esize, geo):
        """(log2 runs per output tile, log2 lines per transpose group or bytes per NORM run,
        log2 lanes per run).  A run reads at most W bytes: a NORM row or W bytes of it; at
        W > 32 an ND2NZ/DN2ZN run spans up to W/32 fractals side by side and a transposing
        run the rows of up to W/32 squares side by side (their *lanes*)."""
        log2_rows, log2_cols, log2_size = geo["log2_rows"], geo["log2_cols"], geo["log2_size"]
        log2_side = geo["log2_side"]
        log2_w = self.width.bit_length() - 1
        log2_p = log2_w - LOG2_LINE                   # log2 lanes of a beat
        log2_row_bytes = log2_cols + log2_esize
        log2_run = Signal(5)                           # NORM; flat tiles: W bytes
        m.d.comb += log2_run.eq(Mux(log2_row_bytes < log2_w, log2_row_bytes, log2_w))
        log2_runs = Signal(5)
        log2_lines = Signal(3)
        log2_lanes = Signal(2)

        def lanes(log2_fit):
            """min(log2 P, log2_fit)"""
            return Mux(log2_fit < log2_p, log2_fit, log2_p)

        with m.Switch(ins.layout):
            with m.Case(TLoadLayout.NORM):
                m.d.comb += [log2_runs.eq(log2_size - log2_run), log2_lines.eq(log2_run)]
            with m.Case(TLoadLayout.ND2NZ):
                u = lanes(log2_cols + log2_esize - LOG2_LINE)
                m.d.comb += [log2_runs.eq(log2_size - LOG2_LINE - u), log2_lanes.eq(u)]
            with m.Case(TLoadLayout.DN2ZN):
                u = lanes(log2_rows + log2_esize - LOG2_LINE)
                m.d.comb += [log2_runs.eq(log2_size - LOG2_LINE - u), log2_lanes.eq(u)]
            with m.Case(TLoadLayout.ND2ZN):
                group = Mux(log2_cols < log2_side, log2_cols, log2_side)
                u = lanes(log2_cols - group)
                m.d.comb += [log2_runs.eq(log2_rows + log2_cols - group - u),
                             log2_lines.eq(group), log2_lanes.eq(u)]
            with m.Case(TLoadLayout.DN2NZ):
                group = Mux(log2_rows < log2_side, log2_rows, log2_side)
                u = lanes(log2_rows - group)
                m.d.comb += [log2_runs.eq(log2_rows + log2_cols - group - u),
                             log2_lines.eq(group), log2_lanes.eq(u)]
        return log2_runs, log2_lines, log2_lanes

    def _output(self, m, decoded):
        """One pipeline register, or straight through."""
        if not self.registered:
            m.d.comb += [self.o.valid.eq(self.i.valid), self.o.payload.eq(decoded),
                         self.i.ready.eq(self.o.ready)]
            return
        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.eq(decoded)]
