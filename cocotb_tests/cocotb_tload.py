"""cocotb test module: the TLOAD bench of hdl/sim_tload.py on a Verilog simulator.

Scenario from $TILECOSIM_SCENARIO (JSON: TLOADs as assembly text and registers, the memory
seed and size, the bench configuration); results to $TILECOSIM_RESULT.
"""

import json
import os

import cocotb
import numpy as np

from hdl.benchapi import run_cocotb
from hdl.sim_tload import TLOAD_INPUTS, SimConfig, SimResult, compare, finish, tload_procs
from model.asm import parse_tload
from model.display import seeded_memory
from model.tload import LCFR


def load(path):
    with open(path) as f:
        sc = json.load(f)
    plist = [parse_tload(text).resolve(regs) for text, regs in sc["tloads"]]
    if sc.get("mem_file"):
        mem = np.load(sc["mem_file"])
    else:
        mem = seeded_memory(sc["mem_seed"], sc["mem_size"])
    cfg = SimConfig(**sc["cfg"])
    return plist, mem, cfg


@cocotb.test()
async def tload_against_model(dut):
    plist, mem, cfg = load(os.environ["TILECOSIM_SCENARIO"])
    res = SimResult()
    await run_cocotb(dut, tload_procs(plist, mem, cfg, res), inputs=TLOAD_INPUTS)
    finish(res)
    problems = ["timed out"] if res.timed_out else []
    for i, p in enumerate(plist):
        code, mism = compare(p, mem, res, cfg.profile, LCFR(*cfg.lcfr), instr=i)
        problems += [str(m) for m in mism]
        if (res.faults[i] if i < len(res.faults) else None) != (code or 0):
            problems.append(f"instruction {i}: fault {res.faults[i:i + 1]}, model {code or 0}")
    with open(os.environ["TILECOSIM_RESULT"], "w") as f:
        json.dump({"accept": res.accept_cycles, "done": res.done_cycles,
                   "first_write": res.first_write_cycle, "last_write": res.last_write_cycle,
                   "faults": res.faults, "problems": problems}, f)
    assert not problems, "\n".join(problems)
