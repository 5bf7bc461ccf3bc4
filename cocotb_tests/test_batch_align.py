"""The batch LoadAlign harness (a whole batch inside the design) on Icarus and Verilator:
the golden model's results, and the same cycle for every accept and result as the
Python-driven bench on Amaranth's simulator with the same stall seed."""

import functools
import random

import numpy as np
import pytest

from tilecosim import ops
from tilecosim.model.load_align import LoadDist
from tilecosim.ops.load_align import random_load_case
from tilecosim.sim.batch_align import run_batch_load_align
from tilecosim.sim.benches.align import compare_load_align, simulate_load_align

from tests.tiers import tiered
from .simulators import SIMULATORS, need

RNG = random.Random(9)
CASES = [random_load_case(RNG, d) for d in LoadDist for _ in range(4)]
UB = np.random.default_rng(9).integers(0, 256, 4096, dtype=np.uint8)
SEED, P_OP, P_READY = 5, 0.7, 0.6


@functools.cache
def python_bench():
    res = simulate_load_align(CASES, UB, 256, seed=SEED, p_op=P_OP, p_ready=P_READY)
    assert compare_load_align(CASES, UB, res, 256) == []
    return res


@pytest.mark.parametrize("sim", tiered(SIMULATORS, lambda sim: sim == "verilator"))
def test_batch_harness_on_a_verilog_simulator(sim):
    need(sim)
    res = run_batch_load_align(CASES, UB, 256, seed=SEED, p_op=P_OP, p_ready=P_READY,
                               backend=sim, **ops.get("load-align").harness_args())
    assert compare_load_align(CASES, UB, res, 256) == []
    want = python_bench()
    assert res.results == want.results
    assert (res.accept, res.out) == (want.accept, want.out)
