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

import contextlib
import dataclasses
import os
import queue
import random
import signal
import socket
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from tilecosim import ops
from tilecosim.cleanup import release_signals, signals_held, stopping
from tilecosim.ops import Operation, Outcome as RunOutcome
from tilecosim.sim import runner
from tilecosim.sim.design import BUILTIN, Design, DesignError
from tilecosim.sim.protocol import is_violation
from tilecosim.sim.runner import VERILOG_SIMS

from . import coverage as cov

__all__ = ["Scenario", "draw_scenarios", "plan_jobs", "run_job", "run_task", "run_regress",
           "RegressRun", "RunStopped", "WorkerError", "output_env"]


@dataclasses.dataclass
class Scenario:
    op: str
    index: int
    item: object                 # what the operation's generator drew (TLoadParams, LdtCall, ...)
    fault: str | None            # the model's fault kind, or None
    bins: list


# --- drawing -------------------------------------------------------------------------------

#: draws tried for one scenario inside a design's declared subset before giving up
SUBSET_TRIES = 5000


def draw_scenarios(op: str, count: int, seed: int, design: Design = BUILTIN) -> list[Scenario]:
    """``count`` scenarios of ``op`` from ``seed``, aimed at the bins still empty; for a
    design that declares a subset (D16), only scenarios inside it, aimed at the bins it can
    hit.  RunStopped when the subset admits no scenario."""
    rng = random.Random(f"{op}/{seed}")
    operation = ops.get(op).with_design(design)
    inside = operation.supports if design.supports else None
    gen = operation.draw
    hits = {b: 0 for b in cov.all_bins(op) if operation.applicable(b)}
    out = []
    # the bins aimed at once everything is hit: faults, and operands over their whole
    # encodings (``:far``)
    faults = [b for b in hits if ".fault:" in b or b.endswith(":far")]
    # the edges first, in their order (D17): every run hits them, at any count past theirs
    edges = [b for b in operation.edges() if b in hits]
    empty = True
    for k in range(count):
        if empty:                            # hits only grow: once all are hit, they stay
            empty = [b for b, n in hits.items() if n == 0]
        edge = next((b for b in edges if hits[b] == 0), None)
        hint = edge or (rng.choice(empty) if empty else None)
        want_fault = None
        if hint is None:                     # everything hit: one draw in eight aims at a
            want_fault = rng.random() < 0.125 and bool(faults)    # fault or far bin (none
            hint = rng.choice(faults) if want_fault else None      # in a subset without)
        pick = None
        for _ in range(200):
            item, fault, bins = gen(rng, hint)
            if inside is not None and not inside(item, fault):
                continue
            if (hint in bins) if hint else (fault is None) == (not want_fault):
                pick = (item, fault, bins)
                break
            if pick is None and any(hits.get(b) == 0 for b in bins):
                pick = (item, fault, bins)
        if pick is None and inside is not None:       # any scenario inside the subset
            for _ in range(SUBSET_TRIES):
                item, fault, bins = gen(rng, None)
                if inside(item, fault):
                    pick = (item, fault, bins)
                    break
            else:
                raise RunStopped(f"{op}: no scenario inside the subset the design declares "
                                 f"in {SUBSET_TRIES} draws: widen it")
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
    bench_seed: int | None = None       # the bench run's seed and back-pressure (a failure's:
    stall: float | None = None          # what re-runs it alone, :func:`mismatch_waves`)
    waveform: str | None = None         # the waveform of a failure re-run alone
    #: the class of a failure: "mismatch" (data or fault code) or "protocol" (a handshake
    #: rule of the contract broken: :mod:`tilecosim.sim.protocol`); "" when it passed
    kind: str = ""

    def __post_init__(self):
        if not self.ok and not self.kind:
            self.kind = "protocol" if is_violation(self.problem) else "mismatch"


@dataclasses.dataclass
class BatchResult:
    outcomes: list
    cycles: int = 0              # stall-free batches only
    ideal: int = 0
    waveform: str | None = None
    classes: dict = dataclasses.field(default_factory=dict)   # class -> [cycles, ideal, fill]


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


def run_job(op, batches, backend, seed, files, width: int = 32,
            design: Design = BUILTIN) -> list[BatchResult]:
    """Run the batches ``(scenarios, bench seed, stall)`` of one operation at beat width
    ``width`` on ``design`` (in one simulator start where the operation has a batch
    harness); on a failure, run each scenario of a failing batch alone (all in one more
    start) to find the culprits."""
    operation = ops.get(op).at_width(width).with_design(design)
    image = operation.image(seed)
    got = _run_many(operation, [([s.item for s in scs], bseed, stall)
                                for scs, bseed, stall in batches], backend, image)
    # a batch-level problem, or a hang (its waveform: _judge makes it one), is re-run one
    # scenario at a time to find the culprits
    lone = [(b, i) for b, ((scs, _, _), g) in enumerate(zip(batches, got))
            if len(scs) > 1 and (-1 in g.problems or g.waveform) for i in range(len(scs))]
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
                           cycles if not stall else 0, ideal if not stall else 0, None,
                           got.classes if not stall else {})
    outcomes = []
    for i, s in enumerate(scs):
        if len(scs) > 1 and -1 in problems:      # not attributable: the scenario alone
            one = alone[i]
            msg = (one.problems.get(0) or one.problems.get(-1)
                   or (f"hung; waveform: {one.waveform}" if one.waveform else ""))
        else:
            msg = problems.get(i) or (problems.get(-1) if len(scs) == 1 else "")
        outcomes.append(Outcome(op, s.index, not msg, msg, repro(s) if msg else "",
                                bseed if msg else None, stall if msg else None))
    if all(o.ok for o in outcomes):             # a batch-level problem nobody reproduces alone
        o = outcomes[-1]
        msg = problems.get(-1, "batch failed")
        outcomes[-1] = Outcome(op, o.index, False,
                               "fails only back to back with its batch: " + msg
                               if len(scs) > 1 else msg, repro(scs[-1]), bseed, stall)
    return BatchResult(outcomes, 0, 0, waveform)


class RunStopped(RuntimeError):
    """The run cannot go on for a reason outside the HDL: a simulator that cannot build, no
    worker able to run a job, a lost cluster.  The message is one line."""


class WorkerError(RunStopped):
    """A worker cannot run a job: its simulator is missing, it runs another tilecosim, its
    build cache cannot be written.  ``WorkerError(message, worker)``; the message names the
    worker, its host and what is missing.  The job itself is fine: it goes to another
    worker."""

    def __init__(self, message: str, worker: str):
        super().__init__(message, worker)
        self.worker = worker

    def __str__(self):
        return self.args[0]


_TOOLS: dict = {}


def run_task(job, worker: str, build_cache: str | None = None):
    """One job ``(op, batches, backend, seed, files)`` in a worker process (this one, a
    ``--jobs`` process or a Dask worker named ``worker``): ``(results, info)`` with info
    ``{"worker", "host", "builds", "seconds"}`` (``builds``: simulator models this job
    built; the others came from the build cache)."""
    host = socket.gethostname()
    worker = worker or f"pid {os.getpid()}"
    backend = job[2]
    if build_cache:
        try:
            Path(build_cache).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WorkerError(f"worker {worker} on host {host}: --build-cache {build_cache!r}: "
                              f"{e.strerror or e}", worker) from None
        os.environ["TILECOSIM_BUILD_CACHE"] = build_cache
    if backend not in _TOOLS:
        _TOOLS[backend] = runner.missing(backend)
    if _TOOLS[backend]:
        raise WorkerError(f"worker {worker} on host {host} cannot run {backend}: "
                          f"{_TOOLS[backend]}", worker)
    builds, t0 = runner.builds_made(), time.perf_counter()
    try:
        results = run_job(*job)
    except (runner.BenchError, DesignError) as e:
        raise RunStopped(f"worker {worker} on host {host}: {e}") from None
    return results, {"worker": worker, "host": host, "builds": runner.builds_made() - builds,
                     "seconds": time.perf_counter() - t0}


def _job(args):
    return run_task(*args)


def _pool_worker():
    """A ``--jobs`` process leads its own process group (with the simulators it starts), so
    that Ctrl-C in the terminal reaches the parent alone, and the parent can stop the
    process and its simulator at once.  What a killed process leaves in its temporary
    folder goes with the command's own (:func:`tilecosim.cleanup.private_tmp`).  It was
    forked with SIGINT and SIGTERM blocked (:func:`local_results`), and unblocks them."""
    os.setpgrp()
    release_signals()


def local_results(work, jobs: int, build_cache: str | None = None):
    """Yield ``(k, results, info)`` for the jobs ``work`` as they finish: in this process
    (``jobs`` 1) or in ``jobs`` processes.  Closing the generator early (an interrupted run)
    cancels what has not started and kills the processes and their simulators."""
    if jobs == 1:
        for k, w in enumerate(work):
            yield (k, *run_task(w, f"pid {os.getpid()}", build_cache))
        return
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_pool_worker)
    done = False
    try:
        # the pool forks its processes in submit: a signal there would land in an at-fork
        # hook, where Python drops the KeyboardInterrupt; it waits until they are started.
        # Finished jobs come through a queue, not concurrent.futures.wait/as_completed: a
        # KeyboardInterrupt inside those can leave futures' locks held, and the pool's thread
        # then hangs on them when the run is stopped
        finished = queue.SimpleQueue()
        with signals_held():
            futures = {pool.submit(_job, (w, "", build_cache)): k for k, w in enumerate(work)}
            for f in futures:
                f.add_done_callback(finished.put)
        for _ in futures:
            f = None
            while f is None:
                if stopping():           # the signal's KeyboardInterrupt went astray
                    raise KeyboardInterrupt
                try:
                    f = finished.get(timeout=0.25)
                except queue.Empty:
                    pass
            try:
                results, info = f.result()
            except BrokenProcessPool as e:
                raise RunStopped(f"a --jobs process died: {e}") from None
            yield futures[f], results, info
        done = True
    finally:
        if not done:
            for proc in list(getattr(pool, "_processes", {}).values()):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:                  # gone already, or not yet its own group
                    proc.kill()
        # wait, also for killed processes: the pool's thread must end before the interpreter
        # does, or CPython 3.11's exit hook writes to the pipe it closed ("Bad file descriptor")
        pool.shutdown(wait=True, cancel_futures=True)


#: scenarios per simulator start of a batch harness (its start-up, about 1.3 s on Verilator
#: and 1.6 s on Icarus, is paid once per job)
JOB_SCENARIOS = 4096


def plan_jobs(names, drawn, backend, seed, files, processes: int = 1, width: int = 32,
              design: Design = BUILTIN) -> list:
    """The jobs ``(op, batches, backend, seed, files, width, design)``: batches of
    ``op.harness_batch`` scenarios (``op.batch`` for an operation without a harness), never
    mixing batch keys, every other one with back-pressure -- the same batches on every
    backend, so that the same seed gives the same cycles on Amaranth, Icarus and Verilator
    (scenarios back to back overlap: the cycles depend on the grouping); a job is one batch,
    or on a harness up to :data:`JOB_SCENARIOS` scenarios of batches, and no more than an
    even share of the ``processes``."""
    jobs = []
    for op in names:
        operation = ops.get(op)
        harness = backend in VERILOG_SIMS and operation.harness_batch
        size = operation.harness_batch or operation.batch
        # a job carries what runs: not the coverage bins (half of its pickled size)
        scs = [Scenario(s.op, s.index, s.item, s.fault, ()) for s in drawn[op]]
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
            jobs += [(op, [b], backend, seed, files, width, design) for b in batches]
            continue
        per_job = max(1, min(JOB_SCENARIOS // size, -(-len(batches) // processes)))
        jobs += [(op, batches[k:k + per_job], backend, seed, files, width, design)
                 for k in range(0, len(batches), per_job)]
    return jobs


@dataclasses.dataclass
class RegressRun:
    """What a regression checked.  Everything but ``seconds`` and ``workers`` is the same
    for the same seed, whatever ran it (``--jobs``, a cluster of any size, workers lost
    and replaced)."""
    drawn: dict                  # op -> the scenarios checked (all drawn, unless stopped)
    outcomes: list               # Outcome, by op then index
    perf: dict                   # op -> [cycles, ideal cycles] of batches without back-pressure
    seconds: float
    planned: int                 # scenarios drawn
    workers: dict                # worker -> {"host", "jobs", "scenarios", "builds", "seconds"}
    stopped: str | None = None   # None: complete; else why it stopped ("interrupted", an error)
    jobs: list = dataclasses.field(default_factory=list)   # per job finished: {"op", "batches",
    #                              "scenarios", "worker", "seconds"}, in the order they finished
    classes: dict = dataclasses.field(default_factory=dict)   # op -> class -> [cycles, ideal,
    #                                                              fill]
    #                              of the batches without back-pressure


def run_regress(backend: str, names, count: int, seed: int, jobs: int, out_dir: Path,
                progress=None, cluster=None, build_cache: str | None = None,
                width: int = 32, design: Design = BUILTIN,
                max_failures: int | None = None) -> RegressRun:
    """Draw and run at beat width ``width`` (the same scenarios at every width), in this
    process (``jobs`` 1), ``jobs`` processes, or on ``cluster``
    (a :class:`tilecosim.flows.cluster.Cluster`).  Results are taken as they finish;
    Ctrl-C (KeyboardInterrupt), a job that cannot run anywhere, or ``max_failures``
    mismatches stop the run, and what was checked until then is returned with ``stopped``
    saying why."""
    with output_env(Path(out_dir)):
        return _run_regress(backend, names, count, seed, jobs, Path(out_dir), progress,
                            cluster, build_cache, width, design, max_failures)


@contextlib.contextmanager
def output_env(out_dir: Path):
    """Within: hang waveforms and failed runs' logs of this run go under ``out_dir`` (unless
    ``$TILECOSIM_WAVES_DIR`` / ``$TILECOSIM_LOG_DIR`` say otherwise); after, the environment
    is as it was, so no later run writes into this run's folder."""
    before = {k: os.environ.get(k) for k in ("TILECOSIM_WAVES_DIR", "TILECOSIM_LOG_DIR")}
    os.environ.setdefault("TILECOSIM_WAVES_DIR", str(out_dir.resolve()))
    os.environ.setdefault("TILECOSIM_LOG_DIR", str(out_dir.resolve() / "logs"))
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_regress(backend, names, count, seed, jobs, out_dir, progress, cluster, build_cache,
                 width, design, max_failures=None) -> RegressRun:
    files = image_files(out_dir, seed)
    drawn = {op: draw_scenarios(op, count, seed, design) for op in names}
    work = plan_jobs(names, drawn, backend, seed, files,
                     cluster.processes() if cluster else jobs, width, design)
    total = sum(len(scs) for w in work for scs, _, _ in w[1])
    outcomes, perf, workers, log, done, bad = [], {op: [0, 0] for op in names}, {}, [], 0, 0
    classes: dict = {}
    stopped = None
    t0 = time.perf_counter()
    results = (cluster.results(work, build_cache) if cluster
               else local_results(work, jobs, build_cache))
    try:
        for k, rs, info in results:
            n = 0
            for r in rs:
                outcomes += r.outcomes
                perf[work[k][0]][0] += r.cycles
                perf[work[k][0]][1] += r.ideal
                for cls, counts in r.classes.items():
                    row = classes.setdefault(work[k][0], {}).setdefault(cls, [0, 0, 0])
                    for j, v in enumerate(counts):
                        row[j] += v
                n += len(r.outcomes)
                bad += sum(not o.ok for o in r.outcomes)
            done += n
            w = workers.setdefault(info["worker"], {"host": info["host"], "jobs": 0,
                                                    "scenarios": 0, "builds": 0, "seconds": 0.0})
            w["jobs"] += 1
            w["scenarios"] += n
            w["builds"] += info["builds"]
            w["seconds"] += info["seconds"]
            log.append({"op": work[k][0], "batches": len(work[k][1]), "scenarios": n,
                        "worker": info["worker"], "seconds": info["seconds"]})
            if progress:
                progress(done, total, bad)
            if stopping():               # the signal's KeyboardInterrupt went astray
                raise KeyboardInterrupt
            if max_failures and bad >= max_failures:
                stopped = (f"{bad} mismatch{'es' if bad > 1 else ''}, the most "
                           f"--max-failures {max_failures} allows")
                break
    except KeyboardInterrupt:
        stopped = "interrupted"
    except RunStopped as e:
        stopped = str(e)
    finally:
        results.close()
    order = {op: i for i, op in enumerate(names)}
    outcomes.sort(key=lambda o: (order[o.op], o.index))
    if stopped:
        seen = {(o.op, o.index) for o in outcomes}
        drawn = {op: [s for s in scs if (op, s.index) in seen] for op, scs in drawn.items()}
    classes = {op: dict(sorted(c.items())) for op, c in sorted(classes.items(),
                                                                key=lambda kv: names.index(kv[0]))}
    return RegressRun(drawn, outcomes, perf, time.perf_counter() - t0, total, workers, stopped,
                      log, classes)


#: failures re-run alone with a waveform by :func:`mismatch_waves`
WAVES_PER_RUN = 3


def mismatch_waves(run: RegressRun, backend: str, seed: int, out_dir: Path, width: int = 32,
                   design: Design = BUILTIN, limit: int = WAVES_PER_RUN) -> list:
    """Re-run each of the first ``limit`` failures of ``run`` alone, with the bench seed and
    back-pressure of its batch, writing a waveform (VCD on Amaranth and Icarus, FST on
    Verilator) into ``out_dir``; its path goes into the outcome's ``waveform``.  Returns the
    outcomes given a waveform.  A failure that only fails back to back with its batch, or
    whose operation cannot run one scenario alone with waves, gets none."""
    done = []
    items = {(op, s.index): s.item for op, scs in run.drawn.items() for s in scs}
    for o in [o for o in run.outcomes if not o.ok and o.bench_seed is not None][:limit]:
        operation = ops.get(o.op).at_width(width).with_design(design)
        suffix = runner.WAVE_SUFFIX[backend]
        path = (out_dir / f"mismatch-{o.op}-{o.index}{suffix}").resolve()
        try:
            if operation.waveform(items[(o.op, o.index)], backend, operation.image(seed),
                                  o.bench_seed, o.stall, str(path)):
                o.waveform = str(path)
                done.append(o)
        except (AssertionError, runner.BenchError):    # it failed again: the waveform stays
            if path.exists():
                o.waveform = str(path)
                done.append(o)
    return done


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))
