"""The stream contract of a whole unit, read from its signature: every ``In`` stream is
driven by an environment that keeps the contract (assumed), every ``Out`` stream must keep it
(asserted); every other input is arbitrary in every step.

For each output stream: once valid, valid stays and the payload is stable until ready; and it
is idle after reset until something is offered on an input stream (in that step or before: a
unit may pass an offered input straight through).  Covers: each output stream transfers, and
is stalled."""

from __future__ import annotations

from amaranth import Cat, Signal
from amaranth.lib import stream, wiring

from .common import Harness

__all__ = ["stream_contract"]


def _streams(dut):
    """(name, port, flow) of every stream member of ``dut``'s signature, and the other
    inputs."""
    streams, other_inputs = [], []
    for name, member in dut.signature.members.items():
        port = getattr(dut, name)
        if member.is_signature and isinstance(member.signature, stream.Signature):
            streams.append((name, port, member.flow))
        elif member.is_port and member.flow == wiring.In:
            other_inputs.append(port)
        elif member.is_signature:
            raise ValueError(f"{name}: a port of a signature that is not a stream")
    return streams, other_inputs


def stream_contract(dut: wiring.Component, environment=None) -> Harness:
    """``environment(h, dut)``, when given, assumes what the unit's surroundings promise of
    its other inputs."""
    h = Harness()
    m = h.m
    m.submodules.dut = dut
    streams, other_inputs = _streams(dut)
    h.free(*other_inputs)
    if environment is not None:
        environment(h, dut)
    offered = []
    for name, port, flow in streams:
        if flow == wiring.In:
            h.free(port.valid, port.payload)
            h.stream(port, "in", name)
            offered.append(port.valid)
        else:
            h.free(port.ready)
            # idle after reset: nothing_out_without_input below, which also allows an output
            # that passes an input offered in that very step
            h.stream(port, "out", name, idle_after_reset=False)
    offered_now = Cat(offered).any()
    went_in = Signal(name="went_in")               # an input was offered in an earlier step
    with m.If(offered_now):
        m.d.sync += went_in.eq(1)
    anything_in = went_in | offered_now
    for name, port, flow in streams:
        if flow == wiring.Out:
            with m.If(h.live & port.valid):
                h.check(anything_in, f"{name}_nothing_out_without_input")
            h.cover(h.live & port.valid & port.ready, f"{name}_transfers")
    return h


def addrgen_environment(h: Harness, dut) -> None:
    """In the TLOAD engine ``idle`` (nothing in flight downstream) falls only after the
    generator started an instruction: a fault waiting for ``idle`` keeps it."""
    was_idle = h.past(dut.idle & ~dut.started, "idle_before")
    h.assume(~was_idle | dut.idle, "idle_falls_only_after_a_start")
