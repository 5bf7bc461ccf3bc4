"""The batch TLOAD harness against the Python-driven bench: the same instructions with the same
stall seed give the same tiles, fault codes and requests, and the same cycle for every
accept, completion and write; several batches share one simulator start, and both harnesses
equal the golden model."""

import gc
import random
import warnings

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from tilecosim.model.display import seeded_memory
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams
from tilecosim.sim.batch_tload import BatchTLoad, run_batch_tload, run_tload_batches
from tilecosim.sim.benches.tload import SimConfig, compare, simulate_tload

FIELDS = ("faults", "accept_cycles", "done_cycles", "first_write_cycle", "last_write_cycle",
          "cycles", "requests", "beats", "timed_out")


def instructions(seed):
    rng = random.Random(seed)
    plist = [random_tload(rng, lay, None, sizes=(256, 512), n=rng.randint(1, 2))[0]
             for lay in L for _ in range(2)]
    plist.insert(3, TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32,
                                outputs=(("T", 512),)))                 # IllegalParameter
    return plist


def same_result(a, b):
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    assert a.tiles.keys() == b.tiles.keys()
    for k in a.tiles:
        assert np.array_equal(a.tiles[k], b.tiles[k]) and np.array_equal(a.written[k],
                                                                         b.written[k]), k


def test_two_batches_in_one_start_equal_the_python_bench_cycle_for_cycle():
    plist, mem = instructions(3), seeded_memory(11, 1 << 15)
    cfgs = [SimConfig(seed=4),
            SimConfig(seed=5, p_req_ready=0.7, p_resp_valid=0.8, p_write_ready=0.6,
                      p_instr_valid=0.5)]
    got = run_tload_batches([(plist, c) for c in cfgs], mem, depth=64, beats=2048)
    for cfg, res in zip(cfgs, got):
        want = simulate_tload(plist, mem, cfg)
        same_result(res, want)
        assert 2 in res.faults and res.faults.count(0) == len(plist) - 1
        for i, p in enumerate(plist):
            code, mism = compare(p, mem, res, instr=i)
            assert mism == [] and (code or 0) == res.faults[i]
    assert got[1].cycles > got[0].cycles                     # the stalls did stall


def test_latency_and_a_wider_beat_stay_equal():
    plist, mem = instructions(8)[:5], seeded_memory(12, 1 << 15)
    cfg = SimConfig(seed=9, width=64, latency=5, p_req_ready=0.9, p_resp_valid=0.6,
                    p_write_ready=0.8)
    same_result(run_batch_tload(plist, mem, cfg, depth=8, beats=1024),
                simulate_tload(plist, mem, cfg))


def test_a_wrong_write_is_seen_by_the_comparison():
    """The harness replays its log through the bench's collector: a beat it lost shows up
    as unwritten bytes (the comparison is not vacuous on the harness's result)."""
    plist, mem = instructions(3)[:2], seeded_memory(11, 1 << 15)
    res = run_batch_tload(plist, mem, SimConfig(seed=1), depth=4, beats=2048)
    key = next(iter(res.written))
    res.written[key][:32] = False
    assert compare(plist[key[0]], mem, res, instr=key[0])[1]


def test_bad_batches_are_refused():
    plist, mem = instructions(3), seeded_memory(11, 1 << 15)
    with pytest.raises(ValueError, match="a batch holds 1..4"):
        run_batch_tload(plist, mem, SimConfig(), depth=4)
    with pytest.raises(ValueError, match="the same width"):
        run_tload_batches([(plist, SimConfig()), (plist, SimConfig(latency=3))], mem)
    with pytest.raises(ValueError, match="the harness holds 1024"):
        run_batch_tload(plist, mem, SimConfig(), mem_bytes=1024)
    with warnings.catch_warnings():
        # the half-built component is never elaborated: Amaranth would say so when it goes
        warnings.simplefilter("ignore", UnusedElaboratable)
        for kw, match in (({"latency": 0}, "latency=0: must be in 1..256"),
                          ({"depth": 0}, "depth=0: must be in 1..65536"),
                          ({"beats": 1 << 21}, "beats=2097152: must be in 1..1048576")):
            with pytest.raises(ValueError, match=match):
                BatchTLoad(**kw)
        gc.collect()


def test_a_write_log_too_small_for_the_batch_fails_loudly():
    plist, mem = instructions(3), seeded_memory(11, 1 << 15)
    with pytest.raises(AssertionError, match="overflowed the harness's write log"):
        run_batch_tload(plist, mem, SimConfig(), depth=16, beats=8)
