"""The batch TLOAD harness on Icarus and Verilator at W = 32, 64 and 128: two batches in one
simulator start (W = 32; one at the wider W) give the golden model's tiles and fault codes,
and the same cycle for every accept, completion and write as the Python-driven bench on
Amaranth's simulator with the same stall seeds."""

import functools

import pytest

from tilecosim import ops
from tilecosim.model.display import seeded_memory
from tilecosim.sim.batch_tload import run_tload_batches
from tilecosim.sim.benches.tload import SimConfig, compare, simulate_tload

from tests.sim.test_batch_tload import instructions, same_result
from tests.tiers import SLOW
from .simulators import SIMULATORS, need

PLIST, MEM = instructions(5), seeded_memory(13, 1 << 15)


def configs(width):
    """Two batches in one start at W = 32; at W = 64 and 128 the one with back-pressure (the
    harness's batch sequencing does not depend on W, and these builds simulate slowly)."""
    stalled = SimConfig(seed=6, width=width, p_req_ready=0.75, p_resp_valid=0.7,
                        p_write_ready=0.65, p_instr_valid=0.6)
    return [SimConfig(seed=2, width=width), stalled] if width == 32 else [stalled]


@functools.cache
def python_bench(width):
    return [simulate_tload(PLIST, MEM, cfg) for cfg in configs(width)]


# (all in the slow tier: the inner loop runs the harness on Icarus through regress, in
# tests/flows/test_regress.py's test_the_same_seed_takes_the_same_cycles_on_every_backend.
# Each simulator meets one wide harness: W = 64 on Icarus, 128 on Verilator -- Icarus took
# 470 s on the harness at W = 128, and the harness's sequencing does not depend on W)
WIDE = {"icarus": 64, "verilator": 128}


@SLOW
@pytest.mark.parametrize("sim,width", [(s, w) for s in SIMULATORS for w in (32, WIDE[s])])
def test_batch_tload_on_a_verilog_simulator(sim, width):
    """(W = 64 and 128 in the slow tier: in make test the Amaranth tests of tests/hdl/ run
    the wide engines, and this harness's sequencing does not depend on W; Verilator too:
    make test runs this harness on Icarus, and the TLOAD engine on Verilator in
    test_sims.)"""
    need(sim)
    got = run_tload_batches([(PLIST, c) for c in configs(width)], MEM, sim,
                            **ops.get("tload").harness_args())   # regress's build
    for res, want in zip(got, python_bench(width)):
        same_result(res, want)
        for i, p in enumerate(PLIST):
            code, mism = compare(p, MEM, res, instr=i)
            assert mism == [] and (code or 0) == res.faults[i]
