"""``tilecosim regress``: constrained-random, coverage-driven regression of every engine against
the golden model.

Scenarios are drawn from one seed, per operation, before anything runs: each draw aims at a
bin of :mod:`tilecosim.flows.coverage` that is still empty (a random one among them), trying up to 200
candidates for one that hits it; once every bin is hit, draws are plain random.  About one
draw in eight is a faulting operation.  The scenarios then run in batches -- back to back
through one engine, with or without random back-pressure (every other batch) -- on the
chosen backend, in ``--jobs`` processes.  A batch that fails is re-run one scenario at a time
to name the culprit; every failure prints a one-line command that reproduces it alone, and a
hang (the bench's watchdog) is re-run with a waveform.

Memory images come from the seed too: global memory (TLOAD), L1 (LoadDataWithTranspose) and
UB (LoadAlign) are written to the output directory so the reproduce commands can read them.
"""

import dataclasses
import json
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tilecosim import ops
from tilecosim.ops import Operation, Outcome as RunOutcome

from . import coverage as cov
from tilecosim.progress import Progress

__all__ = ["Scenario", "draw_scenarios", "run_regress", "main_args"]


@dataclasses.dataclass
class Scenario:
    op: str
    index: int
    item: object                 # what the operation's generator drew (TLoadParams, LdtCall, ...)
    fault: str | None            # the model's fault kind, or None
    bins: list


# --- drawing -------------------------------------------------------------------------------

def draw_scenarios(op: str, count: int, seed: int) -> list[Scenario]:
    """``count`` scenarios of ``op`` from ``seed``, aimed at the bins still empty."""
    rng = random.Random(f"{op}/{seed}")
    gen = ops.get(op).draw
    hits = {b: 0 for b in cov.all_bins(op)}
    out = []
    faults = [b for b in hits if ".fault:" in b]
    for k in range(count):
        empty = [b for b, n in hits.items() if n == 0]
        hint = rng.choice(empty) if empty else None
        want_fault = None
        if hint is None:                     # everything hit: one draw in eight faults
            want_fault = rng.random() < 0.125
            hint = rng.choice(faults) if want_fault else None
        pick = None
        for _ in range(200):
            item, fault, bins = gen(rng, hint)
            if (hint in bins) if hint else (fault is None) == (not want_fault):
                pick = (item, fault, bins)
                break
            if pick is None and any(hits.get(b) == 0 for b in bins):
                pick = (item, fault, bins)
        if pick is None:
            pick = (item, fault, bins)
        item, fault, bins = pick
        for b in bins:
            hits[b] = hits.get(b, 0) + 1
        out.append(Scenario(op, k, item, type(fault).__name__ if fault else None, bins))
    return out


# --- running -------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    op: str
    index: int
    ok: bool
    problem: str = ""
    repro: str = ""


@dataclasses.dataclass
class BatchResult:
    outcomes: list
    cycles: int = 0              # stall-free batches only
    ideal: int = 0
    waveform: str | None = None


def image_files(out_dir: Path, seed: int) -> dict:
    """Write the memory images the reproduce commands read; returns op -> path (None: the
    reproduce command regenerates its image from the seed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for op in ops.REGISTRY:
        paths[op.name] = None
        if op.regress and op.image_file:
            paths[op.name] = out_dir / op.image_file.format(seed=seed)
            op.image(seed).tofile(paths[op.name])
    return paths


def _run_many(operation: Operation, batches, backend, image) -> list[RunOutcome]:
    try:
        return operation.run_many(batches, backend, image)
    except AssertionError as e:                  # the bench caught the design misbehaving
        if len(batches) == 1:
            return [RunOutcome({-1: str(e).splitlines()[0]})]
        return [_run_many(operation, [b], backend, image)[0] for b in batches]


def run_job(op, batches, backend, seed, files) -> list[BatchResult]:
    """Run the batches ``(scenarios, bench seed, stall)`` of one operation (in one simulator
    start where the operation has a batch harness); on a failure, run each scenario of a
    failing batch alone (all in one more start) to find the culprits."""
    operation = ops.get(op)
    image = operation.image(seed)
    got = _run_many(operation, [([s.item for s in scs], bseed, stall)
                                for scs, bseed, stall in batches], backend, image)
    lone = [(b, i) for b, ((scs, _, _), g) in enumerate(zip(batches, got))
            if len(scs) > 1 and -1 in g.problems for i in range(len(scs))]
    alone = dict(zip(lone, _run_many(operation, [([batches[b][0][i].item],) + batches[b][1:]
                                                for b, i in lone], backend, image))) if lone else {}
    return [_judge(op, operation, scs, bseed, stall, g,
                   {i: alone[(b, i)] for i in range(len(scs)) if (b, i) in alone},
                   backend, seed, files)
            for b, ((scs, bseed, stall), g) in enumerate(zip(batches, got))]


def _judge(op, operation, scs, bseed, stall, got, alone, backend, seed, files) -> BatchResult:
    """The outcome of every scenario of a batch from the batch's run (``got``) and, for a
    failure not attributable to one scenario, the runs of each alone (``alone``)."""
    def repro(s):
        return operation.repro(s.item, backend, seed, files.get(op), stall, bseed)

    problems, waveform, cycles, ideal = got.problems, got.waveform, got.cycles, got.ideal
    if waveform:                                 # run_bench re-ran the hang with a waveform
        problems[-1] = f"the engine hung (watchdog); waveform: {waveform}"
    if not problems:
        return BatchResult([Outcome(op, s.index, True) for s in scs],
                           cycles if not stall else 0, ideal if not stall else 0)
    outcomes = []
    for i, s in enumerate(scs):
        if len(scs) > 1 and -1 in problems:      # not attributable: the scenario alone
            one = alone[i]
            msg = (one.problems.get(0) or one.problems.get(-1)
                   or (f"hung; waveform: {one.waveform}" if one.waveform else ""))
        else:
            msg = problems.get(i) or (problems.get(-1) if len(scs) == 1 else "")
        outcomes.append(Outcome(op, s.index, not msg, msg, repro(s) if msg else ""))
    if all(o.ok for o in outcomes):             # a batch-level problem nobody reproduces alone
        o = outcomes[-1]
        msg = problems.get(-1, "batch failed")
        outcomes[-1] = Outcome(op, o.index, False,
                               "fails only back to back with its batch: " + msg
                               if len(scs) > 1 else msg, repro(scs[-1]))
    return BatchResult(outcomes, 0, 0, waveform)


def _job(args):
    return run_job(*args)


#: scenarios per simulator start of a batch harness (its start-up, about 1.3 s on Verilator
#: and 1.6 s on Icarus, is paid once per job)
JOB_SCENARIOS = 4096


def plan_jobs(names, drawn, backend, seed, files, processes: int = 1) -> list:
    """The jobs ``(op, batches, backend, seed, files)``: batches of ``op.batch`` scenarios (or
    ``op.harness_batch`` on a harness), never mixing batch keys, every other one with
    back-pressure; a job is one batch, or on a harness up to :data:`JOB_SCENARIOS`
    scenarios of batches, and no more than an even share of the ``processes``."""
    from tilecosim.sim.runner import VERILOG_SIMS
    kind = "amaranth" if backend == "amaranth" else "verilog"
    jobs = []
    for op in names:
        operation = ops.get(op)
        harness = backend in VERILOG_SIMS and operation.harness_batch
        size = operation.harness_batch if harness else operation.batch[kind]
        scs = drawn[op]
        key = operation.batch_key
        if scs and key(scs[0].item) is not None:            # batches never mix keys
            scs = sorted(scs, key=lambda s: (key(s.item), s.index))
        batches = []
        for b, start in enumerate(range(0, len(scs), size)):
            batch = scs[start:start + size]
            keys = sorted({key(s.item) for s in batch}, key=str)
            if len(keys) > 1:
                for k, kk in enumerate(keys):
                    batches.append(([s for s in batch if key(s.item) == kk],
                                    seed * 1000 + 2 * b + k, 0.2 * ((b + k) % 2)))
                continue
            batches.append((batch, seed * 1000 + b, 0.2 * (b % 2)))
        if not harness:
            jobs += [(op, [b], backend, seed, files) for b in batches]
            continue
        per_job = max(1, min(JOB_SCENARIOS // size, -(-len(batches) // processes)))
        jobs += [(op, batches[k:k + per_job], backend, seed, files)
                 for k in range(0, len(batches), per_job)]
    return jobs


def run_regress(backend: str, names, count: int, seed: int, jobs: int, out_dir: Path,
                progress=None):
    """Draw and run; returns (scenarios by op, outcomes, per-op cycles/ideal, elapsed)."""
    files = image_files(out_dir, seed)
    os.environ.setdefault("TILECOSIM_WAVES_DIR", str(Path(out_dir).resolve()))   # hang waveforms
    drawn = {op: draw_scenarios(op, count, seed) for op in names}
    work = plan_jobs(names, drawn, backend, seed, files, jobs)
    total = sum(len(scs) for w in work for scs, _, _ in w[1])
    outcomes, perf, done, bad = [], {op: [0, 0] for op in names}, 0, 0
    t0 = time.perf_counter()
    if jobs > 1:
        pool = ProcessPoolExecutor(max_workers=jobs)
        results = pool.map(_job, work)
    else:
        pool, results = None, map(_job, work)
    try:
        for w, rs in zip(work, results):
            for r in rs:
                outcomes += r.outcomes
                perf[w[0]][0] += r.cycles
                perf[w[0]][1] += r.ideal
                done += len(r.outcomes)
                bad += sum(not o.ok for o in r.outcomes)
            if progress:
                progress(done, total, bad)
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return drawn, outcomes, perf, time.perf_counter() - t0


# --- reporting (used by the CLI) -----------------------------------------------------------

def summarize(drawn, outcomes, perf):
    hits = cov.hits(drawn)
    rows = []
    for op, scs in drawn.items():
        mism = sum(1 for o in outcomes if o.op == op and not o.ok)
        faults = sum(1 for s in scs if s.fault)
        cyc, ideal = perf[op]
        bins = cov.all_bins(op)
        rows.append({"op": op, "scenarios": len(scs), "mismatches": mism, "faults_checked": faults,
                     "cycles": cyc, "ideal_cycles": ideal,
                     "bins": len(bins), "covered": sum(1 for b in bins if hits[b])})
    uncovered = [b for b, n in hits.items() if n == 0]
    return rows, hits, uncovered


def main_args(args) -> int:
    """The ``regress`` subcommand (arguments parsed by :mod:`tilecosim.cli.regress`)."""
    out_dir = Path(args.out)
    bar = None

    def progress(done, total, bad):
        nonlocal bar
        bar = bar or Progress("regress", total, "scenarios")
        bar.update(done, f"{bad} mismatches")

    drawn, outcomes, perf, elapsed = run_regress(args.backend, args.ops, args.count, args.seed,
                                                 args.jobs, out_dir, progress)
    rows, hits, uncovered = summarize(drawn, outcomes, perf)
    fails = [o for o in outcomes if not o.ok]
    for o in fails[:50]:
        print(f"MISMATCH {o.op} #{o.index}: {o.problem}\n  reproduce: {o.repro}")
    if len(fails) > 50:
        print(f"... and {len(fails) - 50} more mismatches")
    print(f"\n{'op':26} {'scenarios':>9} {'mismatches':>10} {'faults':>7} "
          f"{'cycles/ideal':>12} {'bins':>9}")
    for r in rows:
        ratio = f"{r['cycles'] / r['ideal_cycles']:.2f}" if r["ideal_cycles"] else "-"
        print(f"{r['op']:26} {r['scenarios']:>9} {r['mismatches']:>10} {r['faults_checked']:>7} "
              f"{ratio:>12} {r['covered']:>4}/{r['bins']:<4}")
    print(f"backend {args.backend}, seed {args.seed}, {sum(r['scenarios'] for r in rows)} "
          f"scenarios in {elapsed:.0f} s ({args.jobs} jobs); cycles/ideal over the batches "
          f"without back-pressure; faults = faulting scenarios whose fault code was checked")
    if uncovered:
        print(f"uncovered bins ({len(uncovered)}): " + ", ".join(uncovered[:20])
              + (" ..." if len(uncovered) > 20 else ""))
    else:
        print(f"coverage: all {len(hits)} bins hit")
    if args.json:
        print(json.dumps({"backend": args.backend, "seed": args.seed,
                          "scenarios": sum(r["scenarios"] for r in rows),
                          "mismatches": len(fails),
                          "faults_checked": sum(r["faults_checked"] for r in rows),
                          "seconds": round(elapsed, 1), "ops": rows,
                          "coverage": hits, "uncovered": uncovered,
                          "failures": [dataclasses.asdict(o) for o in fails]}))
    return 1 if fails else 0


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))
