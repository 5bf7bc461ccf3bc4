"""What a Dask cluster costs and what it would give: ``tilecosim bench --only cluster``.

On this machine, the same regression (seed 1, every regress operation) runs with
``--jobs 2`` and on ``--cluster local:2``, on Verilator (the batch harnesses) and on
Amaranth (the Python bench, one batch per job): scenarios per second of each, the
LocalCluster's start, and the scheduler's own cost per task (a thousand empty tasks).

From the measured parts it then predicts a run on N workers, on paper:

    T(N) = draw + max(makespan(N), tasks(N) * per_task)

* ``draw``: drawing the scenarios, on the client (serial; measured);
* ``makespan(N)``: the jobs :func:`~tilecosim.flows.regress.plan_jobs` plans for N
  processes, each costing ``start(op) + batches * per_batch(op)`` (both measured: a job of
  one batch of one scenario, and the jobs of the measured run), handed out longest first to
  the worker free first;
* ``tasks(N) * per_task``: the scheduler handles tasks one after the other.

The prediction for N = 2 is set against the measured ``--cluster local:2`` run, so the model
is checked where it can be.  Not modelled: builds (one per worker and model without a shared
cache), the network, workers slower than this machine's.
"""

from __future__ import annotations

import heapq
import tempfile
import time
from pathlib import Path

from tilecosim import ops
from tilecosim.flows.cluster import connect
from tilecosim.flows.regress import draw_scenarios, plan_jobs, run_regress, run_task

__all__ = ["measure_cluster", "predict", "markdown", "COUNTS", "WORKERS"]

#: scenarios per operation of the measured runs, per backend (about 10 s each on 2 cores)
COUNTS = {"verilator": 4000, "amaranth": 100}
#: the runs predicted: (workers, scenarios per operation), per backend -- `make regress`'s
#: counts on 2, 10 and 100 workers, and on 100 a count that keeps them busy
WORKERS = {"verilator": ((2, 20000), (10, 20000), (100, 20000), (100, 100000)),
           "amaranth": ((2, 1000), (10, 1000), (100, 1000), (100, 10000))}
SEED = 1
#: runs of each configuration, alternated; the median is reported
REPEAT = 5


def _noop(x):
    return x


def _scheduler_cost(cluster, n: int = 1000) -> float:
    """Seconds per task of ``n`` empty tasks through the scheduler and back."""
    client = cluster.client
    client.gather(client.map(_noop, range(20), pure=False))          # warm
    t0 = time.perf_counter()
    client.gather(client.map(_noop, range(n), pure=False))
    return (time.perf_counter() - t0) / n


def _start_costs(backend, names, out) -> dict:
    """op -> seconds of a job of one batch of one scenario (the simulator's start, loading,
    one scenario, read-back)."""
    costs = {}
    for op in names:
        drawn = {op: draw_scenarios(op, 1, SEED)}
        (job,) = plan_jobs([op], drawn, backend, SEED, {})
        _, info = run_task(job, "")
        costs[op] = info["seconds"]
    return costs


def _per_batch(run, start) -> dict:
    """op -> seconds per batch beyond the job's start, over the jobs of ``run``."""
    per = {}
    for op in start:
        jobs = [j for j in run.jobs if j["op"] == op]
        batches = sum(j["batches"] for j in jobs)
        per[op] = max(0.0, sum(j["seconds"] - start[op] for j in jobs)) / max(1, batches)
    return per


def predict(backend: str, count: int, workers: int, draw_s: float, start: dict,
            per_batch: dict, per_task: float) -> dict:
    """The predicted run of ``count`` per op on ``workers`` single-threaded workers."""
    names = list(start)
    drawn = {op: draw_scenarios(op, count, SEED) for op in names}
    jobs = plan_jobs(names, drawn, backend, SEED, {}, workers)
    costs = sorted((start[op] + len(batches) * per_batch[op] for op, batches, *_ in jobs),
                   reverse=True)
    free = [0.0] * workers
    for c in costs:                               # longest first, to the worker free first
        heapq.heappush(free, heapq.heappop(free) + c)
    makespan = max(free)
    scheduler = len(jobs) * per_task
    total = draw_s + max(makespan, scheduler)
    n = count * len(names)
    return {"backend": backend, "workers": workers, "per_op": count, "scenarios": n,
            "tasks": len(jobs), "draw_s": round(draw_s, 2), "makespan_s": round(makespan, 2),
            "scheduler_s": round(scheduler, 2), "seconds": round(total, 2),
            "scenarios_per_s": round(n / total, 1), "work_s": round(sum(costs), 1),
            "efficiency": round(sum(costs) / (workers * total), 2)}


def measure_cluster(backends=("verilator", "amaranth")) -> dict:
    """The measured runs, the scheduler's cost and the predictions (see the module)."""
    names = ops.regress_default_names()
    out = {"ops": names, "runs": [], "predicted": []}
    with tempfile.TemporaryDirectory(prefix="tilecosim-bench-") as tmp:
        t0 = time.perf_counter()
        cluster = connect(local=2)
        out["cluster_start_s"] = round(time.perf_counter() - t0, 2)
        try:
            out["per_task_ms"] = round(_scheduler_cost(cluster) * 1e3, 3)
            for backend in backends:
                count = COUNTS[backend]
                run_regress(backend, names, 1, SEED, 1, Path(tmp))        # the builds
                t0 = time.perf_counter()                  # the workers' imports and checks
                run_regress(backend, names, 1, SEED, 2, Path(tmp), None, cluster)
                out.setdefault("first_run_s", {})[backend] = round(time.perf_counter() - t0, 2)
                start = _start_costs(backend, names, Path(tmp))
                rows, times = {}, {"jobs 2": [], "cluster local:2": []}
                for _ in range(REPEAT):                   # alternated: the machine's drift
                    for how in times:
                        on = cluster if how.startswith("cluster") else None
                        run = run_regress(backend, names, count, SEED, 2, Path(tmp), None, on)
                        assert run.stopped is None, run.stopped
                        times[how].append(run.seconds)
                        if run.seconds == sorted(times[how])[len(times[how]) // 2]:
                            rows[how] = run
                for how, ts in times.items():
                    run = rows[how]
                    n = len(run.outcomes)
                    med = sorted(ts)[len(ts) // 2]
                    out["runs"].append({
                        "backend": backend, "how": how, "per_op": count, "scenarios": n,
                        "jobs": len(run.jobs), "seconds": round(med, 2),
                        "all_seconds": [round(t, 2) for t in ts],
                        "scenarios_per_s": round(n / med, 1),
                        "match": all(o.ok for o in run.outcomes)})
                jobs2, local2 = (r["scenarios_per_s"] for r in out["runs"][-2:])
                out["runs"][-1]["vs_jobs"] = round(local2 / jobs2, 3)
                per_batch = _per_batch(rows["jobs 2"], start)
                draw_s = {}
                for big in sorted({c for _, c in WORKERS[backend]}):
                    t0 = time.perf_counter()
                    for op in names:
                        draw_scenarios(op, big, SEED)
                    draw_s[big] = time.perf_counter() - t0
                # the measured run's seconds start after the draw: so does its prediction
                check = predict(backend, count, 2, 0.0, start, per_batch,
                                out["per_task_ms"] / 1e3)
                check["measured_s"] = out["runs"][-1]["seconds"]
                out["predicted"].append(check | {"check": True})
                for n, big in WORKERS[backend]:
                    out["predicted"].append(predict(backend, big, n, draw_s[big], start,
                                                    per_batch, out["per_task_ms"] / 1e3))
                out.setdefault("model", {})[backend] = {
                    "start_s": {k: round(v, 3) for k, v in start.items()},
                    "per_batch_s": {k: round(v, 4) for k, v in per_batch.items()}}
        finally:
            cluster.close()
    return out


def markdown(res: dict) -> str:
    L = ["### Regress on a Dask cluster: `--jobs 2` against `--cluster local:2` (seed 1, "
         f"{', '.join(res['ops'])}; after the builds)", "",
         "| backend | run | per op | scenarios | jobs | seconds | scenarios/s | vs --jobs 2 |",
         "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in res["runs"]:
        spread = "/".join(f"{t:.1f}" for t in r["all_seconds"])
        L.append(f"| {r['backend']} | {r['how']} | {r['per_op']} | {r['scenarios']} "
                 f"| {r['jobs']} | {r['seconds']:.1f} ({spread}) | {r['scenarios_per_s']:,.1f} "
                 f"| {r.get('vs_jobs', 1.0):.3f} |")
    first = ", ".join(f"{b} {t} s" for b, t in res["first_run_s"].items())
    L += ["", f"Seconds: the median of {len(res['runs'][0]['all_seconds'])} runs, alternated "
          f"(all of them in brackets).  The LocalCluster starts in {res['cluster_start_s']} s, "
          f"and its first run (1 scenario per op: the workers' imports) takes {first}; the "
          f"scheduler takes {res['per_task_ms']} ms per task (1,000 empty tasks there and "
          "back).", "",
          "Predicted (T = draw + max(makespan, tasks x per task); the N = 2 row at the "
          "measured count is set against the measured local:2 run):", "",
          "| backend | workers | per op | tasks | draw s | makespan s | scheduler s | "
          "seconds | scenarios/s | efficiency |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in res["predicted"]:
        secs = (f"{p['seconds']:.1f} (measured {p['measured_s']:.1f})" if p.get("check")
                else f"{p['seconds']:.1f}")
        L.append(f"| {p['backend']} | {p['workers']} | {p['per_op']} | {p['tasks']} "
                 f"| {p['draw_s']:.2f} | {p['makespan_s']:.1f} | {p['scheduler_s']:.2f} "
                 f"| {secs} | {p['scenarios_per_s']:,.1f} | {p['efficiency']:.2f} |")
    return "\n".join(L) + "\n"
