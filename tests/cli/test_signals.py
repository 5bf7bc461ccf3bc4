"""SIGINT and SIGTERM at a random moment, one test per subcommand: the command exits 130 or
143 with one line on stderr and no traceback, leaves no process running, nothing in the
temporary folder, and no file in the working folder it was not asked to keep.

Each command runs as the user runs it (``python -m tilecosim``), with a private temporary
folder and working folder.  The moment is drawn from a fresh seed; a failure prints the seed
and the moment (TILECOSIM_SIGNAL_SEED=S reruns it).  A command that finished before the
signal (the quick ones may) must have exited 0 and left nothing behind all the same.
"""

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ..tiers import slow

ROOT = Path(__file__).resolve().parents[2]

#: the TLOAD a stalled HDL run spends seconds on
BIG = "TLOAD.NORM <LB0:128, LB1:512, FP16>, [a0], ->T<128KB>"

#: subcommand: (arguments, the latest moment in seconds at which it is surely still running on
#: a 2-core machine, files it may keep in the working folder when stopped); since start-up
#: takes 0.44 s, asm and draw finish in about half a second (measured 0.59 s and 0.49 s)
COMMANDS = {
    "tload": (["tload", BIG, "--reg", "a0=0", "--backend", "icarus", "--stall", "0.9",
               "--lcfr", "256:262144", "--waves", "w.fst"], 4.0, ()),
    "asm": (["asm", BIG], 0.3, ()),
    "run": (["run", str(ROOT / "examples" / "ring.s"), "--reg", "a0=0", "--backend",
             "verilator", "--stall", "0.9"], 3.0, ()),
    "load-data-with-transpose": (["load-data-with-transpose", "--dtype", "int8",
                                  "--repeat-times", "64", "--src-stride", "1", "--dst-gap", "1",
                                  "--dst-bytes", "65536", "--backend", "icarus", "--stall",
                                  "0.9", "--out", "l0.npz"], 4.0, ()),
    "load-align": (["load-align", "--dist", "DIST_US_B16", "--dtype", "b16", "--addr", "64",
                    "--backend", "icarus", "--out", "r.npz"], 1.2, ()),
    "regress": (["regress", "--backend", "icarus", "--count", "60", "--seed", "1", "--jobs", "2",
                 "--out", "r"], 5.0, ("r",)),          # regress reports what it checked
    "draw": (["draw", "ZZ", "--rows", "16", "--cols", "32", "--dtype", "FP16", "--out",
              "zz.svg"], 0.3, ()),
    "bench": (["bench", "--only", "speed", "--out", "b"], 8.0, ()),
    "verilog": (["verilog", "--out", "v"], 2.5, ()),
    "mutation": (["mutation", "--only", "addr-norm", "--json", "m.json"], 8.0, ()),
    "formal": (["formal", "--only", "streams-system", "--out", "f"], 8.0, ()),
    "demo": (["demo"], 0.8, ()),
}


def _alive_with(token: str) -> list[int]:
    """Processes whose environment carries ``token``: what the command started."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in env and state != b"Z":
            found.append(int(pid))
    return found


def _command_env(tmp: Path, **extra) -> dict:
    """The environment of a command run as the user runs it: no output folders of the test
    session's, the temporary folder ``tmp``, this checkout first on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TILECOSIM_WAVES_DIR", "TILECOSIM_LOG_DIR", "PYTEST_CURRENT_TEST")}
    env.update(TMPDIR=str(tmp), **extra,
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p]))
    return env


def _default_signals() -> None:
    """In the child, before it runs: SIGINT and SIGTERM at their defaults, as in a shell
    the user types into.  A suite started in the background of a shell without job control
    (``make test &`` in a script) inherits SIGINT ignored, and a command started with a
    signal ignored rightly leaves it ignored (as nohup asks)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


# both signals take one path (cleanup.STOP_SIGNALS): make test sends SIGINT to every
# subcommand, make check SIGTERM too
def _wait_for_handlers(proc, limit: float = 30.0) -> None:
    """Until the process catches SIGTERM (its entry point has run, /proc/PID/status SigCgt),
    or has ended. Before that the interpreter itself is starting, where no program can
    handle a signal: on a loaded machine that took 0.5 s once (make check, draw, SIGTERM at
    0.52 s: killed by the signal, -15, before tilecosim's first line ran)."""
    end = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            return
        caught = int(next(ln.split()[1] for ln in status.splitlines()
                          if ln.startswith("SigCgt:")), 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.005)


@pytest.mark.parametrize("sig", [signal.SIGINT, slow(signal.SIGTERM)], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_a_signal_at_a_random_moment(tmp_path, cmd, sig):
    argv, latest, kept = COMMANDS[cmd]
    seed = int(os.environ.get("TILECOSIM_SIGNAL_SEED", "0")) or random.SystemRandom().getrandbits(32)
    moment = random.Random(seed).uniform(0.05, latest)
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    token = f"tilecosim-signal-{uuid.uuid4().hex}"
    env = _command_env(tmp, TILECOSIM_SIGNAL_TOKEN=token)
    proc = subprocess.Popen([sys.executable, "-m", "tilecosim", *argv], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)
    start = time.monotonic()
    _wait_for_handlers(proc)
    time.sleep(max(0.0, moment - (time.monotonic() - start)))
    sent = proc.poll() is None
    if sent:
        os.kill(proc.pid, sig)
    sent_at = time.monotonic()
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"{cmd} did not stop within 120 s of {sig.name} (seed {seed})")
    why = f"{cmd}, {sig.name} at {moment:.2f} s (TILECOSIM_SIGNAL_SEED={seed}):\n{err}"
    assert "Traceback" not in err, why
    assert "ERROR" not in out and "SURVIVED" not in out, f"a stopped run judged: {why}\n{out}"
    lines = [ln for ln in err.splitlines()
             if not ln.startswith(("tilecosim: building", f"{cmd} ["))]       # progress
    late = f"tilecosim: {sig.name} came after the command finished; its output is complete"
    if sent and proc.returncode == 0 and (late in lines or time.monotonic() - sent_at < 0.25):
        # the command had finished: it says so (its output is whole and kept), or the
        # signal reached a process already ending in the kernel, which discards it
        sent = False
        assert lines in ([late], []), why
    if sent:
        assert proc.returncode == 128 + sig, why
        if cmd == "regress" and "STOPPED (interrupted)" in out:
            pass                              # stopped while running: it reports on stdout
        else:
            assert len(lines) == 1 and sig.name in lines[0] and "stopped" in lines[0], why
    else:
        assert proc.returncode == 0, why
    deadline = time.monotonic() + 10
    while _alive_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with(token) == [], f"processes left running: {why}"
    assert sorted(p.name for p in tmp.iterdir()) == [], f"temporary files left: {why}"
    left = sorted(p.name for p in work.iterdir())
    if sent:
        assert [x for x in left if x not in kept] == [], f"files left in the working folder: {why}"


#: (how, where, command): a SIGTERM where Python handles its exception badly (signal_probe)
AWKWARD = {
    # before the regression starts: the command stops, with its one line and nothing kept
    "exec-before-regress": ("exec", "tilecosim.flows.regress:draw_scenarios",
                            ["regress", "--backend", "icarus", "--count", "4", "--seed", "1", "--out", "r"]),
    # the KeyboardInterrupt dropped in a finalizer: the command must stop all the same
    "del-in-draw": ("del", "tilecosim.cli.draw:check_writable",
                    ["draw", "ZZ", "--rows", "16", "--cols", "32", "--dtype", "FP16",
                     "--out", "zz.svg"]),
    # while regress forks its --jobs processes (CI once saw it run on to the end)
    "fork-in-regress": ("fork", "-", ["regress", "--backend", "icarus", "--count", "60",
                                      "--seed", "1", "--jobs", "2", "--out", "r"]),
}


@pytest.mark.parametrize("case", list(AWKWARD))
def test_a_signal_where_python_drops_its_exception(tmp_path, case):
    """The signal is never lost: exit 143 and one line (or regress's STOPPED report), no
    "Exception ignored" printout, no traceback, nothing left but a stopped regress's report;
    the process exits 143 itself rather than being ended by SIGINT (-2)."""
    how, where, argv = AWKWARD[case]
    env = _command_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "tests.cli.signal_probe", how, where, "--",
                           *argv], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300)
    why = f"{case}: exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 128 + signal.SIGTERM, why
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, why
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("regress [")]
    assert len(lines) == 1 and "stopped by SIGTERM" in lines[0], why
    if how == "fork":
        assert "STOPPED (interrupted): 0 of 240 scenarios checked" in proc.stdout, why
        assert [p.name for p in work.iterdir()] == ["r"], why
    else:
        assert list(work.iterdir()) == [], why
    assert [p.name for p in tmp_path.iterdir()] == ["work"], why


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_after_the_command_finished_is_said_and_the_exit_is_the_commands(sig):
    """A signal while the process ends (here: from an exit function, after the command
    printed everything) has nothing to stop: one line says so, the output is whole, and the
    exit status is the command's -- not a silent death by the signal during Python's
    finalization (exit -2: make check saw it once) nor "stopped while starting"."""
    code = ("import atexit, os, signal, sys\n"
            "from tilecosim.__main__ import entry\n"
            f"sys.argv = ['tilecosim', 'asm', {BIG!r}]\n"
            "status = entry()\n"
            f"atexit.register(lambda: os.kill(os.getpid(), {int(sig)}))\n"
            "sys.exit(status)\n")
    alone = subprocess.run([sys.executable, "-m", "tilecosim", "asm", BIG],
                           capture_output=True, text=True, timeout=120)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, preexec_fn=_default_signals)
    assert proc.returncode == 0 and proc.stdout == alone.stdout, proc.stderr
    assert proc.stderr.splitlines() == [
        f"tilecosim: {sig.name} came after the command finished; its output is complete"]
