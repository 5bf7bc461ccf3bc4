"""The batch LoadAlign harness against the Python-driven bench: the same ops with the same
stall seed give the same results and the same cycle for every accept and every result, and
both equal the golden model."""

import random

import numpy as np
import pytest

from tilecosim.model.load_align import LoadDist
from tilecosim.ops.load_align import random_load_case
from tilecosim.sim.batch_align import run_batch_load_align
from tilecosim.sim.benches.align import compare_load_align, simulate_load_align


def _batch(seed, n_per_mode=3):
    rng = random.Random(seed)
    cases = [random_load_case(rng, d) for d in LoadDist for _ in range(n_per_mode)]
    rng.shuffle(cases)
    ub = np.random.default_rng(seed).integers(0, 256, 4096, dtype=np.uint8)
    return cases, ub


@pytest.mark.parametrize("seed,p_op,p_ready", [(1, 1.0, 1.0), (2, 0.8, 0.75), (3, 0.3, 0.5)])
def test_batch_harness_equals_the_python_bench_cycle_for_cycle(seed, p_op, p_ready):
    cases, ub = _batch(seed)
    bench = simulate_load_align(cases, ub, 256, seed=seed, p_op=p_op, p_ready=p_ready)
    batch = run_batch_load_align(cases, ub, 256, seed=seed, p_op=p_op, p_ready=p_ready,
                                 depth=128)
    assert compare_load_align(cases, ub, batch, 256) == []
    assert not batch.timed_out and len(batch.results) == len(cases)
    assert batch.results == bench.results
    assert batch.accept == bench.accept and batch.out == bench.out
    if p_op < 1:
        assert batch.out[-1] - batch.accept[0] + 1 > len(cases)     # the stalls did stall


def test_a_batch_larger_than_the_harness_is_refused():
    cases, ub = _batch(4)
    with pytest.raises(ValueError, match="a batch holds 1..8"):
        run_batch_load_align(cases, ub, depth=8)


def test_store_batches_in_one_start_equal_the_python_bench_cycle_for_cycle():
    """StoreAlign: the final UB image, every (next address, fault) and the cycle of every
    accept and result, for two batches with their own stall seeds in one start."""
    from tilecosim.model.load_align import StoreDist
    from tilecosim.ops.store_align import random_store_case
    from tilecosim.sim.batch_align import run_store_align_batches
    from tilecosim.sim.benches.align import compare_store_align, simulate_store_align
    rng = random.Random(8)
    cases = [random_store_case(rng, d, 256) for d in StoreDist for _ in range(2)]
    ub = np.random.default_rng(8).integers(0, 256, 4096, dtype=np.uint8)
    batches = [(cases, ub, 5, 1.0, 1.0), (cases[::-1], ub, 6, 0.6, 0.7)]
    got = run_store_align_batches(batches, 256, depth=64)
    for (c, u, seed, p_op, p_ready), out in zip(batches, got):
        timing = {}
        mem, results, timed_out = simulate_store_align(c, u, 256, seed=seed, p_op=p_op,
                                                       p_ready=p_ready, timing=timing)
        assert not out["timed_out"] and out["error"] is None
        assert np.array_equal(out["mem"], mem) and out["results"] == results
        assert (out["accept"], out["out"]) == (timing["accept"], timing["out"])
        assert compare_store_align(c, u, out["mem"], out["results"], False, 256) == []
        assert any(r[1] for r in results) and not np.array_equal(mem, u)
