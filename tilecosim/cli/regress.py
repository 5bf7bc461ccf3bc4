"""``tilecosim regress``: the coverage-driven regression (:mod:`tilecosim.flows.regress`): its
options, its checks, the run with its progress bar and signal handling, the report and the
exit status."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import signal
import sys
from pathlib import Path

from tilecosim import ops
from tilecosim.cleanup import caught_signal, write_whole
from tilecosim.flows import codecov, coverage as cov
from tilecosim.flows.cluster import check_address, connect, parse_local
from tilecosim.flows.codecov import WAIVERS, CoverageToolError, WaiverError, parse_waivers, yosys
from tilecosim.flows.coverage import OPS
from tilecosim.flows.junit import junit_xml
from tilecosim.flows.regress import (WAVES_PER_RUN, RunStopped, default_jobs, mismatch_waves,
                                     output_env, run_regress)
from tilecosim.ops import regress_default_names
from tilecosim.progress import Progress
from tilecosim.sim.design import BUILTIN
from tilecosim.sim.runner import missing
from tilecosim.version import git_description, stamp, version

from .common import (BACKENDS, FMT, UsageError, add_dut_options, any_int, check_writable,
                     design_of, int_arg, make_dir, seed_arg)

REGRESS_HELP = """\
Constrained-random regression of the HDL engines against the golden model, driven by
functional coverage (each operation declares its bins; --json lists them): --count scenarios
per operation, legal and faulting, drawn from --seed (a fresh seed each run unless given,
printed first) and run in batches (back to back, every
other batch with random back-pressure) in --jobs processes, or on a Dask cluster
(--scheduler, --cluster; needs dask[distributed]). On icarus and verilator the batches run
on each operation's batch harness (the whole batch inside the design, up to 4096 scenarios
per simulator start); on amaranth, on the Python-driven bench. Prints a progress bar, each
mismatch with a command that reproduces it alone, a summary table per operation, the
coverage and what each worker ran and built; --json adds one JSON object on the last line.
With --coverage (Verilator only), also the code coverage of the generated Verilog: line,
branch and toggle coverage per engine top, merged over every simulator run, with the listing
of what was never hit, lcov's .info (and HTML where lcov is installed) in --out/coverage,
under the built-in waivers (or --coverage-waivers FILE). The
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

On machines of a Dask cluster: start
`dask scheduler` on one host, `dask worker tcp://HOST:8786 --nworkers N --nthreads 1` on
the others, then run regress with --scheduler tcp://HOST:8786.
"""


def fresh_seed() -> int:
    """A seed from the operating system's entropy, below 2**32 so it is short to type."""
    return random.SystemRandom().randrange(2**32)


def _cluster_arg(text):
    try:
        return parse_local(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--cluster {e}") from None


def _scheduler_arg(text):
    try:
        return check_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--scheduler {e}") from None


def _ops_arg(text):
    ops = [o.strip() for o in text.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(OPS)}")
    return list(dict.fromkeys(ops))


def add_parsers(sub) -> dict:
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
    p.add_argument("--seed", type=seed_arg("--seed"), default=None, metavar="S",
                   help="seed the scenarios are drawn from (0..2**64-1); the same seed draws "
                        "the same scenarios (default: a fresh seed each run, printed first, so "
                        "that every run checks new scenarios and any run can be repeated)")
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
    p.add_argument("--require-coverage", action="store_true",
                   help="exit 1 when a functional bin stays uncovered, or with --coverage when "
                        "a top is below the code-coverage goal (without it both are reported "
                        "and the exit status is that of the comparison)")
    p.add_argument("--coverage-waivers", metavar="FILE", default=None,
                   help="the waivers of --coverage (default: the built-in ones, which the "
                        "JSON's code_coverage names); one per line, '<top|*> <kind> "
                        "<pattern> -- <reason>', kind line, branch or toggle")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--junit", metavar="FILE.xml", default=None,
                   help="also write JUnit XML for a CI server: a test suite per operation, a "
                        "test case per coverage bin, failing with the bin's first mismatch, "
                        "its reproduce line and waveform")
    p.add_argument("--no-waves", action="store_true",
                   help=f"do not re-run the first {WAVES_PER_RUN} mismatching scenarios alone "
                        "with a waveform (by default their paths follow their reproduce lines)")
    stop = p.add_mutually_exclusive_group()
    stop.add_argument("--fail-fast", dest="max_failures", action="store_const", const=1,
                      help="stop at the first mismatch (as --max-failures 1)")
    stop.add_argument("--max-failures", type=int_arg("--max-failures", 1, 10**9), default=None,
                      metavar="N", help="stop once N scenarios mismatched; the report covers "
                                        "what was checked (default: run every scenario)")
    add_dut_options(p)
    return {"regress": cmd_regress}


def cmd_regress(args) -> int:
    on_cluster = args.scheduler or args.cluster
    if args.jobs is None:
        args.jobs = 1 if on_cluster else default_jobs()
    if args.backend != "amaranth" and not args.scheduler:    # remote workers check their own
        if missing(args.backend):
            raise UsageError(f"--backend {args.backend}: {missing(args.backend)}")
    for op in args.ops:
        try:
            ops.get(op).at_width(args.width)
        except ValueError as e:
            raise UsageError(f"{e}: choose the operations with --ops") from None
    args.design = BUILTIN
    if args.dut or args.dut_amaranth or args.dut_top:
        if len(args.ops) != 1:
            raise UsageError(f"--dut: a design implements one operation; name it with --ops "
                             f"(not {','.join(args.ops)})")
        args.design = design_of(args, ops.get(args.ops[0]).at_width(args.width), args.backend)
    if args.coverage_waivers is not None and not args.coverage:
        raise UsageError("--coverage-waivers: only with --coverage")
    if args.coverage:
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
    check_writable("--junit", args.junit, (".xml",), "JUnit XML")
    make_dir("--out", args.out)
    if args.coverage:
        make_dir("--out", str(Path(args.out) / "coverage"))
    if args.build_cache and not args.scheduler:       # a remote worker checks its own path
        args.build_cache = str(make_dir("--build-cache", args.build_cache).resolve())
    args.seed_drawn = args.seed is None
    if args.seed_drawn:                 # printed once the run can start (run_and_report)
        args.seed = fresh_seed()
    try:
        return run_and_report(args)
    except RunStopped as e:                            # no cluster to run on
        raise UsageError(str(e)) from None


# --- the run and its report ------------------------------------------------------------------

def summarize(drawn, outcomes, perf, design=BUILTIN):
    """(rows, hits, uncovered, not applicable): one row per operation; the bins a design's
    declared subset cannot hit (D16) are neither covered nor uncovered, but not
    applicable."""
    hits = cov.hits(drawn)
    rows, na = [], []
    for op, scs in drawn.items():
        mism = sum(1 for o in outcomes if o.op == op and not o.ok)
        proto = sum(1 for o in outcomes if o.op == op and o.kind == "protocol")
        faults = sum(1 for s in scs if s.fault)
        cyc, ideal = perf[op]
        operation = ops.get(op).with_design(design)
        every = cov.all_bins(op)
        bins = [b for b in every if operation.applicable(b)]
        na += [b for b in every if not operation.applicable(b)]
        rows.append({"op": op, "scenarios": len(scs), "mismatches": mism,
                     "protocol_violations": proto, "faults_checked": faults,
                     "cycles": cyc, "ideal_cycles": ideal,
                     "bins": len(bins), "covered": sum(1 for b in bins if hits[b]),
                     "not_applicable": len(every) - len(bins)})
    uncovered = [b for b, n in hits.items() if n == 0 and b not in set(na)]
    return rows, hits, uncovered, na


def _count(n: int, what: str) -> str:
    """``1 job``, ``2 jobs``."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def _executor(args) -> str:
    if getattr(args, "scheduler", None):
        return f"scheduler {args.scheduler}"
    if getattr(args, "cluster", None):
        return f"cluster local:{args.cluster}"
    return f"jobs {args.jobs}"


def run_and_report(args) -> int:
    """Run the regression of ``args`` and print its report.  Exit
    1 on a mismatch (also in a stopped run); else 130 (SIGINT) or 143 (SIGTERM) when
    stopped by a signal, 2 when stopped by something outside the HDL (the one-line reason
    on stderr), 0 when complete."""
    out_dir = Path(args.out)
    width = getattr(args, "width", 32)
    bar = None

    def progress(done, total, bad):
        nonlocal bar
        bar = bar or Progress("regress", total, "scenarios")
        bar.update(done, f"{bad} mismatches")

    coverage = getattr(args, "coverage", False)
    raw = (out_dir / "coverage" / "runs").resolve()
    if coverage:                                 # Verilator's coverage of every run goes here
        shutil.rmtree(raw, ignore_errors=True)   # (this run's alone)
        raw.mkdir(parents=True)
        os.environ["TILECOSIM_COVERAGE_DIR"] = str(raw)
    cluster = None
    env = output_env(out_dir)                   # before the cluster's workers start
    env.__enter__()
    try:                 # a signal before the run starts stops the command (tilecosim.cli)
        if getattr(args, "scheduler", None) or getattr(args, "cluster", None):
            cluster = connect(args.scheduler, args.cluster)
        if getattr(args, "seed_drawn", False):   # before any scenario, after every refusal
            print(f"seed {args.seed} (drawn for this run; --seed {args.seed} repeats it)",
                  flush=True)
        run = run_regress(args.backend, args.ops, args.count, args.seed, args.jobs, out_dir,
                          progress, cluster, getattr(args, "build_cache", None), width,
                          getattr(args, "design", BUILTIN), getattr(args, "max_failures", None))
    finally:
        if cluster is not None:
            cluster.close()
        env.__exit__(None, None, None)
        os.environ.pop("TILECOSIM_COVERAGE_DIR", None)
    sig = caught_signal() or (signal.SIGINT if run.stopped == "interrupted" else None)
    design = getattr(args, "design", BUILTIN)
    rows, hits, uncovered, na = summarize(run.drawn, run.outcomes, run.perf, design)
    for r in rows:
        r["classes"] = {cls: {"cycles": c, "ideal_cycles": i, "fill_cycles": f,
                              "of_fill_bound": round((i + f) / c, 4) if c else None}
                        for cls, (c, i, f) in run.classes.get(r["op"], {}).items()}
    fails = [o for o in run.outcomes if not o.ok]
    if fails and not sig and not getattr(args, "no_waves", False):
        print(f"tilecosim regress: re-running the first {min(len(fails), WAVES_PER_RUN)} "
              f"mismatches alone with waves", file=sys.stderr, flush=True)
        with output_env(out_dir):
            mismatch_waves(run, args.backend, args.seed, out_dir, width,
                           getattr(args, "design", BUILTIN))
    checked = sum(r["scenarios"] for r in rows)
    for o in fails[:50]:
        print(f"{o.kind.upper()} {o.op} #{o.index}: {o.problem}\n  reproduce: {o.repro}"
              + (f"\n  waveform: {o.waveform}" if o.waveform else ""))
    if len(fails) > 50:
        print(f"... and {len(fails) - 50} more mismatches")
    print(f"\n{'op':26} {'scenarios':>9} {'mismatches':>10} {'faults':>7} "
          f"{'cycles/ideal':>12} {'bins':>9}")
    for r in rows:
        ratio = f"{r['cycles'] / r['ideal_cycles']:.2f}" if r["ideal_cycles"] else "-"
        print(f"{r['op']:26} {r['scenarios']:>9} {r['mismatches']:>10} {r['faults_checked']:>7} "
              f"{ratio:>12} {r['covered']:>4}/{r['bins']:<4}")
    for r in rows:
        per = [f"{cls} {v['cycles'] / v['ideal_cycles']:.2f}"
               + (f" ({v['of_fill_bound']:.2f} of its fill bound)" if v["fill_cycles"] else "")
               for cls, v in r["classes"].items() if v["ideal_cycles"]]
        if per:
            print(f"  {r['op']} cycles/ideal by class: " + ", ".join(per))
    proto = [f"{r['op']} {r['protocol_violations']}" for r in rows if r["protocol_violations"]]
    if proto:
        print(f"protocol violations (of the mismatches; a handshake rule of the contract broken, "
              f"whatever the data): {', '.join(proto)}")
    print(f"design {design.label()}, backend {args.backend}, W = {width}, seed {args.seed}, {checked} "
          f"scenarios in {run.seconds:.0f} s ({_executor(args)}); cycles/ideal over the batches "
          f"without back-pressure; of its fill bound: (ideal + the fill of each transposing "
          f"instruction, D14) / cycles, above 1 where a fill overlaps the instruction before; "
          f"faults = faulting scenarios whose fault code was checked; bins = functional "
          f"coverage bins hit / the operation's bins")
    if uncovered:
        listed = out_dir / "uncovered-bins.txt"
        write_whole(listed, "\n".join(uncovered) + "\n")
        print(f"uncovered bins ({len(uncovered)}): " + ", ".join(uncovered[:20])
              + (f" ... (all {len(uncovered)} in {listed})" if len(uncovered) > 20
                 else f" (also in {listed})"))
    else:
        print(f"coverage: all {len(hits) - len(na)} bins hit"
              + (f" that the design's declared subset can hit; {len(na)} not applicable"
                 if na else ""))
    for name, w in sorted(run.workers.items()):
        print(f"worker {name} (host {w['host']}): {_count(w['jobs'], 'job')}, "
              f"{_count(w['scenarios'], 'scenario')}, {_count(w['builds'], 'build')}, "
              f"{w['seconds']:.1f} s")
    if run.stopped:
        print(f"STOPPED ({run.stopped}): {checked} of {run.planned} scenarios checked; the "
              f"report covers those alone")
    code = None
    if coverage:
        print(f"code coverage: merging {len(list(raw.glob('*.dat')))} runs; the netlist's "
              "constant bits from Yosys, once per build (a minute or two)", file=sys.stderr,
              flush=True)
        try:
            code = codecov.report(raw, out_dir / "coverage", Path(args.coverage_waivers),
                                  parts={t.name: t.parts for t in ops.tops() if t.parts})
        except codecov.CoverageToolError as e:
            print(f"tilecosim regress: error: {e}", file=sys.stderr)
            return 2
        shutil.rmtree(raw, ignore_errors=True)   # merged into coverage/coverage.dat
        print("\n".join(codecov.table(code)))
    junit = getattr(args, "junit", None)
    if junit:
        try:
            write_whole(junit, junit_xml(
                run.drawn, hits, run.outcomes, na,
                {"backend": args.backend, "design": design.label(), "width": width,
                 "seed": args.seed, "version": version(), "git": git_description() or ""},
                run.seconds, getattr(args, "require_coverage", False), run.stopped))
        except OSError as e:
            print(f"tilecosim regress: error: --junit {junit!r}: {e.strerror or e}",
                  file=sys.stderr)
            return 2
        print(f"junit: {junit}")
    if args.json:
        print(json.dumps(stamp({"backend": args.backend, "design": design.label(),
                          "width": width, "seed": args.seed,
                          "seed_drawn": getattr(args, "seed_drawn", False),
                          "scenarios": checked,
                          "mismatches": len(fails),
                          "protocol_violations": sum(o.kind == "protocol" for o in fails),
                          "faults_checked": sum(r["faults_checked"] for r in rows),
                          "seconds": round(run.seconds, 1), "ops": rows,
                          "coverage": hits, "uncovered": uncovered, "not_applicable": na,
                          "failures": [dataclasses.asdict(o) for o in fails],
                          "planned": run.planned, "stopped": run.stopped,
                          "executor": _executor(args), "junit": junit,
                          "workers": [{"worker": k} | v | {"seconds": round(v["seconds"], 1)}
                                      for k, v in sorted(run.workers.items())]}
                         | ({"code_coverage": code} if coverage else {}))))
    if fails:
        return 1
    if sig:
        print(f"tilecosim regress: stopped by {signal.Signals(sig).name}; the report covers "
              f"the {checked} scenarios checked", file=sys.stderr)
        return 128 + sig
    if run.stopped:
        print(f"tilecosim regress: error: {run.stopped}", file=sys.stderr)
        return 2
    if getattr(args, "require_coverage", False):
        short = [t["top"] for t in (code or {}).get("tops", []) if not t["meets_goal"]]
        if uncovered or short:
            print("tilecosim regress: coverage required (--require-coverage): "
                  + "; ".join(([f"{len(uncovered)} functional bins uncovered"] if uncovered
                               else [])
                              + ([f"below the code-coverage goal: {', '.join(short)}"]
                                 if short else [])), file=sys.stderr)
            return 1
    return 0
