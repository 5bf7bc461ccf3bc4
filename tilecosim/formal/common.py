"""What every proof harness shares: the formal reset, registered past values (Amaranth 0.5
has no ``Past``), free inputs, named properties, and the valid/ready contract of a stream."""

from __future__ import annotations

import sys

from amaranth import ClockDomain, Module, ResetSignal, Signal, Value
from amaranth.hdl import Assert, Assume, Cover
# Amaranth 0.5 keeps its formal-only values private; they are what its own FIFO proofs use
from amaranth.hdl._ast import AnyConst, AnySeq, Initial

__all__ = ["AnyConst", "AnySeq", "Harness", "NAME_SEP"]

#: separates a property's source location from its name in the ``src`` attribute SymbiYosys
#: prints: ``file.py:LINE|name``
NAME_SEP = "|"


class Harness:
    """A proof's top module: ``sync`` is reset in the first step only; ``past`` registers a
    value; ``live`` is true from the first step after reset."""

    def __init__(self):
        self.m = m = Module()
        self.covers: list[str] = []          # the names of the covers, each to be reached
        m.domains.sync = ClockDomain("sync")
        m.d.comb += Assume(ResetSignal() == Initial())
        self.live = ~ResetSignal()
        self.after_reset = self.past(ResetSignal(), name="after_reset")

    def _named(self, kind, test, name: str):
        prop = kind(test, name)
        frame = sys._getframe(2)
        prop.src_loc = (f"{frame.f_code.co_filename}:{frame.f_lineno}{NAME_SEP}{name}", 0)
        if kind is Cover:
            if name in self.covers:
                raise ValueError(f"cover {name!r} twice")
            self.covers.append(name)
        return prop

    def check(self, test, name: str) -> None:
        """Assert ``test`` (in the conditions of the enclosing ``m.If``), reported as
        ``name``."""
        self.m.d.comb += self._named(Assert, test, name)

    def assume(self, test, name: str) -> None:
        self.m.d.comb += self._named(Assume, test, name)

    def cover(self, test, name: str) -> None:
        """A ``Cover`` that must be reached for the proof to count (it is not vacuous)."""
        self.m.d.comb += self._named(Cover, test, name)

    def past(self, value, name: str | None = None) -> Signal:
        """``value`` one step ago (0 in the first step; the formal reset does not touch it).
        Call it outside any ``m.If``: the register would otherwise keep its value when the
        condition is false."""
        v = Value.cast(value)
        reg = Signal(v.shape(), name=name, reset_less=True)
        self.m.d.sync += reg.eq(v)
        return reg

    def free(self, *signals) -> None:
        """Drive each of ``signals`` (the unit's inputs) with an arbitrary value every step;
        an input left undriven would be a constant 0."""
        for s in signals:
            v = Value.cast(s)
            self.m.d.comb += v.eq(AnySeq(v.shape()))

    def stream(self, port, role: str, name: str, idle_after_reset: bool = True) -> None:
        """The valid/ready contract of ``port`` (a ``stream`` interface): once valid, valid
        stays and the payload is stable until ready.  ``role`` "out": the unit's promise
        (asserted), with valid low in the step after reset when ``idle_after_reset``;
        ``role`` "in": the environment's (assumed), with nothing offered during reset."""
        m = self.m
        check = self.check if role == "out" else self.assume
        held = self.past(port.valid & ~port.ready & self.live, f"{name}_held")
        payload = self.past(port.payload, f"{name}_prev")
        with m.If(self.live & held):
            check(port.valid, f"{name}_valid_held")
            check(Value.cast(port.payload) == payload, f"{name}_payload_stable")
        if role == "in":
            with m.If(~self.live):
                self.assume(~port.valid, f"{name}_idle_in_reset")
        elif idle_after_reset:
            with m.If(self.after_reset):
                self.check(~port.valid, f"{name}_idle_after_reset")
        self.cover(self.live & port.valid & ~port.ready, f"{name}_back_pressure")
