"""The LoadAlign and StoreAlign units on Amaranth's simulator against the golden model."""

import random

import numpy as np
import pytest

from tilecosim.ops.load_align import random_load_case
from tilecosim.ops.store_align import random_store_case
from tilecosim.sim.benches.align import (AlignCase, compare_load_align, compare_store_align,
                                         simulate_load_align, simulate_store_align)
from tilecosim.model.load_align import LoadDist, StoreDist


def load_cases(rng, dist, n=40):
    return [random_load_case(rng, dist) for _ in range(n)]


@pytest.mark.parametrize("vl", [256, 128])
@pytest.mark.parametrize("dist", list(LoadDist), ids=lambda d: d.name)
def test_load_align_modes(dist, vl):
    rng = random.Random(dist.value * 7 + vl)
    ub = np.random.default_rng(dist.value).integers(0, 256, 3000, dtype=np.uint8)
    cases = load_cases(rng, dist)
    res = simulate_load_align(cases, ub, vl, seed=dist.value, p_op=0.8, p_ready=0.7)
    assert compare_load_align(cases, ub, res, vl) == []
    assert len(res.results) == len(cases)
    codes = {r[3] for r in res.results}
    assert 0 in codes                                     # some legal ops in every run


def test_load_align_one_per_cycle_latency_two():
    rng = random.Random(5)
    ub = np.random.default_rng(5).integers(0, 256, 8192, dtype=np.uint8)
    cases = [AlignCase(d.name, "b8" if d is not LoadDist.DIST_NORM else "b64", 64 * rng.randint(0, 60))
             for d in LoadDist for _ in range(4)]
    res = simulate_load_align(cases, ub)
    assert compare_load_align(cases, ub, res) == []
    assert [o - a for a, o in zip(res.accept, res.out)] == [2] * len(cases)
    assert res.out[-1] - res.out[0] + 1 == len(cases)          # back to back, no bubble


@pytest.mark.parametrize("dist", list(StoreDist), ids=lambda d: d.name)
def test_store_align_modes(dist):
    rng = random.Random(dist.value + 100)
    vl = 128
    ub = np.random.default_rng(dist.value).integers(0, 256, 2048, dtype=np.uint8)
    cases = [random_store_case(rng, dist, vl) for _ in range(30)]
    final, results, timed_out = simulate_store_align(cases, ub, vl, seed=dist.value,
                                                     p_op=0.8, p_ready=0.7)
    assert compare_store_align(cases, ub, final, results, timed_out, vl) == []


def test_the_end_of_ub_exactly():
    """Every mode at the boundary: an op whose bytes end exactly at the end of UB is legal,
    one that ends a byte later is OutOfBounds (UB sized so that an aligned address lands
    there)."""
    from tilecosim.model.load_align import load_align_geometry
    by_size = {}
    for d in LoadDist:
        nbytes, _ = load_align_geometry(d, 256)
        by_size.setdefault(nbytes, []).append(d)
    for nbytes, dists in by_size.items():
        for ub_size in (2048 + nbytes, 2048 + nbytes - 1):      # fits / one byte short
            ub = np.random.default_rng(nbytes).integers(0, 256, ub_size, dtype=np.uint8)
            cases = [AlignCase(d.name, "b8", 2048) for d in dists]
            res = simulate_load_align(cases, ub)
            assert compare_load_align(cases, ub, res) == []
            want = 0 if ub_size == 2048 + nbytes else 6
            assert [r[3] for r in res.results] == [want] * len(cases), (nbytes, ub_size)


def test_a_dist_code_no_mode_has_faults_on_the_unit_as_in_the_model():
    """Every code of the 5-bit field that D12 leaves unused, between legal ops: the unit
    answers IllegalParameter (the model's fault, checked by compare_load_align) and moves on."""
    from tilecosim.hdl.common import FaultCode
    ub = np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8)
    unused = [4, 5, 10] + list(range(21, 32))
    cases = []
    for code in unused:
        cases += [AlignCase(code, "b8", 64), AlignCase("DIST_NORM", "b8", 32)]
    res = simulate_load_align(cases, ub)
    assert compare_load_align(cases, ub, res) == []
    assert [r[3] for r in res.results] == [FaultCode.IllegalParameter.value, 0] * len(unused)
