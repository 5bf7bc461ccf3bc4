"""Simulation speed: simulated cycles per second of Amaranth's simulator, Icarus and
Verilator on the same 64 KB TLOAD stream, with the Python-driven bench (Python every cycle:
idle, back-pressure and timing coverage) and with the bulk harness (memory and tiles inside
the design: Python starts the run and checks the end state): ``tilecosim bench --only
speed``; and the scenarios per second of ``regress`` on each backend: ``--only regress``.

Every run is also checked against the golden model; the wall time counted for cycles/s is
the run proper (builds, conversion and the tile read-back are not), for scenarios/s the
whole regression after its builds (drawing, simulator starts, loading, read-back and the
comparisons).
"""

import tempfile
from pathlib import Path

from tilecosim import ops
from tilecosim.flows.regress import run_regress
from tilecosim.model.asm import parse_tload
from tilecosim.model.display import seeded_memory
from tilecosim.sim.benches.tload import SimConfig, compare, simulate_tload
from tilecosim.sim.bulk_tload import run_bulk_tload

__all__ = ["SCENARIO", "scenario", "measure", "regress_rate", "REGRESS_COUNTS"]

#: the 64 KB scenario: a 128 x 256 FP16 matrix into one 64 KB Nz tile
SCENARIO = "TLOAD.ND2NZ <LB0:256, LB1:128, LB2:256, FP16, Zero>, [a0], ->T<64KB>"
MEM_SEED = 7


def scenario():
    insn = parse_tload(SCENARIO)
    params = insn.resolve({"a0": 0})
    return params, seeded_memory(MEM_SEED, 128 * 256 * 2 + 64)


def measure(backend: str, harness: str, repeat: int) -> dict:
    """One row: cycles, seconds, cycles/s (and whether the run matched the model)."""
    params, mem = scenario()
    if harness == "bulk":
        res, problems = run_bulk_tload(params, mem, backend, repeat=repeat)
        cycles, seconds = res.cycles, res.seconds
    else:
        timing = {}
        plist = [params] * repeat
        res = simulate_tload(plist, mem, SimConfig(backend=backend), timing=timing)
        problems = [str(m) for i in range(repeat) for m in compare(params, mem, res, instr=i)[1]]
        cycles, seconds = res.last_write_cycle, timing["seconds"]
    return {"backend": backend, "harness": harness, "cycles": cycles, "seconds": seconds,
            "cycles_per_s": cycles / seconds if cycles and seconds else None,
            "match": not problems}


#: scenarios per operation of the regress rate, per backend: the same seed and op mix (the
#: first scenarios drawn are the same whatever the count), as many as each backend runs in
#: about half a minute on one core; Verilator is also measured at Amaranth's count, where
#: its start-ups (about 1.3 s each) weigh more
REGRESS_COUNTS = {"amaranth": 100, "icarus": 100, "verilator": 2000}
REGRESS_SEED = 1


def regress_rate(backend: str, count: int) -> dict:
    """One row: ``count`` scenarios of each regress operation, seed 1, one job, on
    ``backend``; scenarios per second of the whole run (after a first run of one scenario
    per operation has built the designs)."""
    names = ops.regress_default_names()
    with tempfile.TemporaryDirectory(prefix="tilecosim-bench-") as tmp:
        run_regress(backend, names, 1, REGRESS_SEED, 1, Path(tmp))        # the builds
        run = run_regress(backend, names, count, REGRESS_SEED, 1, Path(tmp))
    outcomes, seconds = run.outcomes, run.seconds
    n = len(outcomes)
    return {"backend": backend, "ops": names, "per_op": count, "scenarios": n,
            "seconds": round(seconds, 2), "scenarios_per_s": n / seconds,
            "match": all(o.ok for o in outcomes)}
