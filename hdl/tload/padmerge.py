"""Pad/merge: fills the invalid elements of a W-byte beat with the pad pattern.

For each byte b of the line: data = valid[b] ? data[b] : pattern byte (b mod esize);
byte enable = valid[b] | not Null -- with Null padding the padded bytes are simply
not written (byte enables low), so they keep whatever the tile held (D5).

Latency 1 cycle (registered output); throughput one line per cycle; ``i.ready``
follows ``o.ready``.  ``meta`` is carried through unchanged.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import LINE_BYTES, check_at_least, check_width

__all__ = ["PadMerge"]


class PadMerge(wiring.Component):
    """Pad/merge of one ``width``-byte beat per cycle (see module doc for the ports).

    Parameters
    ----------
    meta_width : int
        Bits of ``meta`` that ride along with each beat.
    width : int
        Bytes of a beat (32, 64 or 128).
    """

    def __init__(self, meta_width: int = 0, width: int = LINE_BYTES):
        check_at_least("meta_width", meta_width, 0, "bits")
        check_width(width)
        self.meta_width = meta_width
        self.width = width
        meta = max(meta_width, 1)
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({
                "data": 8 * width, "valid": width, "log2_esize": 2, "pattern": 64,
                "null": 1, "meta": meta}))),
            "o": Out(stream.Signature(data.StructLayout({
                "data": 8 * width, "be": width, "meta": meta}))),
        })

    def elaborate(self, platform):
        m = Module()
        i = self.i.payload
        nbytes = self.width
        pad_line = Signal(8 * nbytes)
        with m.Switch(i.log2_esize):
            for log2_esize in range(4):
                e = 1 << log2_esize
                with m.Case(log2_esize):
                    m.d.comb += pad_line.eq(Cat(i.pattern.word_select(b % e, 8)
                                                for b in range(nbytes)))
        merged = Cat(Mux(i.valid[b], i.data.word_select(b, 8), pad_line.word_select(b, 8))
                     for b in range(nbytes))
        be = Cat(i.valid[b] | ~i.null for b in range(nbytes))

        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.data.eq(merged),
                         self.o.payload.be.eq(be), self.o.payload.meta.eq(i.meta)]
        return m
