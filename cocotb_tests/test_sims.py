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

from tilecosim import ops
from tilecosim.model.display import seeded_memory
from tilecosim.model.load_align import LoadDist
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams
from tilecosim.ops.load_align import VL, random_load_case
from tilecosim.sim.benches.align import compare_load_align, simulate_load_align
from tilecosim.sim.benches.tload import SimConfig, run_and_compare

from tests.tiers import tiered
from .simulators import SIMULATORS, need


@functools.cache
def on_amaranth(op):
    return ops.get(op).cross_check("amaranth")


@pytest.mark.parametrize("op,harness,sim", tiered(
    [(op, h, s) for op in ops.names() for h in ("python", "batch") for s in SIMULATORS
     if h == "python" or ops.get(op).harness_batch],
    lambda op, harness, sim: (sim == "verilator" and (harness == "batch"
                                                      or op not in ("tload", "program")))
    or (op, sim) in (("store-align", "icarus"), ("program", "icarus"),
                     ("program", "verilator"))))
def test_same_results_and_cycles_as_amaranth(op, sim, harness):
    """Every operation of the registry: its fixed scenario set (every mode, a fault,
    back-pressure) on the simulator, through the Python-driven bench and through the batch
    harness (where it has one: not the programs of the tile system), against the golden
    model and the Python bench's cycles on Amaranth.  (On Verilator, make test runs the
    Python bench of the TLOAD engine; the other units and the batch harnesses are in the
    slow tier there, and so are StoreAlign on Icarus and the programs on both: make test
    runs the programs on Icarus and Verilator in test_tiles.py, against Amaranth's cycles.)"""
    need(sim)
    got = ops.get(op).cross_check(sim, harness == "batch")   # asserts the golden model's
    want = on_amaranth(op)                                    # results
    for event in want:
        assert got[event] == want[event], f"{op} on {sim} ({harness} harness): the cycles " \
                                          f"of '{event}' differ from Amaranth's simulator"


def test_waves_1_writes_one_waveform_per_run_named_after_the_test(tmp_path, monkeypatch):
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
    stem = "test_waves_1_writes_one_waveform_per_run_named_after_the_test-icarus"
    assert names == [f"{stem}-2.vcd", f"{stem}.vcd"]                # Icarus: VCD
    for p in tmp_path.iterdir():
        text = p.read_text()
        assert text.startswith("$date") and "$scope module load_align_unit $end" in text


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


@pytest.mark.parametrize("sim", tiered(SIMULATORS, lambda sim: sim == "verilator"))
def test_regress_on_the_verilog_simulators(sim, tmp_path):
    """`tilecosim regress` drives the same batches through cocotb: every op, no mismatch.
    (Verilator in the slow tier: five harness builds in one test, two minutes on a fresh
    clone; make test runs the TLOAD harness on it in test_batch_tload.py.)"""
    import json
    import subprocess
    import sys
    need(sim)
    out = subprocess.run([sys.executable, "-m", "tilecosim", "regress", "--backend", sim, "--count", "6",
                          "--seed", "4", "--jobs", "1", "--out", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    obj = json.loads(out.stdout.splitlines()[-1])
    assert obj["scenarios"] == 24 and obj["mismatches"] == 0 and obj["backend"] == sim
