"""`tilecosim regress` on a Dask cluster: the same report as `--jobs`, and the faults of a
cluster (a worker killed mid-run, a worker without the simulator, a scheduler that cannot
be reached, a batch that hangs, a run stopped halfway).  Every cluster here is on 127.0.0.1:
a LocalCluster, or `dask scheduler` and `dask worker` processes as README starts them."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import distributed          # make install puts it in (the test extra); missing is a failure
import pytest

from tilecosim.flows import regress
from tilecosim.flows.cluster import connect

from ..cli.test_cli import _command, run
from ..tiers import SLOW, slow


@pytest.fixture(autouse=True)
def _temporary_folder_of_the_test(tmp_path, monkeypatch):
    """The clusters these tests start in-process keep their scratch space (Dask's
    ``dask-scratch-space``) in the test's folder, not in the machine's /tmp."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))

def _report(stdout: str) -> dict:
    """The JSON report without what describes the run rather than the design: its time and
    what ran it."""
    obj = json.loads(stdout.splitlines()[-1])
    for k in ("seconds", "executor", "workers"):
        obj.pop(k)
    return obj


@SLOW
def test_a_local_cluster_and_jobs_give_the_same_report(tmp_path):
    """`--cluster local:2` and `--jobs 2`, seed 1, 200 per op, give the same report (slow
    tier: a minute; the cluster tests below run LocalClusters in make test)."""
    a = run("regress", "--cluster", "local:2", "--count", "200", "--seed", "1", "--json",
            "--out", str(tmp_path / "a"))
    b = run("regress", "--jobs", "2", "--count", "200", "--seed", "1", "--json",
            "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr[-2000:] + b.stderr[-2000:]
    ja, jb = _report(a.stdout), _report(b.stdout)
    assert ja == jb
    assert ja["scenarios"] == ja["planned"] == 800 and ja["stopped"] is None
    assert ja["uncovered"] == []
    workers = json.loads(a.stdout.splitlines()[-1])["workers"]
    assert len(workers) == 2 and all(w["worker"].startswith("tcp://127.0.0.1:") for w in workers)
    assert sum(w["scenarios"] for w in workers) == 800
    # the text report is the same too, but for the time and the executor the footer names,
    # and the lines naming workers
    def text(out):
        return [re.sub(r" in \d+ s \([^)]*\)", "", x) for x in out.splitlines()[:-1]
                if not x.startswith("worker ")]
    assert text(a.stdout) == text(b.stdout)


def _ran_on(cluster):
    """Wrap ``cluster.results`` to record the worker of each job: {job: worker}."""
    seen, real = {}, cluster.results

    def results(work, build_cache=None):
        for k, rs, info in real(work, build_cache):
            seen[k] = info["worker"]
            yield k, rs, info
    cluster.results = results
    return seen


def test_a_worker_killed_mid_run_loses_nothing(tmp_path, monkeypatch):
    """SIGKILL one worker process while it runs a batch: the batch runs again on a worker
    that lives, and the report equals an undisturbed run's."""
    monkeypatch.setenv("TILECOSIM_WAVES_DIR", str(tmp_path))
    names = ["load-data-with-transpose", "load-align"]
    cluster = connect(local=2)
    killed = {}
    try:
        pids = cluster.client.run(os.getpid)
        ran_on = _ran_on(cluster)

        def progress(done, total, bad):
            if killed:
                return
            busy = {w: keys for w, keys in cluster.client.processing().items() if keys}
            assert busy, "no batch in flight to kill"
            worker, keys = sorted(busy.items())[0]
            os.kill(pids[worker], signal.SIGKILL)
            killed.update(worker=worker, jobs={int(str(k).split("-")[-2]) for k in keys})

        # 130 a name: LDT in 3 batches (of 64), LoadAlign in 1 (of 256): 4 jobs on 2 workers
        got = regress.run_regress("amaranth", names, 130, 4, 2, tmp_path / "c", progress,
                                  cluster)
    finally:
        cluster.close()
    assert killed and killed["jobs"]
    # every batch in flight on the killed worker ran again on another one
    assert all(ran_on[k] != killed["worker"] for k in killed["jobs"])
    want = regress.run_regress("amaranth", names, 130, 4, 2, tmp_path / "j")
    assert got.stopped is None and got.planned == want.planned == 260
    assert [(o.op, o.index, o.ok, o.problem) for o in got.outcomes] == \
        [(o.op, o.index, o.ok, o.problem) for o in want.outcomes]
    assert len(got.outcomes) == 260 and all(o.ok for o in got.outcomes)
    assert got.perf == want.perf and all(c > 0 for c, _ in got.perf.values())
    assert {op: [s.index for s in scs] for op, scs in got.drawn.items()} == \
        {op: [s.index for s in scs] for op, scs in want.drawn.items()}


def _drop_the_sink():
    """In a worker: the LoadAlign bench loses its result sink, so the unit never sees ready
    and hangs."""
    import tilecosim.sim.benches.align as sa
    real = sa.load_align_procs

    def procs(*args):
        return real(*args)[:-1]
    sa.load_align_procs = procs
    return True


def test_a_batch_that_hangs_on_a_worker_is_a_failure_with_a_waveform(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECOSIM_WAVES_DIR", str(tmp_path))
    cluster = connect(local=2)
    try:
        assert all(cluster.client.run(_drop_the_sink).values())
        got = regress.run_regress("amaranth", ["load-align"], 4, 1, 1, tmp_path, None, cluster)
    finally:
        cluster.close()
    assert got.stopped is None and len(got.outcomes) == 4
    assert all(not o.ok and "did not return every result" in o.problem
               and o.repro.startswith("tilecosim load-align") for o in got.outcomes)
    waves = [Path(o.problem.split("waveform: ")[1].split()[0]) for o in got.outcomes]
    assert all(w.exists() and w.suffix == ".vcd" for w in waves)


def test_a_run_stopped_halfway_reports_what_it_checked(tmp_path):
    cluster = connect(local=2)

    def progress(done, total, bad):
        raise KeyboardInterrupt
    try:
        got = regress.run_regress("amaranth", ["load-align"], 300, 1, 1, tmp_path, progress,
                                  cluster)
    finally:
        cluster.close()
    assert got.stopped == "interrupted" and got.planned == 300
    checked = [(o.op, o.index) for o in got.outcomes]
    assert 0 < len(checked) < 300 and len(set(checked)) == len(checked)
    assert sorted(s.index for s in got.drawn["load-align"]) == sorted(i for _, i in checked)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), slow(signal.SIGTERM, 143)])
def test_a_signal_prints_the_partial_report_and_exits_128_plus_it(sig, code, tmp_path):
    # SIGINT as a terminal delivers it: a suite started in the background by a shell without
    # job control inherits SIGINT ignored, and Python then leaves it ignored
    p = subprocess.Popen(_command() + ["regress", "--jobs", "2", "--count", "2000", "--seed", "1", "--json",
                                       "--out", str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = p.stderr.readline()              # the progress bar: a first batch is checked
        assert "regress [" in first, first
        p.send_signal(sig)
        out, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == code, err[-2000:]
    obj = json.loads(out.splitlines()[-1])
    assert obj["stopped"] == "interrupted" and obj["planned"] == 8000
    assert 0 < obj["scenarios"] < 8000 and obj["mismatches"] == 0
    assert f"{obj['scenarios']} of 8000 scenarios checked" in out
    assert "Traceback" not in err


@SLOW                                          # test_debris.py refuses the same address in make test
def test_an_unreachable_scheduler_is_a_one_line_error():
    t0 = time.monotonic()
    r = run("regress", "--scheduler", "tcp://127.0.0.1:1", "--count", "5")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "tilecosim regress: error: --scheduler tcp://127.0.0.1:1: no scheduler answered "
        "within 10 s"]
    assert time.monotonic() - t0 < 60 and r.stdout == ""


@pytest.mark.parametrize("args, needle", [
    (["--cluster", "local:0"], "--cluster 'local:0': N must be in 1..256"),
    (["--cluster", "4"], "--cluster '4' is not local:N"),
    (["--scheduler", "scheduler-host"], "is not a scheduler address like tcp://HOST:8786"),
    (["--scheduler", "tcp://h:70000"], "port 70000 is not in 1..65535"),
    (["--cluster", "local:2", "--jobs", "2"], "--jobs: not allowed with argument --cluster"),
])
def test_cluster_usage_errors(args, needle):
    r = run("regress", *args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.splitlines()) == 1


def test_without_dask_the_error_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)       # import distributed fails
    from tilecosim.cli import main
    code = main(["regress", "--cluster", "local:2", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert "--cluster needs dask.distributed" in err and "pip install 'dask[distributed]'" in err


# --- a cluster as README starts one: `dask scheduler`, `dask worker` ---------------------

@contextmanager
def _scheduler(tmp_path):
    dask = Path(sys.executable).parent / "dask"
    info = tmp_path / "scheduler.json"
    procs, logs = [], []

    def log(name):                               # the processes' logs, for a failure's reader
        logs.append(open(tmp_path / name, "w"))
        return logs[-1]

    def worker(env=None):
        procs.append(subprocess.Popen(
            [str(dask), "worker", address, "--nthreads", "1", "--host", "127.0.0.1",
             "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
            stderr=log(f"worker{len(procs)}.log")))
        with distributed.Client(address, timeout=30) as c:
            c.wait_for_workers(len(procs) - 1, timeout=60)

    procs.append(subprocess.Popen(
        [str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
         "127.0.0.1:0", "--scheduler-file", str(info)],
        stdout=subprocess.DEVNULL, stderr=log("scheduler.log")))
    try:
        for _ in range(300):
            if info.exists() and info.read_text().strip():
                break
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        yield address, worker
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=60)
        for f in logs:
            f.close()


@SLOW
def test_workers_without_the_simulator_name_their_host_and_tool(tmp_path):
    """A worker whose PATH has no iverilog fails its jobs with its host and the tool named;
    with no other worker the run stops (exit 2), with one the jobs go there and the report is
    complete."""
    import socket
    no_icarus = dict(os.environ, PATH=str(Path(sys.executable).parent))
    args = ["regress", "--backend", "icarus", "--ops", "load-align", "--count", "1200",
            "--seed", "2", "--json"]
    with _scheduler(tmp_path) as (address, worker):
        worker(no_icarus)
        r = run(*args, "--scheduler", address, "--out", str(tmp_path / "a"))
        assert r.returncode == 2, r.stderr[-2000:]
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("tilecosim regress: error: no worker can run the batches: "
                               "worker tcp://127.0.0.1:")
        assert f"on host {socket.gethostname()} cannot run icarus: iverilog not found" in last
        assert json.loads(r.stdout.splitlines()[-1])["stopped"] == last.split("error: ", 1)[1]
        worker()                                    # one that has Icarus
        r = run(*args, "--scheduler", address, "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr[-2000:]
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["scenarios"] == obj["planned"] == 1200 and obj["mismatches"] == 0
    assert "cannot run icarus: iverilog not found" in r.stderr
    assert "; its jobs go to the other workers" in r.stderr
    assert len(obj["workers"]) == 1                 # every job ran on the worker with Icarus


@SLOW
def test_workers_share_a_build_cache_and_count_their_builds(tmp_path):
    """--build-cache: the LoadAlign harness is built once for both workers, then reused."""
    args = ["regress", "--backend", "icarus", "--ops", "load-align", "--count", "1200",
            "--seed", "1", "--cluster", "local:2", "--build-cache", str(tmp_path / "cache"), "--json"]
    first = run(*args, "--out", str(tmp_path / "a"))
    again = run(*args, "--out", str(tmp_path / "b"))
    assert first.returncode == 0 and again.returncode == 0, first.stderr[-2000:]
    one, two = (json.loads(r.stdout.splitlines()[-1])["workers"] for r in (first, again))
    assert sum(w["builds"] for w in one) == 1 and sum(w["builds"] for w in two) == 0
    assert sum(w["jobs"] for w in one) == 2
    assert len(list((tmp_path / "cache").glob("icarus-*/.built"))) == 1
    assert "builds" in first.stdout and "worker tcp://127.0.0.1:" in first.stdout
