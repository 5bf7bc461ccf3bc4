"""Every engine on Icarus and Verilator (cocotb, on the generated Verilog): the same bench
body as on Amaranth's simulator, the golden model's results, and the same cycle for every
accept, completion and write as Amaranth's simulator.

A cycle difference between simulators is a bug in the design, the bench or the conversion;
the assertion message says which event moved.
"""

import functools
import random

import numpy as np
import pytest

from tilecosim.sim.scenarios import random_ldt_call, random_load_case, random_store_case
from tilecosim.sim.benches.align import (compare_load_align, compare_store_align, simulate_load_align,
                           simulate_store_align)
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0
from tilecosim.sim.benches.tload import SimConfig, run_and_compare
from tilecosim.model.display import seeded_memory
from tilecosim.model.load_align import LoadDist, StoreDist
from tilecosim.model.load_data import LDT_DTYPES
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams

from .simulators import SIMULATORS, need


def relative(cycles, origin):
    return [c - origin for c in cycles]


# --- TLOAD ---------------------------------------------------------------------------------

def tload_scenario():
    rng = random.Random(5)
    plist = []
    for layout, dt in ((L.ND2NZ, "FP16"), (L.ND2ZN, "S8"), (L.NORM, "FP32"), (L.DN2NZ, "BF16"),
                       (L.DN2ZN, "S64")):
        plist.append(random_tload(rng, layout, dt, sizes=(512, 1024), n=rng.randint(1, 3))[0])
    plist.insert(2, TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32,
                                outputs=(("T", 512),)))            # IllegalParameter
    mem = seeded_memory(11, 1 << 15)
    return plist, mem


def run_tload(backend):
    plist, mem = tload_scenario()
    cfg = SimConfig(seed=4, p_req_ready=0.8, p_resp_valid=0.8, p_write_ready=0.8,
                    p_instr_valid=0.9, backend=backend)
    res, _, mism, problems = run_and_compare(plist, mem, cfg)
    assert not mism and not problems, "\n".join(map(str, mism + problems))
    assert 0 in res.faults and any(res.faults)                  # legal and faulting
    o = res.accept_cycles[0]
    return {"accept": relative(res.accept_cycles, o), "done": relative(res.done_cycles, o),
            "last write": res.last_write_cycle - o, "faults": res.faults}


# --- L1 -> L0 ------------------------------------------------------------------------------

def run_l1l0(backend):
    rng = random.Random(12)
    calls = []
    for dt in LDT_DTYPES:                      # every data type, on the same L0B
        c = random_ldt_call(rng, dt)
        calls.append(LdtCall(c.params, "L0B", c.dst, c.src))
    l1 = np.random.default_rng(3).integers(0, 256, 32768, dtype=np.uint8)
    l0 = np.random.default_rng(4).integers(0, 256, 16384, dtype=np.uint8)
    res, problems = run_and_compare_l1l0(calls, l1, l0, seed=2, stall=0.2, backend=backend)
    assert problems == [], "\n".join(problems)
    assert 0 in res.faults
    o = res.accept[0]
    return {"accept": relative(res.accept, o), "first write": res.first_write - o,
            "last write": res.last_write - o, "faults": res.faults}


# --- LoadAlign / StoreAlign ----------------------------------------------------------------

VL = 256


def run_load_align(backend):
    rng = random.Random(7)
    cases = [random_load_case(rng, d) for d in LoadDist for _ in range(3)]
    ub = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8)
    res = simulate_load_align(cases, ub, VL, seed=3, p_op=0.8, p_ready=0.75, backend=backend)
    assert compare_load_align(cases, ub, res, VL) == []
    o = res.accept[0]
    return {"accept": relative(res.accept, o), "out": relative(res.out, o),
            "faults": [r[3] for r in res.results]}


def run_store_align(backend):
    rng = random.Random(8)
    cases = [random_store_case(rng, d, VL) for d in StoreDist for _ in range(3)]
    ub = np.random.default_rng(8).integers(0, 256, 4096, dtype=np.uint8)
    timing = {}
    final, results, timed_out = simulate_store_align(cases, ub, VL, seed=5, p_op=0.8,
                                                     p_ready=0.75, backend=backend, timing=timing)
    assert compare_store_align(cases, ub, final, results, timed_out, VL) == []
    o = timing["accept"][0]
    return {"accept": relative(timing["accept"], o), "out": relative(timing["out"], o),
            "faults": [r[1] for r in results]}


BENCHES = {"tload_engine": run_tload, "l1l0_engine": run_l1l0,
           "load_align_unit": run_load_align, "store_align_unit": run_store_align}


@functools.cache
def on_amaranth(unit):
    return BENCHES[unit]("amaranth")


@pytest.mark.parametrize("sim", SIMULATORS)
@pytest.mark.parametrize("unit", list(BENCHES))
def test_same_results_and_cycles_as_amaranth(unit, sim):
    need(sim)
    got = BENCHES[unit](sim)                   # asserts the golden model's results
    want = on_amaranth(unit)
    for event in want:
        assert got[event] == want[event], f"{unit} on {sim}: the cycles of '{event}' differ " \
                                          f"from Amaranth's simulator"


def test_waves_1_writes_one_fst_per_run_named_after_the_test(tmp_path, monkeypatch):
    need("icarus")
    monkeypatch.setenv("WAVES", "1")
    monkeypatch.setenv("TILECOSIM_WAVES_DIR", str(tmp_path))
    rng = random.Random(1)
    cases = [random_load_case(rng, LoadDist.DIST_NORM) for _ in range(3)]
    ub = np.random.default_rng(1).integers(0, 256, 1024, dtype=np.uint8)
    for _ in range(2):
        res = simulate_load_align(cases, ub, VL, backend="icarus")
        assert compare_load_align(cases, ub, res, VL) == []
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["test_waves_1_writes_one_fst_per_run_named_after_the_test-icarus-2.fst",
                     "test_waves_1_writes_one_fst_per_run_named_after_the_test-icarus.fst"]
    for p in tmp_path.iterdir():
        assert p.read_bytes()[:8] == bytes(7) + b"\x01"        # an FST header block


@pytest.mark.parametrize("backend", ["amaranth", "icarus", "verilator"])
def test_reset_in_the_middle_of_an_instruction_returns_the_engine_to_idle(backend):
    """rst for two cycles while a transposing TLOAD streams; the next two instructions (one
    faulting) are right, on every simulator."""
    if backend != "amaranth":
        need(backend)
    rng = random.Random(9)
    mem = seeded_memory(12, 1 << 15)
    first = random_tload(rng, L.ND2ZN, "S8", sizes=(2048,), n=2)[0]
    plist = [first, random_tload(rng, L.DN2NZ, "FP16", sizes=(1024,), n=2)[0],
             TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32, outputs=(("T", 512),)),
             random_tload(rng, L.NORM, "FP32", sizes=(512,), n=1)[0]]
    for after in (3, 40):
        cfg = SimConfig(seed=after, p_req_ready=0.8, p_write_ready=0.8, reset_after=after,
                        backend=backend)
        res, _, mism, problems = run_and_compare(plist, mem, cfg)
        assert not mism and not problems, "\n".join(map(str, mism + problems))
        assert res.faults[1:] == [0, 2, 0]


@pytest.mark.parametrize("sim", SIMULATORS)
def test_regress_on_the_verilog_simulators(sim, tmp_path):
    """`tilecosim regress` drives the same batches through cocotb: every op, no mismatch."""
    import json
    import subprocess
    import sys
    need(sim)
    out = subprocess.run([sys.executable, "-m", "tilecosim", "regress", "--backend", sim, "--count", "6",
                          "--seed", "4", "--jobs", "1", "--out", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    obj = json.loads(out.stdout.splitlines()[-1])
    assert obj["scenarios"] == 18 and obj["mismatches"] == 0 and obj["backend"] == sim
