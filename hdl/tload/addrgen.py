"""Fractal address generator: one source run per cycle, in destination order.

A *line* is 32 bytes of a destination tile: a fractal row (NZ), a fractal column
(ZN) or a row segment (ND).  The generator walks the destination lines of output
tile 0, 1, .. n-1 and emits, one per cycle, the *runs* that fill them:

* NORM, ND2NZ, DN2ZN -- each line is one contiguous source run of 32 bytes (NORM
  rows narrower than 32 bytes take 32/rowbytes runs per line);
* ND2ZN, DN2NZ -- a group of L lines (L = min(S, tile extent), S = 32/esize) is the
  transpose of S source runs of L elements: the runs go to the transpose unit.

Each run carries its memory address, how many of its bytes are valid (0: a
padding-only run, no memory request), where its bytes land (tile, line, byte
offset), and for a transpose group its validity extents (V lines hold data, each
in its first Av elements).  All tile dimensions are powers of two (see the
decoder), so the loop indices are bit fields of one run counter.

Throughput: one run per cycle.  Latency: one cycle from a decoded instruction to
its first run.  Faulting instructions produce no run: they leave on ``fault``.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.tload.decode import Decoded
from tilecosim.hdl.tload.types import FaultCode, TLoadLayout

__all__ = ["FractalAddressGenerator", "Run", "KIND_DIRECT", "KIND_TRANSPOSE"]

KIND_DIRECT, KIND_TRANSPOSE = 0, 1

Run = data.StructLayout({
    "addr": 64,
    "rbytes": 6,          # valid bytes to read from addr (0: no request)
    "kind": 1,            # KIND_DIRECT / KIND_TRANSPOSE
    "tile": 3,
    "line": 13,           # direct: destination line; transpose: first line of the group
    "line_off": 5,        # direct: byte offset of the run inside its line
    "line_end": 1,        # direct: last run of its line
    "group_end": 1,       # transpose: last run of its group
    "ll": 3,              # transpose: log2 lines of the group
    "v": 6,               # transpose: lines holding data
    "av": 6,              # transpose: valid elements in each of those lines
    "le": 2,
    "pattern": 64,
    "null": 1,
    "instr_last": 1,      # last run of the instruction
})


def _mask(width_sig):
    return (1 << width_sig) - 1


def _clamp(m, value, hi, name):
    out = Signal(range(64), name=name)
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
    """

    i: In(stream.Signature(Decoded))
    o: Out(stream.Signature(Run))
    fault: Out(stream.Signature(FaultCode))
    started: Out(1)               # pulses when a legal instruction starts
    idle: In(1)

    def elaborate(self, platform):
        m = Module()
        cur = Signal(Decoded)
        busy = Signal()
        k = Signal(4)
        q = Signal(20)
        last_kind = Signal()
        last_le = Signal(2)
        have_last = Signal()

        d = self.i.payload
        d_kind = (d.layout == TLoadLayout.ND2ZN) | (d.layout == TLoadLayout.DN2NZ)
        compatible = ~have_last | ((d_kind == last_kind) & (d.le == last_le)) | self.idle

        # --- the run of (k, q) ------------------------------------------------------------
        le = cur.le
        ls = Signal(3)
        m.d.comb += ls.eq(5 - le)
        dn = (cur.layout == TLoadLayout.DN2NZ) | (cur.layout == TLoadLayout.DN2ZN)
        minor_off = Mux(dn, k << cur.lr, k << cur.lc)
        major = Signal(24)
        minor = Signal(24)
        major0 = Signal(24)
        nel = Signal(7)                        # elements per run
        line = Signal(20)
        line_off = Signal(5)
        line_end = Signal()
        kind = Signal()
        a = Signal(6)
        rsh = Signal(5)                        # NORM: log2 runs per row
        esh = Signal(3)                        # NORM: log2 elements per run
        gsh = Signal(5)                        # transpose: log2 groups per fractal row/column
        with m.Switch(cur.layout):
            with m.Case(TLoadLayout.NORM):
                lrl = cur.ll
                m.d.comb += [rsh.eq(cur.lc + le - lrl), esh.eq(lrl - le)]
                m.d.comb += [
                    major.eq(q >> rsh),
                    minor.eq(minor_off + ((q & _mask(rsh)) << esh)),
                    nel.eq(1 << esh),
                    line.eq((q << lrl) >> 5),
                    line_off.eq((q << lrl)[:5]),
                    line_end.eq(((q + 1) << lrl)[:5] == 0),
                ]
            with m.Case(TLoadLayout.ND2NZ):
                m.d.comb += [major.eq(q & _mask(cur.lr)),
                             minor.eq(minor_off + ((q >> cur.lr) << ls)),
                             nel.eq(1 << ls), line.eq(q), line_end.eq(1)]
            with m.Case(TLoadLayout.DN2ZN):
                m.d.comb += [major.eq(q & _mask(cur.lc)),
                             minor.eq(minor_off + ((q >> cur.lc) << ls)),
                             nel.eq(1 << ls), line.eq(q), line_end.eq(1)]
            with m.Case(TLoadLayout.ND2ZN):
                g = q >> ls
                m.d.comb += gsh.eq(cur.lc - cur.ll)
                fi = g >> gsh
                jg = g & _mask(gsh)
                m.d.comb += [kind.eq(1), a.eq(q & _mask(ls)),
                             major0.eq(fi << ls), major.eq((fi << ls) + (q & _mask(ls))),
                             minor.eq(minor_off + (jg << cur.ll)), nel.eq(1 << cur.ll),
                             line.eq((fi << cur.lc) + (jg << cur.ll))]
            with m.Case(TLoadLayout.DN2NZ):
                g = q >> ls
                m.d.comb += gsh.eq(cur.lr - cur.ll)
                fj = g >> gsh
                ig = g & _mask(gsh)
                m.d.comb += [kind.eq(1), a.eq(q & _mask(ls)),
                             major0.eq(fj << ls), major.eq((fj << ls) + (q & _mask(ls))),
                             minor.eq(minor_off + (ig << cur.ll)), nel.eq(1 << cur.ll),
                             line.eq((fj << cur.lr) + (ig << cur.ll))]

        span = _clamp(m, cur.vmin - minor, nel, "valid_elems")
        velems = Mux(major < cur.vmaj, span, 0)
        av = _clamp(m, cur.vmaj - major0, 32 >> le, "valid_runs")
        last_q = q == _mask(cur.lq)
        last_k = k == cur.n - 1

        # --- accept an instruction: when idle, or in the cycle the current one ends --------
        finishing = Signal()
        m.d.comb += self.fault.payload.eq(d.fault)
        free = ~busy | finishing
        with m.If(free & self.i.valid):
            with m.If(d.fault != FaultCode.NONE):
                m.d.comb += self.fault.valid.eq(self.idle & ~busy)
                m.d.comb += self.i.ready.eq(self.idle & ~busy & self.fault.ready)
            with m.Elif(compatible):
                m.d.comb += [self.i.ready.eq(1), self.started.eq(1)]

        # --- output register ---------------------------------------------------------------
        advance = busy & (~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(advance):
            o = self.o.payload
            m.d.sync += [
                self.o.valid.eq(1),
                o.addr.eq(cur.base + major * cur.stride + (minor << le)),
                o.rbytes.eq(velems << le),
                o.kind.eq(kind), o.tile.eq(k), o.line.eq(line), o.line_off.eq(line_off),
                o.line_end.eq(line_end), o.group_end.eq(a == (32 >> le) - 1),
                o.ll.eq(cur.ll), o.v.eq(span), o.av.eq(av), o.le.eq(le),
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
        with m.If(self.started):                 # after the advance logic: takes precedence
            m.d.sync += [cur.eq(d), busy.eq(1), k.eq(0), q.eq(0), last_kind.eq(d_kind),
                         last_le.eq(d.le), have_last.eq(1)]
        return m
