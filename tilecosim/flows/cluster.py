"""``tilecosim regress`` on a Dask cluster (``dask.distributed``, an optional extra).

    tilecosim regress --scheduler tcp://HOST:8786 ...   # workers started with `dask worker`
    tilecosim regress --cluster local:N ...              # a LocalCluster on 127.0.0.1

The regression's jobs (:func:`tilecosim.flows.regress.plan_jobs`, planned for as many
processes as the cluster has worker threads) become Dask tasks.  Each runs
:func:`tilecosim.flows.regress.run_task` in a worker, which builds the simulator models it
needs in its own content-keyed build cache (``$TILECOSIM_BUILD_CACHE`` of the worker, or
``--build-cache DIR``, which may be shared), and returns its results with the number of
builds it made.  Results come back as tasks finish; the report does not depend on their
order.

Faults of the cluster:

* a worker dies (killed, out of memory, its host gone): Dask runs its tasks again on the
  others (up to ``distributed.scheduler.allowed-failures`` times, 3 by default);
* a worker that cannot run a task -- its simulator is missing, it runs another tilecosim
  (the sources' digest differs), its build cache cannot be written -- fails it with a
  :class:`~tilecosim.flows.regress.WorkerError` naming the worker, its host and what is
  missing; the task then goes to the other workers, and the run stops only when none is
  left;
* a scheduler that cannot be reached, or has no workers: :class:`ClusterError` (exit 2).
"""

from __future__ import annotations

import hashlib
import logging
import re
import socket
import sys
import threading
import uuid
from pathlib import Path

import tilecosim
import tilecosim.hdl
import tilecosim.model

from .regress import RunStopped, WorkerError, run_task

__all__ = ["ClusterError", "Cluster", "connect", "parse_local", "check_address",
           "source_digest", "cluster_task", "INSTALL_HINT"]

INSTALL_HINT = ("pip install 'dask[distributed]' into tilecosim's environment "
                "(`make install` does it: the test extra includes it; or "
                "pip install -e '.[cluster]' in the checkout)")

#: seconds to reach a scheduler, and to wait for its first worker
CONNECT_TIMEOUT = 10


#: Dask's housekeeping, slowed for a LocalCluster that shares its cores with the
#: simulators: an idle 2-worker cluster took 12 % of a core with Dask's defaults (the
#: workers' 10 ms profiler, 100 ms memory monitor, 20 ms event-loop tick), 1.4 % with
#: these.  ``dask worker`` on other machines reads the same keys from its environment
#: (README: DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False, ...).
LOCAL_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.work-stealing-interval": "1s",
}


class ClusterError(RunStopped):
    """No cluster to run on: dask.distributed missing, a scheduler that cannot be reached or
    has no workers.  One line; the command line exits 2."""


_ADDRESS = re.compile(r"^(?:(?:tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def check_address(text: str) -> str:
    """A scheduler address as ``dask worker`` takes it: ``tcp://HOST:PORT`` (``tls://``, or
    no scheme: tcp); ValueError naming what is wrong otherwise."""
    m = _ADDRESS.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a scheduler address like tcp://HOST:8786")
    if not 1 <= int(m[2]) <= 65535:
        raise ValueError(f"{text!r}: port {m[2]} is not in 1..65535")
    return text.strip()


def parse_local(text: str) -> int:
    """``local:N`` -> N (1..256); ValueError otherwise."""
    m = re.fullmatch(r"local:(\d+)", text.strip())
    if not m:
        raise ValueError(f"{text!r} is not local:N (N worker processes on this machine)")
    n = int(m[1])
    if not 1 <= n <= 256:
        raise ValueError(f"{text!r}: N must be in 1..256")
    return n


_DIGEST: list = []


def source_digest() -> str:
    """SHA-1 of this tilecosim's Python sources (the tool, the model and the gateware): a
    worker must run the same to give the same report."""
    if not _DIGEST:
        h = hashlib.sha1()
        for mod in (tilecosim, tilecosim.model, tilecosim.hdl):
            root = Path(mod.__file__).resolve().parent
            for path in sorted(root.rglob("*.py")):
                h.update(f"{mod.__name__}/{path.relative_to(root).as_posix()}\0".encode()
                         + path.read_bytes())
        _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def cluster_task(job, build_cache: str | None, digest: str, client_host: str = ""):
    """The Dask task: :func:`~tilecosim.flows.regress.run_task` in this worker, after
    checking that it runs the client's tilecosim.  One job at a time per worker process
    (the simulators' environment is per process).  A hang's waveform written on another
    host than the client's says which."""
    # optional dependency (dask[distributed]): imported for a cluster run only
    from distributed import get_worker
    worker, host = get_worker().address, socket.gethostname()
    if source_digest() != digest:
        raise WorkerError(f"worker {worker} on host {host} runs another "
                          f"tilecosim (sources {source_digest()[:12]}, the client's "
                          f"{digest[:12]}): install the same checkout there (make install)",
                          worker)
    with _ONE_AT_A_TIME:
        results, info = run_task(job, worker, build_cache)
    if client_host and host != client_host:
        for r in results:
            for o in r.outcomes:
                if "waveform: " in o.problem:
                    o.problem += f" (on host {host})"
    return results, info


_ONE_AT_A_TIME = threading.Lock()


def _note(text: str) -> None:
    print(f"regress: {text}", file=sys.stderr, flush=True)


class Cluster:
    """A connected ``distributed.Client`` (and the LocalCluster it owns, if any)."""

    def __init__(self, client, local=None, name: str = "", note=_note):
        self.client, self.local, self.name, self.note = client, local, name, note

    def workers(self) -> dict:
        """address -> worker threads, of the workers connected now."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return {addr: w.get("nthreads", 1) for addr, w in info.items()}

    def processes(self) -> int:
        """How many jobs run at once: the worker threads of the cluster."""
        return max(1, sum(self.workers().values()))

    def results(self, work, build_cache: str | None = None):
        """Yield ``(k, results, info)`` for the jobs ``work`` as their tasks finish.  A task a
        worker cannot run goes to the others; closing the generator cancels the rest."""
        # optional dependency (dask[distributed]): imported for a cluster run only
        from distributed import as_completed
        digest, run, here = source_digest(), uuid.uuid4().hex[:8], socket.gethostname()
        futures, bad, tries = {}, {}, {}

        def submit(k):
            tries[k] = tries.get(k, 0) + 1
            allowed = None
            if bad:
                allowed = [w for w in self.workers() if w not in bad]
                if not allowed:
                    raise ClusterError(f"no worker can run the batches: {list(bad.values())[-1]}")
            f = self.client.submit(cluster_task, work[k], build_cache, digest, here,
                                   key=f"tilecosim-regress-{run}-{k}-{tries[k]}",
                                   workers=allowed, allow_other_workers=False, pure=False)
            futures[f] = k
            return f

        pending = as_completed([submit(k) for k in range(len(work))])
        try:
            for f in pending:
                k = futures.pop(f)
                if f.status == "error":
                    e = f.exception()
                    if isinstance(e, WorkerError):
                        if e.worker not in bad:
                            bad[e.worker] = str(e)
                            self.note(f"{e}; its jobs go to the other workers")
                        pending.add(submit(k))
                        continue
                    if isinstance(e, RunStopped):
                        raise RunStopped(str(e))
                    raise ClusterError(f"job {k} ({work[k][0]}) failed on the cluster: "
                                       f"{type(e).__name__}: {e}")
                if f.status == "cancelled":
                    raise ClusterError(f"job {k} ({work[k][0]}) was cancelled by the scheduler")
                results, info = f.result()
                f.release()
                yield k, results, info
        finally:
            if futures:
                self.client.cancel(list(futures), force=True)

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()


def connect(scheduler: str | None = None, local: int | None = None,
            timeout: float = CONNECT_TIMEOUT) -> Cluster:
    """A :class:`Cluster`: a client of the scheduler at ``scheduler``, or of a new
    LocalCluster of ``local`` single-threaded worker processes on 127.0.0.1."""
    try:
        # optional dependency (dask[distributed]): imported for a cluster run only
        import distributed
    except ImportError:
        opt = "--scheduler" if scheduler else "--cluster"
        raise ClusterError(f"{opt} needs dask.distributed, which is not installed: "
                           f"{INSTALL_HINT}") from None
    if local is not None:
        # the scheduler's HTTP server would take port 8787 (or warn that it is taken); the
        # workers' warnings (a cancelled task when the run stops) are not the user's concern
        # optional dependency (dask, the cluster extra)
        import dask
        with dask.config.set(LOCAL_CONFIG):
            cluster = distributed.LocalCluster(
                n_workers=local, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR)
        return Cluster(distributed.Client(cluster), cluster, f"cluster local:{local}")
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ClusterError(f"--scheduler {scheduler}: no scheduler answered within {timeout:g} s"
                           + ("" if "Timed out" in why else f" ({why})")) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(f"--scheduler {scheduler}: the scheduler has no workers (start "
                           f"some: dask worker {scheduler} --nthreads 1)") from None
    return Cluster(client, None, f"scheduler {scheduler}")
