"""The cocotb test module that :func:`tilecosim.sim.runner.run_bench` runs inside Icarus or Verilator.

It unpickles the job ($TILECOSIM_JOB: the bench's ``setup`` function, its arguments and
the input ports), builds the simulator-neutral processes with the same ``setup`` as on
Amaranth's simulator, runs them with :func:`tilecosim.sim.api.run_cocotb`, and pickles the
filled result, the wall time of the run and any error raised by a
bench process to $TILECOSIM_RESULT.
"""

import os
import pickle
import time
import traceback

import cocotb

from tilecosim.sim.api import run_cocotb


@cocotb.test()
async def bench(dut):
    with open(os.environ["TILECOSIM_JOB"], "rb") as f:
        job = pickle.load(f)
    procs, result = job["setup"](*job["args"])
    error = None
    t0 = time.perf_counter()
    try:
        await run_cocotb(dut, procs, inputs=job["inputs"])
    except AssertionError as e:              # the bench caught the design misbehaving
        error = str(e)
    except Exception as e:                   # a broken bench: say where
        error = "".join(traceback.format_exception(e)[-3:]).strip()
    seconds = time.perf_counter() - t0
    with open(os.environ["TILECOSIM_RESULT"], "wb") as f:
        pickle.dump({"result": result, "error": error, "seconds": seconds}, f)
    assert error is None, error
