"""The TLOAD engine on Icarus and Verilator: the same bench as on Amaranth's simulator, the
golden model's tiles, and the same cycle counts."""

import dataclasses
import json
import random

import pytest

from hdl.sim_tload import SimConfig, run_and_compare
from hdl.verilog import convert
from model.asm import params_to_asm
from model.display import seeded_memory
from model.scenarios import random_tload
from model.tload import TLoadLayout as L, TLoadParams

from .simulators import SIMULATORS, run_cocotb_test

MEM_SEED, MEM_SIZE = 11, 1 << 15


def scenario():
    rng = random.Random(5)
    plist = []
    for layout, dt in ((L.ND2NZ, "FP16"), (L.ND2ZN, "S8"), (L.NORM, "FP32"), (L.DN2NZ, "BF16"),
                       (L.DN2ZN, "S64")):
        plist.append(random_tload(rng, layout, dt, sizes=(512, 1024), n=rng.randint(1, 3))[0])
    plist.insert(2, TLoadParams(L.NORM, "FP16", valid_col=40, valid_row=1, col=32,
                                outputs=(("T", 512),)))            # IllegalParameter
    cfg = SimConfig(seed=4, p_req_ready=0.8, p_resp_valid=0.8, p_write_ready=0.8,
                    p_instr_valid=0.9)
    return plist, cfg


@pytest.mark.parametrize("sim", SIMULATORS)
def test_tload_engine(sim, tmp_path):
    plist, cfg = scenario()
    sc = {"tloads": [params_to_asm(p) for p in plist], "mem_seed": MEM_SEED,
          "mem_size": MEM_SIZE, "cfg": dataclasses.asdict(cfg)}
    (tmp_path / "scenario.json").write_text(json.dumps(sc))
    run_cocotb_test(sim, convert("tload_engine"), "tload_engine", "cocotb_tload",
                    tmp_path / "build",
                    {"TILECOSIM_SCENARIO": str(tmp_path / "scenario.json"),
                     "TILECOSIM_RESULT": str(tmp_path / "result.json")})
    got = json.loads((tmp_path / "result.json").read_text())
    assert got["problems"] == []
    ref, _, mism, problems = run_and_compare(plist, seeded_memory(MEM_SEED, MEM_SIZE), cfg)
    assert not mism and not problems
    a0, b0 = got["accept"][0], ref.accept_cycles[0]
    assert [a - a0 for a in got["accept"]] == [a - b0 for a in ref.accept_cycles]
    assert [d - a0 for d in got["done"]] == [d - b0 for d in ref.done_cycles]
    assert got["last_write"] - a0 == ref.last_write_cycle - b0
    assert got["faults"] == ref.faults
