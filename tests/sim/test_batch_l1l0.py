"""The batch LoadDataWithTranspose harness against the Python-driven bench: the same calls
with the same stall seed give the same L0 image, fault codes and reads, and the same cycle
for every accept and the first and last write; both equal the golden model."""

import gc
import random
import warnings

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from tilecosim.model.load_data import LDT_DTYPES
from tilecosim.ops.load_data_with_transpose import random_ldt_call
from tilecosim.sim.batch_l1l0 import BatchL1L0, run_l1l0_batches
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, compare_l1l0, simulate_l1l0

FIELDS = ("faults", "accept", "done", "first_write", "last_write", "reads", "timed_out", "error")


def calls_and_buffers(seed, dst="L0B"):
    rng = random.Random(seed)
    calls = []
    for dt in list(LDT_DTYPES) * 2:                      # every data type, twice
        c = random_ldt_call(rng, dt)
        calls.append(LdtCall(c.params, dst, c.dst, c.src))
    l1 = np.random.default_rng(seed).integers(0, 256, 1 << 15, dtype=np.uint8)
    l0 = np.random.default_rng(seed + 1).integers(0, 256, 1 << 14, dtype=np.uint8)
    return calls, l1, l0


def same_result(a, b):
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    assert np.array_equal(a.l0, b.l0)


@pytest.mark.parametrize("width", [32, 64, 128])
def test_two_batches_in_one_start_equal_the_python_bench_cycle_for_cycle(width):
    calls, l1, l0 = calls_and_buffers(12)
    batches = [(calls, l0, 2, 0.0), (calls, l0, 5, 0.3)]
    got = run_l1l0_batches(batches, l1, depth=32, beats=4096, width=width)
    for (c, init, seed, stall), res in zip(batches, got):
        same_result(res, simulate_l1l0(c, l1, init, seed=seed, stall=stall, width=width))
        assert compare_l1l0(c, l1, init, res) == []
        assert any(res.faults) and 0 in res.faults and res.reads > 0
    assert got[1].last_write - got[1].accept[0] > got[0].last_write - got[0].accept[0]


def test_a_wrong_line_is_seen_by_the_comparison():
    calls, l1, l0 = calls_and_buffers(13)
    res = run_l1l0_batches([(calls, l0, 1, 0.0)], l1, depth=32, beats=4096)[0]
    res.l0[np.nonzero(res.l0 != l0)[0][0]] ^= 1
    assert any(p.startswith("L0 byte") for p in compare_l1l0(calls, l1, l0, res))


def test_bad_batches_are_refused():
    calls, l1, l0 = calls_and_buffers(14)
    with pytest.raises(ValueError, match="a batch holds 1..8"):
        run_l1l0_batches([(calls, l0, 0, 0.0)], l1, depth=8)
    with pytest.raises(ValueError, match="the harness holds 1024"):
        run_l1l0_batches([(calls, l0, 0, 0.0)], l1, l1_bytes=1024)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match="latency=0: must be in 1..256"):
            BatchL1L0(latency=0)
        gc.collect()


def test_a_log_too_small_for_the_batch_is_an_error_of_that_batch():
    calls, l1, l0 = calls_and_buffers(12)
    small, fine = run_l1l0_batches([(calls, l0, 0, 0.0), (calls[:1], l0, 0, 0.0)], l1,
                                   depth=32, beats=4)
    assert small.error.startswith("the batch overflowed the harness's L0 log")
    assert fine.error is None
