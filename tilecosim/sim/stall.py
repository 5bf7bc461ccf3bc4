"""Seeded idle and back-pressure patterns that a design can reproduce cycle for cycle.

Every stalled port of a bench has its own generator: a 32-bit xorshift register (x ^= x << 13,
x ^= x >> 17, x ^= x << 5) that steps once per clock cycle, whether or not the port looks at
it. In a cycle the port *may go* (a source presents its next payload, a sink is ready, a
memory answers) when the low 16 bits of the state are below ``threshold = round(p * 65536)``;
``p = 1`` never stalls and ``p = 0`` always does.

:class:`Stall` is the pattern for the Python-driven bench drivers
(:mod:`tilecosim.sim.streams`). :class:`StallGen` is the same generator as a synthesizable
Component, for harnesses that keep a whole batch inside the simulated design. Given the same
seed state, the two agree bit for bit and cycle for cycle, so a scenario that stalls in one
harness stalls the same way in the other.

:func:`seed_state` derives the 32-bit starting state of port ``port`` from a user's seed
(0..2**64-1) by a splitmix64 step, never 0 (0 is xorshift's fixed point).
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Stall", "StallGen", "seed_state", "threshold", "xorshift32"]

MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1
THRESHOLD_BITS = 17                      # 0..65536


def xorshift32(x: int) -> int:
    """One step of the generator."""
    x ^= (x << 13) & MASK32
    x ^= x >> 17
    x ^= (x << 5) & MASK32
    return x


def seed_state(seed: int, port: int) -> int:
    """The nonzero starting state of port ``port`` (a small integer naming the port within
    its bench) for the user's ``seed``: the low 32 bits of one splitmix64 step."""
    z = (seed + (port + 1) * 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    z ^= z >> 31
    return (z & MASK32) or 1


def threshold(p: float) -> int:
    """The go threshold of a probability: round(p * 65536), in 0..65536."""
    if not 0 <= p <= 1:
        raise ValueError(f"p={p}: a probability must be in [0, 1]")
    return round(p * 65536)


class Stall:
    """The pattern of one port: :meth:`go` answers for the current cycle, :meth:`step`
    moves to the next (the drivers call it once per clock edge)."""

    def __init__(self, seed: int, port: int, p: float):
        self.state = seed_state(seed, port)
        self.threshold = threshold(p)

    def go(self) -> bool:
        return (self.state & 0xFFFF) < self.threshold

    def step(self) -> None:
        self.state = xorshift32(self.state)


class StallGen(wiring.Component):
    """The pattern of one port, in gateware.

    ``seed`` (nonzero, from :func:`seed_state`) is loaded while ``load`` is high; otherwise
    the state steps every cycle. ``go`` is combinational from the state and ``threshold``.
    Latency: ``go`` of the cycle after ``load`` is the first value of the pattern, as
    :meth:`Stall.go` before any :meth:`Stall.step`. One xorshift step and a 16-bit compare;
    32 flip-flops.
    """

    def __init__(self):
        super().__init__({
            "seed": In(32),
            "threshold": In(THRESHOLD_BITS),
            "load": In(1),
            "go": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        state = Signal(32, init=1)
        a = Signal(32)
        b = Signal(32)
        m.d.comb += [a.eq(state ^ (state << 13)[:32]),
                     b.eq(a ^ (a >> 17)),
                     self.go.eq(state[:16] < self.threshold)]
        with m.If(self.load):
            m.d.sync += state.eq(self.seed)
        with m.Else():
            m.d.sync += state.eq(b ^ (b << 5)[:32])
        return m
