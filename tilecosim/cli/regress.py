"""``tilecosim regress``: the coverage-driven regression (:mod:`tilecosim.flows.regress`)."""

from __future__ import annotations

import argparse

from .common import BACKENDS, FMT, UsageError, int_arg, make_dir, seed_arg

REGRESS_HELP = """\
Constrained-random regression of the HDL engines against the golden model, driven by
functional coverage (each operation declares its bins in tilecosim/ops/): --count
scenarios per operation, legal and faulting, drawn from --seed and run in batches (back to
back, every other batch with random back-pressure) in --jobs processes.  On icarus and
verilator the batches run on each operation's batch harness (the whole batch inside the
design, up to 4096 scenarios per simulator start); on amaranth, on the Python-driven bench.
Prints a progress bar, each mismatch with a command that reproduces it alone, a summary
table per operation and the coverage; --json adds one JSON object on the last line.  Exit
1 on any mismatch.

examples:
  tilecosim regress --count 50
  tilecosim regress --backend verilator --ops tload --count 200 --seed 3 --json
  tilecosim regress --backend verilator --count 20000      # about a minute on 2 cores
"""

def _ops_arg(text):
    from tilecosim.flows.coverage import OPS
    ops = [o.strip() for o in text.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(OPS)}")
    return list(dict.fromkeys(ops))


def add_parsers(sub) -> dict:
    from tilecosim.flows.coverage import OPS
    p = sub.add_parser("regress", help="coverage-driven random regression, HDL vs golden model",
                       description=REGRESS_HELP, formatter_class=FMT)
    p.add_argument("--backend", choices=BACKENDS[1:], default="amaranth",
                   help="simulator of the HDL (default amaranth)")
    p.add_argument("--ops", type=_ops_arg, default=list(OPS), metavar="OP[,OP...]",
                   help="operations (default all: " + ",".join(OPS) + ")")
    p.add_argument("--count", type=int_arg("--count", 1, 100000), default=200, metavar="N",
                   help="scenarios per operation (default 200, enough to hit every bin)")
    p.add_argument("--seed", type=seed_arg("--seed"), default=1, metavar="S",
                   help="seed the scenarios are drawn from (0..2**64-1, default 1); the same "
                        "seed draws the same scenarios")
    p.add_argument("--jobs", type=int_arg("--jobs", 1, 256), default=None, metavar="J",
                   help="parallel processes (default: the CPUs available)")
    p.add_argument("--out", metavar="DIR", default="build/regress",
                   help="where the memory images (and hang waveforms) go (default build/regress)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return {"regress": cmd_regress}


def cmd_regress(args) -> int:
    from tilecosim.flows.regress import default_jobs, main_args
    if args.jobs is None:
        args.jobs = default_jobs()
    if args.backend != "amaranth":
        from tilecosim.sim.runner import missing
        if missing(args.backend):
            raise UsageError(f"--backend {args.backend}: {missing(args.backend)}")
    make_dir("--out", args.out)
    return main_args(args)
