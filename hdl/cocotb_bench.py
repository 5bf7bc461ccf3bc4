"""The cocotb test module that :func:`hdl.cosim.run_bench` runs inside Icarus or Verilator.

It unpickles the job ($TILECOSIM_JOB: the bench's ``setup`` function, its arguments and
the input ports), builds the simulator-neutral processes with the same ``setup`` as on
Amaranth's simulator, runs them with :func:`hdl.benchapi.run_cocotb`, and pickles the
filled result, the cycles simulated, the wall time of the run and any error raised by a
bench process to $TILECOSIM_RESULT.
"""

import os
import pickle
import time

import cocotb

from hdl.benchapi import run_cocotb


@cocotb.test()
async def bench(dut):
    with open(os.environ["TILECOSIM_JOB"], "rb") as f:
        job = pickle.load(f)
    procs, result = job["setup"](*job["args"])
    error, cycles = None, None
    t0 = time.perf_counter()
    try:
        cycles = await run_cocotb(dut, procs, inputs=job["inputs"])
    except AssertionError as e:
        error = str(e)
    seconds = time.perf_counter() - t0
    with open(os.environ["TILECOSIM_RESULT"], "wb") as f:
        pickle.dump({"result": result, "error": error, "cycles": cycles, "seconds": seconds}, f)
    assert error is None, error
