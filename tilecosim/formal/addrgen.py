"""The fractal address generator, for one arbitrary legal TLOAD of one output tile.

The decoded instruction is free within what the decoder produces for a legal TLOAD (DESIGN
D1..D7 as the decoder reads them): any layout and element size, a tile of 512 bytes (the
smallest that holds a fractal of every layout) of any legal shape that takes at most 16 runs,
valid extents anywhere
from 0 to the tile's, any base, and a row stride of at least the valid row.  The runs per tile
and the lines per transpose group are the layout's: a line of 32 bytes is one run, or
32/rowbytes runs for NORM rows narrower than a line; a transpose group is S = 32/esize runs
of min(S, extent) elements, or S/2 runs of two 16-byte rows (b8 rows of 16 elements back to
back in the source, all valid, an even number of valid rows: the decoder's ``log2_stack``).

Properties:

* every memory request lies within the source block: in a row below ``valid_major`` and
  within the row's first ``valid_minor`` elements;
* the runs fill exactly the tile's 512 / 32 = 16 destination lines, and the instruction's
  last run is its last;
* no address is requested twice.
"""

from __future__ import annotations

from amaranth import Mux, Signal

from tilecosim.hdl.common import FaultCode
from tilecosim.hdl.tload.addrgen import KIND_DIRECT, FractalAddressGenerator
from tilecosim.hdl.tload.types import TLoadLayout

from .common import AnyConst, Harness

__all__ = ["addrgen_one_tile"]

LOG2_TILE = 9                       # 512-byte tiles
STRIDE_BITS = 12                    # strides up to 4 KB
BASE_BITS = 16


def addrgen_one_tile() -> Harness:
    h = Harness()
    m = h.m
    m.submodules.dut = dut = FractalAddressGenerator()
    d = Signal.like(dut.i.payload, name="instr")
    m.d.comb += d.eq(AnyConst(len(d.as_value())))
    offered = Signal(name="offered")
    with m.If(dut.i.valid & dut.i.ready):
        m.d.sync += offered.eq(1)
    m.d.comb += [dut.i.valid.eq(h.live & ~offered), dut.i.payload.eq(d)]
    # runs are taken as they come (back-pressure on the runs is the subject of the stream
    # proof of the TLOAD engine, streams-tload): the walk is then one path per instruction
    m.d.comb += dut.o.ready.eq(1)
    h.free(dut.idle, dut.fault.ready)

    # a legal instruction, as the decoder describes it
    lay = d.layout
    es = d.log2_esize
    log2_side = Signal(3, name="log2_side")             # elements per line: S = 32 / esize
    m.d.comb += log2_side.eq(5 - es)
    nz = lay.as_value().matches(TLoadLayout.ND2NZ, TLoadLayout.DN2NZ)
    zn = lay.as_value().matches(TLoadLayout.ND2ZN, TLoadLayout.DN2ZN)
    dn = lay.as_value().matches(TLoadLayout.DN2NZ, TLoadLayout.DN2ZN)
    rows, cols = d.log2_rows, d.log2_cols
    h.assume(lay.as_value().matches(*TLoadLayout), "known_layout")
    h.assume((d.fault == FaultCode.NONE) & (d.n == 1), "legal_one_tile")
    h.assume(rows + cols + es == LOG2_TILE, "tile_bytes")
    h.assume(~nz | ((rows >= 4) & (cols >= log2_side)), "nz_shape")
    h.assume(~zn | ((rows >= log2_side) & (cols >= 4)), "zn_shape")
    row_bytes = cols + es
    with m.Switch(lay):
        with m.Case(TLoadLayout.NORM):
            run = Mux(row_bytes < 5, row_bytes, 5)
            with m.If(~d.flat):
                h.assume((d.log2_runs == LOG2_TILE - run) & (d.log2_lines == run), "norm_runs")
        with m.Case(TLoadLayout.ND2NZ, TLoadLayout.DN2ZN):
            h.assume((d.log2_runs == LOG2_TILE - 5) & (d.log2_lines == 0), "line_runs")
        with m.Case(TLoadLayout.ND2ZN):
            group = Mux(cols < log2_side, cols, log2_side)
            h.assume((d.log2_runs == rows + cols - group - d.log2_stack)
                     & (d.log2_lines == group), "zn_runs")
        with m.Case(TLoadLayout.DN2NZ):
            group = Mux(rows < log2_side, rows, log2_side)
            h.assume((d.log2_runs == rows + cols - group - d.log2_stack)
                     & (d.log2_lines == group), "nz_runs")
    major_extent = Mux(dn, 1 << cols, 1 << rows)
    minor_extent = Mux(dn, 1 << rows, 1 << cols)
    # W = 32: two rows a transposing run when they are 16 bytes (b8), back to back, all valid
    stack = (lay.as_value().matches(TLoadLayout.ND2ZN, TLoadLayout.DN2NZ)
             & (es == 0) & (Mux(dn, rows, cols) == 4) & (d.stride == 16)
             & (d.valid_minor == 16) & ~d.valid_major[0])
    h.assume(d.log2_stack == stack, "stacked_rows")
    h.assume((d.valid_major <= major_extent) & (d.valid_minor <= minor_extent), "valid_extents")
    stride_log = AnyConst(range(STRIDE_BITS + 1))
    h.assume((d.stride == (1 << stride_log)) & (d.stride >= (d.valid_minor << es)), "stride")
    h.assume(d.base < (1 << BASE_BITS), "base")
    h.assume(d.log2_runs <= 4, "at_most_16_runs")            # the proof's depth: 20 steps
    # W = 32: one lane a run; a flat tile is a NORM tile of one output whose rows, narrower
    # than 32 bytes, are back to back and all valid, moved as 32-byte runs
    flat = ((lay == TLoadLayout.NORM) & (row_bytes < 5) & (d.stride == (1 << row_bytes))
            & (d.valid_minor == minor_extent))
    h.assume((d.log2_lanes == 0) & (d.flat == flat), "one_lane_and_flat")
    with m.If(d.flat):
        h.assume((d.log2_runs == LOG2_TILE - 5) & (d.log2_lines == 5)
                 & (d.flat_bytes == (d.valid_major << row_bytes)), "flat_runs")

    o = dut.o
    run = o.payload
    take = h.live & o.valid & o.ready
    with m.If(h.live):
        h.check(~dut.fault.valid, "a_legal_instruction_does_not_fault")

    # within the source block: with a power-of-two stride, the offset from base is the row
    # (high bits) and the byte within the row (low bits)
    offset = Signal(64, name="offset")
    m.d.comb += offset.eq(run.addr - d.base)
    row_of = offset >> stride_log
    byte_of = offset & (d.stride - 1)
    with m.If(h.live & o.valid & (run.read_bytes != 0)):
        h.check((run.addr >= d.base)
                & Mux(d.flat, offset + run.read_bytes <= d.flat_bytes,
                      Mux(d.log2_stack != 0,
                          (byte_of == 0) & (row_of + 2 <= d.valid_major)
                          & (run.read_bytes == 32),
                          (row_of < d.valid_major)
                          & (byte_of + run.read_bytes <= (d.valid_minor << es)))),
                "request_within_the_source")

    # the destination lines: direct runs count their line ends, transpose groups their lines
    lines, done = Signal(8, name="lines_filled"), Signal(name="instr_done")
    direct = run.kind == KIND_DIRECT
    add = Mux(direct, run.line_end, Mux(run.group_end, 1 << run.log2_lines, 0))
    with m.If(take):
        m.d.sync += lines.eq(lines + add)
        with m.If(run.instr_last):
            m.d.sync += done.eq(1)
            h.check(lines + add == (1 << (LOG2_TILE - 5)), "sixteen_lines")
    with m.If(h.live & o.valid):
        h.check(~done, "no_run_after_the_last")

    # no address twice
    a = AnyConst(64)
    hits = Signal(2, name="requests_of_a")
    hit = take & (run.read_bytes != 0) & (run.addr == a)
    with m.If(hit):
        m.d.sync += hits.eq(hits + 1)
        h.check(hits == 0, "no_address_twice")

    for lay_ in TLoadLayout:
        h.cover(take & run.instr_last & (d.layout == lay_) & (d.valid_major != 0)
                & (d.valid_minor != 0), f"{lay_.name}_done")
    h.cover(take & run.instr_last & (d.valid_major == 0), "all_padding_done")
    h.cover(take & run.instr_last & d.flat & (d.valid_major != 0), "flat_done")
    h.cover(take & run.instr_last & (d.log2_stack != 0) & (d.valid_major != 0), "stacked_done")
    return h
