"""The batch LoadDataWithTranspose harness on Icarus and Verilator at W = 32 and 128: two
batches in one simulator start give the golden model's L0 and fault codes, and the same cycles
as the Python-driven bench on Amaranth's simulator with the same stall seeds."""

import functools

import pytest

from tilecosim import ops
from tilecosim.sim.batch_l1l0 import run_l1l0_batches
from tilecosim.sim.benches.load_data_with_transpose import compare_l1l0, simulate_l1l0

from tests.sim.test_batch_l1l0 import calls_and_buffers, same_result
from tests.tiers import tiered
from .simulators import SIMULATORS, need

CALLS, L1, L0 = calls_and_buffers(21, dst="L0B")
BATCHES = [(CALLS, L0, 3, 0.0), (CALLS, L0, 8, 0.35)]


@functools.cache
def python_bench(width):
    return [simulate_l1l0(c, L1, init, seed=seed, stall=stall, width=width)
            for c, init, seed, stall in BATCHES]


@pytest.mark.parametrize("sim,width", tiered([(s, w) for w in (32, 128) for s in SIMULATORS],
                                              lambda sim, width: width > 32 or sim == "verilator"))
def test_batch_l1l0_on_a_verilog_simulator(sim, width):
    need(sim)
    op = ops.get("load-data-with-transpose").at_width(width)
    got = run_l1l0_batches(BATCHES, L1, sim, **op.harness_args())      # regress's build
    for (c, init, _, _), res, want in zip(BATCHES, got, python_bench(width)):
        same_result(res, want)
        assert compare_l1l0(c, L1, init, res) == []
