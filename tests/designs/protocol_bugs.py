"""Designs from elsewhere that break one protocol rule of the contract and nothing else, for
``--dut-amaranth`` (the built-in engine inside, its data untouched).

:class:`TLoadValidDrop` is the Amaranth twin of examples/designs/tload_engine_valid_drop.v:
while a tile write is stalled, its ``valid`` falls in every other cycle, the payload kept.
"""

from amaranth import Module, Signal
from amaranth.lib import wiring

from tilecosim.hdl.tload.engine import TLoadEngine


class TLoadValidDrop(wiring.Component):
    """The built-in TLOAD engine (W = 32) whose ``write.valid`` is hidden in every other
    stalled cycle."""

    def __init__(self):
        self.inner = TLoadEngine()
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        for name, member in self.signature.members.items():
            outer, own = getattr(self, name), getattr(inner, name)
            if name == "write":
                continue
            if member.is_signature:
                wiring.connect(m, wiring.flipped(outer), own)
            elif member.flow == wiring.In:
                m.d.comb += own.eq(outer)
            else:
                m.d.comb += outer.eq(own)
        hide = Signal()
        m.d.comb += [self.write.payload.eq(inner.write.payload),
                     self.write.valid.eq(inner.write.valid & ~hide),
                     inner.write.ready.eq(self.write.ready & ~hide)]
        m.d.sync += hide.eq(inner.write.valid & ~self.write.ready & ~hide)
        return m
