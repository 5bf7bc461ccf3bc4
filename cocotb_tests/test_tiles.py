"""Programs on the RTL tile system on Icarus and Verilator: the seed's tile-register example,
a kernel that stores and reads back (TSTORE), and a program for each fault of the tile
register file and of TSTORE (tests/hdl/test_tiles.py), checked
against the golden Machine after every instruction, and streamed without a pause; every
completion, the last record of every instruction and its first tile write in the same
cycle as on Amaranth's simulator."""

import functools

import pytest

from tests.hdl.test_tiles import (FAULT_PROGRAMS, KERNEL, SEED_EXAMPLE, drawn_programs,
                                  run_checked)
from tests.tiers import slow, tiered

from .simulators import SIMULATORS, need

TEXTS = [SEED_EXAMPLE, KERNEL] + [t for t, _ in FAULT_PROGRAMS.values()]


def _events(runs):
    return [(res.faults, res.done_cycles, res.record_cycles, res.first_writes)
            for _, res in runs]


@functools.cache
def on_amaranth(check):
    return _events(run_checked(TEXTS, "amaranth", check=check))


@pytest.mark.parametrize("sim,check", tiered([(s, c) for c in ("each", "end") for s in SIMULATORS],
                                              lambda sim, check: (sim, check) != ("icarus", "end")))
def test_programs_match_the_machine_with_amaranths_cycles(sim, check):
    need(sim)
    got = _events(run_checked(TEXTS, sim, check=check))
    want = on_amaranth(check)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"program {k} on {sim} ({check}): faults/cycles differ from Amaranth's"


# (all in the slow tier: test_programs_match_the_machine_with_amaranths_cycles runs programs
# on Icarus in the inner loop)
@pytest.mark.parametrize("sim,check", [slow("icarus", "end"), slow("verilator", "each"),
                                       slow("verilator", "end")])
def test_a_program_aimed_at_every_bin(sim, check):
    """One random program per bin of the program operation (48: pressure, Q#16, a queue
    past 16 allocations, reuse and release, every layout, lane and fault, both allocation
    faults among them), with back-pressure, in one simulator start.  (The tile system's
    Verilator build is the slow tier's: the test tier runs programs on Icarus.)"""
    need(sim)
    runs = run_checked(drawn_programs(), sim, check=check)
    assert len(runs) == 48
