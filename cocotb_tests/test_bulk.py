"""The bulk TLOAD harness (memory and tiles inside the design) on all three simulators:
the golden model's tiles and fault codes, and the same cycle count everywhere.

Every scenario uses one memory image and one tile capacity, so each Verilog simulator
builds the harness once."""

import functools
import random

import pytest

from tilecosim.sim.bulk_tload import run_bulk_tload
from tilecosim.model.display import seeded_memory
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams

from tests.tiers import tiered
from .simulators import need

MEM = seeded_memory(21, 8192)
CAPACITY = 8192


def scenarios():
    rng = random.Random(2)
    out = []
    for layout, dt in ((L.NORM, "S8"), (L.ND2NZ, "FP32"), (L.ND2ZN, "S8"), (L.DN2NZ, "FP16"),
                       (L.DN2ZN, "BF16")):
        while True:
            p, span = random_tload(rng, layout, dt, sizes=(512, 1024, 2048), n=rng.randint(1, 4))
            if span <= MEM.size:
                break
        out.append((layout.name, p, 1 + (layout is L.ND2ZN)))        # one repeated twice
    out.append(("fault", TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32,
                                     outputs=(("T", 512),)), 1))
    return out


SCENARIOS = scenarios()


@functools.cache
def on_amaranth(k, width):
    _, p, repeat = SCENARIOS[k]
    res, problems = run_bulk_tload(p, MEM, "amaranth", repeat=repeat, capacity=CAPACITY,
                                   width=width)
    assert problems == [], "\n".join(problems)
    return res.cycles, res.fault


# W = 64 runs the code of W = 128; make test runs W = 32 on Amaranth (the Verilog simulators
# run the batch TLOAD harness there)
@pytest.mark.parametrize("sim,width", tiered(
    [(s, w) for w in (32, 128) for s in ("amaranth", "icarus", "verilator")],
    lambda sim, width: width > 32 or sim != "amaranth"))
def test_bulk_harness_matches_the_model_and_amaranth(sim, width):
    if sim != "amaranth":
        need(sim)
    for k, (name, p, repeat) in enumerate(SCENARIOS):
        res, problems = run_bulk_tload(p, MEM, sim, repeat=repeat, capacity=CAPACITY,
                                       width=width)
        assert problems == [], f"{name}: " + "\n".join(problems)
        assert (res.cycles, res.fault) == on_amaranth(k, width), \
            f"{name}: cycles or fault differ"


def test_bulk_harness_reports_a_wrong_tile():
    """The end-state check is not vacuous: a corrupted tile byte is reported by element."""
    from tilecosim.sim.bulk_tload import compare_bulk
    _, p, _ = SCENARIOS[1]
    res, problems = run_bulk_tload(p, MEM, "amaranth", capacity=CAPACITY)
    assert problems == []
    b = int(res.written.nonzero()[0][5])
    data = res.data.copy()
    data[b] ^= 0xFF
    res.data = data
    found = compare_bulk(p, MEM, res)
    assert len(found) == 1 and found[0].startswith("output tile 0, row")
