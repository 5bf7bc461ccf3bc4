"""The LoadAlign unit on Icarus and Verilator: the same bench as on Amaranth's simulator,
the same results as the golden model, and the same cycle of every accept and result."""

import json
import random

import numpy as np
import pytest
from amaranth.back import verilog

from hdl.load_align_unit import LoadAlignUnit
from hdl.sim_align import AlignCase, compare_load_align, simulate_load_align
from model.load_align import WIDTHS, Addressing, LoadDist

from .simulators import SIMULATORS, run_cocotb_test

VL, UB = 256, 4096


def scenario(seed=7, n=60):
    rng = random.Random(seed)
    cases = []
    for k in range(n):
        d = list(LoadDist)[k % len(LoadDist)]
        kind = rng.choice(["plain", "post_update", "addr_reg"])
        how = Addressing() if kind == "plain" else Addressing(kind, rng.randint(-2, 8) * 16)
        cases.append(AlignCase(d.name, rng.choice(list(WIDTHS)), rng.randint(0, 50) * 32, how,
                               2 if rng.random() < 0.08 else 1))
    ub = np.random.default_rng(seed).integers(0, 256, UB, dtype=np.uint8)
    return cases, ub


@pytest.mark.parametrize("sim", SIMULATORS)
def test_load_align_unit(sim, tmp_path):
    cases, ub = scenario()
    sc = {"vl": VL, "seed": 3, "p_op": 0.8, "p_ready": 0.75, "ub": ub.tolist(),
          "cases": [{"dist": c.dist, "t": c.t, "addr": c.addr, "kind": c.how.kind,
                     "value": c.how.value, "reg_trait": c.reg_trait} for c in cases]}
    (tmp_path / "scenario.json").write_text(json.dumps(sc))
    text = verilog.convert(LoadAlignUnit(vl=VL, ub_size=UB), name="load_align_unit",
                           emit_src=False)
    run_cocotb_test(sim, text, "load_align_unit", "cocotb_load_align", tmp_path / "build",
                    {"TILECOSIM_SCENARIO": str(tmp_path / "scenario.json"),
                     "TILECOSIM_RESULT": str(tmp_path / "result.json")})
    got = json.loads((tmp_path / "result.json").read_text())
    assert got["problems"] == []
    ref = simulate_load_align(cases, ub, VL, seed=3, p_op=0.8, p_ready=0.75)
    assert compare_load_align(cases, ub, ref, VL) == []
    # the same bench gives the same cycle for every accept and every result on both simulators
    a0, b0 = got["accept"][0], ref.accept[0]
    assert [a - a0 for a in got["accept"]] == [a - b0 for a in ref.accept]
    assert [o - a0 for o in got["out"]] == [o - b0 for o in ref.out]
    assert got["faults"] == [r[3] for r in ref.results]
