"""``tilecosim regress``: the coverage-driven regression (:mod:`tilecosim.flows.regress`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import BACKENDS, FMT, UsageError, any_int, int_arg, make_dir, seed_arg

REGRESS_HELP = """\
Constrained-random regression of the HDL engines against the golden model, driven by
functional coverage (each operation declares its bins in tilecosim/ops/): --count scenarios
per operation, legal and faulting, drawn from --seed and run in batches (back to back, every
other batch with random back-pressure) in --jobs processes, or on a Dask cluster
(--scheduler, --cluster; needs dask[distributed]). On icarus and verilator the batches run
on each operation's batch harness (the whole batch inside the design, up to 4096 scenarios
per simulator start); on amaranth, on the Python-driven bench. Prints a progress bar, each
mismatch with a command that reproduces it alone, a summary table per operation, the
coverage and what each worker ran and built; --json adds one JSON object on the last line.
With --coverage (Verilator only), also the code coverage of the generated Verilog: line,
branch and toggle coverage per engine top, merged over every simulator run, with the listing
of what was never hit, lcov's .info (and HTML where lcov is installed) in --out/coverage,
under the waivers of tilecosim/flows/coverage_waivers.txt (or --coverage-waivers). The
report is the same for the same seed whatever runs it. Exit 1 on any mismatch. Stopped early
(Ctrl-C, SIGTERM, no worker able to run a job), it reports what it checked and exits 1 on a
mismatch, else 130, 143 or 2.

examples:
  tilecosim regress --count 50
  tilecosim regress --backend verilator --ops tload --count 200 --seed 3 --json
  tilecosim regress --backend verilator --count 20000      # about a minute on 2 cores
  tilecosim regress --cluster local:2 --count 200 --seed 1 # a Dask LocalCluster
  tilecosim regress --backend verilator --ops load-align --coverage --count 400
                                                    # with code coverage
  tilecosim regress --backend verilator --ops program --count 500  # whole programs on
                                                    # the RTL tile system, about 2 minutes

On machines of a Dask cluster (README, "Regressions on several machines"): start
`dask scheduler` on one host, `dask worker tcp://HOST:8786 --nworkers N --nthreads 1` on
the others, then run regress with --scheduler tcp://HOST:8786.
"""


def _cluster_arg(text):
    from tilecosim.flows.cluster import parse_local
    try:
        return parse_local(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--cluster {e}") from None


def _scheduler_arg(text):
    from tilecosim.flows.cluster import check_address
    try:
        return check_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--scheduler {e}") from None


def _ops_arg(text):
    from tilecosim.flows.coverage import OPS
    ops = [o.strip() for o in text.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(OPS)}")
    return list(dict.fromkeys(ops))


def add_parsers(sub) -> dict:
    from tilecosim.flows.coverage import OPS
    from tilecosim.ops import regress_default_names
    p = sub.add_parser("regress", help="coverage-driven random regression, HDL vs golden model",
                       description=REGRESS_HELP, formatter_class=FMT)
    p.add_argument("--backend", choices=BACKENDS[1:], default="amaranth",
                   help="simulator of the HDL (default amaranth)")
    default = regress_default_names()
    others = [o for o in OPS if o not in default]
    p.add_argument("--ops", type=_ops_arg, default=default, metavar="OP[,OP...]",
                   help="operations, of " + ",".join(OPS) + " (default "
                        + ",".join(default) + (": " + ", ".join(others) + " only when named"
                                               if others else "") + ")")
    p.add_argument("--width", type=any_int("--width"), choices=(32, 64, 128), default=32,
                   help="beat width W in bytes of the engines built at a width: TLOAD and the "
                        "tile system at 32, 64 or 128 (default 32); LoadAlign has a vector "
                        "length instead and runs the same at every W")
    p.add_argument("--count", type=int_arg("--count", 1, 100000), default=200, metavar="N",
                   help="scenarios per operation (default 200, enough to hit every bin)")
    p.add_argument("--seed", type=seed_arg("--seed"), default=1, metavar="S",
                   help="seed the scenarios are drawn from (0..2**64-1, default 1); the same "
                        "seed draws the same scenarios")
    where = p.add_argument_group("where the jobs run (one of)").add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int_arg("--jobs", 1, 256), default=None, metavar="J",
                       help="parallel processes on this machine (default: the CPUs available)")
    where.add_argument("--scheduler", type=_scheduler_arg, default=None, metavar="ADDRESS",
                       help="the Dask scheduler of a running cluster, e.g. "
                            "tcp://scheduler-host:8786 (its workers need this tilecosim and the "
                            "simulators)")
    where.add_argument("--cluster", type=_cluster_arg, default=None, metavar="local:N",
                       help="start a Dask LocalCluster of N worker processes on this machine "
                            "(127.0.0.1 only) for the run")
    p.add_argument("--build-cache", metavar="DIR", default=None,
                   help="the simulator build cache every job uses, e.g. a directory the "
                        "workers share (default: each worker's $TILECOSIM_BUILD_CACHE, else "
                        "~/.cache/tilecosim)")
    p.add_argument("--out", metavar="DIR", default="build/regress",
                   help="where the memory images (and hang waveforms) go (default build/regress)")
    p.add_argument("--coverage", action="store_true",
                   help="Verilator only: build with line and toggle coverage, merge the runs "
                        "and report per engine top (files in --out/coverage)")
    p.add_argument("--coverage-waivers", metavar="FILE", default=None,
                   help="the waivers of --coverage (default: tilecosim/flows/"
                        "coverage_waivers.txt; format in docs/verification.md)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return {"regress": cmd_regress}


def cmd_regress(args) -> int:
    from tilecosim.flows.regress import RunStopped, default_jobs, main_args
    on_cluster = args.scheduler or args.cluster
    if args.jobs is None:
        args.jobs = 1 if on_cluster else default_jobs()
    if args.backend != "amaranth" and not args.scheduler:    # remote workers check their own
        from tilecosim.sim.runner import missing
        if missing(args.backend):
            raise UsageError(f"--backend {args.backend}: {missing(args.backend)}")
    from tilecosim import ops
    for op in args.ops:
        try:
            ops.get(op).at_width(args.width)
        except ValueError as e:
            raise UsageError(f"{e}: choose the operations with --ops") from None
    if args.coverage_waivers is not None and not args.coverage:
        raise UsageError("--coverage-waivers: only with --coverage")
    if args.coverage:
        from tilecosim.flows.codecov import (WAIVERS, CoverageToolError, WaiverError,
                                             parse_waivers, yosys)
        if args.backend != "verilator":
            raise UsageError(f"--coverage: needs --backend verilator (not {args.backend}): "
                             "the coverage is Verilator's")
        if args.scheduler:
            raise UsageError("--coverage: not with --scheduler (each worker would write its "
                             "coverage on its own machine); use --jobs or --cluster local:N")
        args.coverage_waivers = args.coverage_waivers or str(WAIVERS)
        try:
            parse_waivers(args.coverage_waivers)
            yosys()
        except WaiverError as e:
            raise UsageError(f"--coverage-waivers: {e}") from None
        except CoverageToolError as e:
            raise UsageError(f"--coverage: {e}") from None
    make_dir("--out", args.out)
    if args.coverage:
        make_dir("--out", str(Path(args.out) / "coverage"))
    if args.build_cache and not args.scheduler:       # a remote worker checks its own path
        args.build_cache = str(make_dir("--build-cache", args.build_cache).resolve())
    try:
        return main_args(args)
    except RunStopped as e:                            # no cluster to run on
        raise UsageError(str(e)) from None
