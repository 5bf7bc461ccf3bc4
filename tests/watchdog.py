"""A watchdog for the Amaranth-simulator benches of the unit tests: a unit that stops
producing (or stops taking input) fails the test after a bounded number of cycles instead of
hanging pytest."""

from __future__ import annotations


class Stalled(AssertionError):
    """The bench's processes were not done when the watchdog expired."""


def run_bounded(sim, cycles: int, what: str) -> None:
    """``sim.run()``, failing with :class:`Stalled` if the bench is still running after
    ``cycles`` cycles of the ``sync`` clock (which ``sim`` must have)."""
    async def watchdog(ctx):
        for _ in range(cycles):       # not tick().repeat(): closing it mid-way is reported
            await ctx.tick()
        raise Stalled(f"{what}: not done after {cycles} cycles (the unit stopped moving)")
    sim.add_testbench(watchdog, background=True)
    sim.run()
