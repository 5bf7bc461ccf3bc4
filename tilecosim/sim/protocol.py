"""The protocol rules of the port contract, checked on every stream a design drives (D17).

A design can put the right bytes in the right places and still break the handshake a real
system relies on; the benches check these rules whatever data lands:

1. ``valid`` is held until the beat moves: once the design raises ``valid`` in a cycle
   whose ``ready`` is low, ``valid`` is high in the next cycle too;
2. the payload is stable while the beat is stalled: in that next cycle it is the same;
3. no ``valid`` in a cycle that follows a clock edge with ``rst`` high (while ``rst`` stays
   high after its first edge, and the cycle after it falls);
4. no more completions than instructions: a completion (``done`` or a result) moves only
   when an instruction taken before it, or in its cycle, has not completed yet;
5. no memory access for a faulting instruction: a request, read or write moves only while
   an instruction that the model says moves data has been taken and not completed.

Two checkers share :class:`Rule` and :class:`ProtocolError`: :class:`Watch`, for the
Python-driven bench's stream drivers (:mod:`tilecosim.sim.streams`), and
:class:`ProtocolMonitor`, gateware inside each batch harness, so that a regression checks
every cycle at the simulator's speed.  A violation is a failure of its own class: its
message starts with :data:`PREFIX` and names the stream, the cycle (of the bench's own
count: the cycle after ``start`` is 0 in a batch harness, the first of the run in the
Python-driven bench) and the rule.
"""

from __future__ import annotations

import enum

from amaranth import Module, Signal, Value
from amaranth.hdl import ResetSignal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Rule", "RULES", "PREFIX", "ProtocolError", "violation", "is_violation", "Watch",
           "ProtocolMonitor"]

PREFIX = "protocol violation"


class Rule(enum.IntEnum):
    NONE = 0
    VALID_DROPPED = 1
    PAYLOAD_CHANGED = 2
    VALID_IN_RESET = 3
    EXTRA_COMPLETION = 4
    FAULTING_ACCESS = 5


#: one line per rule, as a violation's message gives it
RULES = {
    Rule.VALID_DROPPED: "valid fell before its beat moved (it must stay high until ready "
                        "takes the beat)",
    Rule.PAYLOAD_CHANGED: "the payload changed while its beat was stalled (it must hold until "
                          "ready takes the beat)",
    Rule.VALID_IN_RESET: "valid while rst was high or in the cycle after it",
    Rule.EXTRA_COMPLETION: "a completion with no instruction left to complete (more "
                           "completions than instructions taken)",
    Rule.FAULTING_ACCESS: "a memory access while every instruction in flight faults (the "
                          "model says they fault: they must not touch memory)",
}


def violation(stream: str, cycle, rule: Rule) -> str:
    """The one-line message of a violation."""
    return f"{PREFIX} on {stream} at cycle {cycle}: {RULES[Rule(rule)]}"


def is_violation(message: str) -> bool:
    """Is this failure message a protocol violation (not a data or fault mismatch)?"""
    return message.startswith(PREFIX) or f": {PREFIX}" in message


class ProtocolError(AssertionError):
    """The Python-driven bench saw a design break a rule; it ends the run there (the waveform
    ends at the violation)."""

    def __init__(self, stream: str, cycle, rule: Rule):
        super().__init__(violation(stream, cycle, rule))
        self.stream, self.cycle, self.rule = stream, cycle, Rule(rule)


class Watch:
    """Rules 1 to 3 on one stream the design drives, for a driver of the Python-driven bench
    that samples ``valid``, ``ready``, the payload and ``rst`` at every clock edge.  Raises
    :class:`ProtocolError` at the first violation."""

    def __init__(self, stream: str):
        self.stream = stream
        self.stalled = False            # valid & ~ready at the last edge
        self.payload = None
        self.reset = False              # rst high at the last edge

    def check(self, valid, ready, payload, rst, cycle) -> None:
        if valid and self.reset:
            raise ProtocolError(self.stream, cycle, Rule.VALID_IN_RESET)
        if self.stalled and not valid:
            raise ProtocolError(self.stream, cycle, Rule.VALID_DROPPED)
        if self.stalled and None not in (payload, self.payload) and payload != self.payload:
            raise ProtocolError(self.stream, cycle, Rule.PAYLOAD_CHANGED)
        self.reset = bool(rst)
        self.stalled = bool(valid) and not ready and not rst
        self.payload = payload


class ProtocolMonitor(wiring.Component):
    """The rules (module doc) in gateware, for a batch harness: every stream of ``streams``
    (name -> payload width, in the order their index is reported) is checked for rules 1 to
    3 every cycle; rules 4 and 5 from the handshakes of the instructions and completions,
    the completions being the stream named ``completions``.

    Inputs: per stream ``<name>_valid``, ``<name>_ready``, ``<name>_payload`` and
    ``<name>_access`` (a beat of this stream is a memory access: rule 5); ``start``,
    ``running`` and ``cycle`` of the harness's :class:`~tilecosim.sim.harness.RunControl`;
    ``accepted`` (an instruction is taken this cycle) with ``accepted_moves`` (the model says
    it moves data), and ``completed`` with ``completed_moves`` for the instruction it
    completes; ``taken`` and ``done`` count the instructions taken and completed so far.

    Outputs: the first violation since ``start``: ``rule`` (0: none), ``stream`` (its index)
    and ``at`` (its cycle); ``boot``, a valid after a reset edge before any run (never
    cleared). Checks cost no cycle: the design runs as without them. About 3 flip-flops per
    stream and one per payload bit.
    """

    def __init__(self, streams: dict, depth: int, completions: str = "done"):
        if completions not in streams:
            raise ValueError(f"completions={completions!r}: not one of the streams "
                             f"{', '.join(streams)}")
        self.names = list(streams)
        self.completions = completions
        self.widths = dict(streams)
        sig = {"start": In(1), "running": In(1), "cycle": In(32),
               "accepted": In(1), "accepted_moves": In(1),
               "completed": In(1), "completed_moves": In(1),
               "taken": In(range(depth + 1)), "done": In(range(depth + 1)),
               "rule": Out(3), "stream": Out(4), "at": Out(32), "boot": Out(1)}
        for name, width in streams.items():
            sig.update({f"{name}_valid": In(1), f"{name}_ready": In(1),
                        f"{name}_payload": In(width), f"{name}_access": In(1)})
        self.depth = depth
        super().__init__(sig)

    def elaborate(self, platform):
        m = Module()
        found = []                              # (condition, rule, stream index) by priority
        reset_edge = Signal(reset_less=True)    # rst high at the last edge
        m.d.sync += reset_edge.eq(ResetSignal())
        boot_seen = Signal(reset_less=True)
        for k, name in enumerate(self.names):
            valid, ready = getattr(self, f"{name}_valid"), getattr(self, f"{name}_ready")
            payload = Value.cast(getattr(self, f"{name}_payload"))
            stalled = Signal(reset_less=True, name=f"{name}_stalled")
            held = Signal(len(payload), reset_less=True, name=f"{name}_held")
            m.d.sync += [stalled.eq(self.running & valid & ~ready & ~ResetSignal()),
                         held.eq(payload)]
            with m.If(self.start):
                m.d.sync += stalled.eq(0)
            found += [(valid & reset_edge, Rule.VALID_IN_RESET, k),
                      (stalled & ~valid, Rule.VALID_DROPPED, k),
                      (stalled & valid & (payload != held), Rule.PAYLOAD_CHANGED, k)]
            with m.If(valid & reset_edge):
                m.d.sync += boot_seen.eq(1)
        live = Signal(range(self.depth + 1), reset_less=True)   # moving, taken, not completed
        new = self.accepted & self.accepted_moves
        gone = self.completed & self.completed_moves
        m.d.sync += live.eq(live + new - gone)
        with m.If(self.start):
            m.d.sync += live.eq(0)
        found.append((self.completed & (self.done >= self.taken) & ~self.accepted,
                      Rule.EXTRA_COMPLETION, self.names.index(self.completions)))
        for k, name in enumerate(self.names):
            beat = getattr(self, f"{name}_valid") & getattr(self, f"{name}_ready")
            found.append((getattr(self, f"{name}_access") & beat & (live == 0) & ~new,
                          Rule.FAULTING_ACCESS, k))

        first = Signal(reset_less=True)
        with m.If(self.start):
            m.d.sync += [first.eq(0), self.rule.eq(0), self.stream.eq(0), self.at.eq(0)]
        with m.Elif(self.running & ~first):
            for cond, rule, k in reversed(found):        # the first listed wins
                with m.If(cond):
                    m.d.sync += [first.eq(1), self.rule.eq(rule), self.stream.eq(k),
                                 self.at.eq(self.cycle)]
        m.d.comb += self.boot.eq(boot_seen)
        return m
