"""cocotb test module: the LoadAlign bench of hdl/sim_align.py on a Verilog simulator.

The scenario (ops, UB image, seeds) comes from the JSON file named by $TILECOSIM_SCENARIO;
the results (fault codes, cycles, disagreements with the golden model) go to
$TILECOSIM_RESULT.  The bench body is the same as on Amaranth's simulator.
"""

import json
import os

import cocotb
import numpy as np

from hdl.benchapi import run_cocotb
from hdl.sim_align import (LOAD_INPUTS, AlignCase, AlignResult, compare_load_align,
                           load_align_procs)
from model.load_align import Addressing


def load_scenario(path):
    with open(path) as f:
        sc = json.load(f)
    cases = [AlignCase(c["dist"], c["t"], c["addr"], Addressing(c["kind"], c["value"]),
                       c["reg_trait"]) for c in sc["cases"]]
    ub = np.array(sc["ub"], dtype=np.uint8)
    return sc, cases, ub


@cocotb.test()
async def load_align_against_model(dut):
    sc, cases, ub = load_scenario(os.environ["TILECOSIM_SCENARIO"])
    res = AlignResult()
    procs = load_align_procs(cases, ub, sc["vl"], sc["seed"], sc["p_op"], sc["p_ready"], res)
    await run_cocotb(dut, procs, inputs=LOAD_INPUTS)
    problems = compare_load_align(cases, ub, res, sc["vl"])
    with open(os.environ["TILECOSIM_RESULT"], "w") as f:
        json.dump({"accept": res.accept, "out": res.out, "faults": [r[3] for r in res.results],
                   "problems": problems}, f)
    assert not problems, "\n".join(problems)
