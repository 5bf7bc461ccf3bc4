"""Simulation speed: simulated cycles per second of Amaranth's simulator, Icarus and
Verilator on the same 64 KB TLOAD, with the Python-driven bench (Python every cycle: idle,
back-pressure and timing coverage) and with the bulk harness (memory and tiles inside the
design: Python starts the run and checks the end state).

    python -m tilecosim.perf.sim_speed [--repeat N] [--json FILE]

Every run is also checked against the golden model; the wall time counted is the run
proper (builds, conversion and the tile read-back are not).  ``make bench-sim`` runs it.
"""

import argparse
import json
import sys

from tilecosim.model.asm import parse_tload
from tilecosim.model.display import seeded_memory

from tilecosim.sim.bulk_tload import run_bulk_tload
from tilecosim.sim.runner import BACKENDS, missing
from tilecosim.sim.benches.tload import SimConfig, compare, simulate_tload

__all__ = ["SCENARIO", "measure", "main"]

#: the 64 KB scenario: a 128 x 256 FP16 matrix into one 64 KB Nz tile
SCENARIO = "TLOAD.ND2NZ <LB0:256, LB1:128, LB2:256, FP16, Zero>, [a0], ->T<64KB>"
MEM_SEED = 7


def _scenario():
    insn = parse_tload(SCENARIO)
    params = insn.resolve({"a0": 0})
    return params, seeded_memory(MEM_SEED, 128 * 256 * 2 + 64)


def measure(backend: str, harness: str, repeat: int) -> dict:
    """One row: cycles, seconds, cycles/s (and whether the run matched the model)."""
    params, mem = _scenario()
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilecosim.perf.sim_speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=4, metavar="N",
                    help="issue the TLOAD N times back to back (default 4)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat {args.repeat}: must be at least 1")
    rows = []
    print(f"scenario: {SCENARIO} (a0 = 0), issued {args.repeat} times")
    print(f"{'backend':10} {'harness':7} {'cycles':>8} {'seconds':>8} {'cycles/s':>10}  model")
    for backend in BACKENDS:
        if missing(backend):
            print(f"{backend:10} skipped: {missing(backend)}")
            continue
        for harness in ("python", "bulk"):
            r = measure(backend, harness, args.repeat)
            rows.append(r)
            print(f"{backend:10} {harness:7} {r['cycles']:>8} {r['seconds']:>8.2f} "
                  f"{r['cycles_per_s']:>10,.0f}  {'match' if r['match'] else 'MISMATCH'}",
                  flush=True)
    speed = {(r["backend"], r["harness"]): r["cycles_per_s"] for r in rows}
    base = speed.get(("amaranth", "bulk"))
    ratios = {}
    if base:
        for (b, h), v in speed.items():
            ratios[f"{b}/{h}"] = v / base
        print("cycles/s relative to Amaranth (bulk): "
              + ", ".join(f"{k} {v:.1f}x" for k, v in ratios.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scenario": SCENARIO, "repeat": args.repeat, "rows": rows,
                       "ratio_to_amaranth_bulk": ratios}, f, indent=1)
    return 0 if all(r["match"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
