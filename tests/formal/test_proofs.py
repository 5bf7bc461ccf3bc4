"""The quick formal proofs (``tilecosim formal --quick``) hold with every cover reached, and a
broken unit fails its proof with a counterexample and the command that reproduces it.

The deeper proofs run with ``make formal``; their depths and times are in
docs/verification.md."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth import Cat

from tilecosim.flows import formal as flow

from ..tiers import tiered

PROOFS = flow.all_proofs()
QUICK = [p for p in PROOFS if p.quick]


def test_the_quick_set_covers_every_kind_of_proof():
    names = {p.name for p in QUICK}
    assert {"completion-order", "store-align-modes", "transpose-64-b8"} <= names
    assert all(p.name in names for p in PROOFS if p.name.startswith("transpose-64-b"))


#: the quick proofs of more than 10 s (docs/verification.md: 11 to 46 s with their covers on
#: two cores) are in the slow tier; make test proves the others, one of every kind (a square
#: transposed, the stream contract of a unit alone and of an engine's unit)
SLOW_PROOFS = {"transpose-64-b8", "transpose-64-b16", "addrgen-one-tile", "completion-order",
               "store-align-modes", "streams-load-align"}


@pytest.mark.parametrize("proof", tiered(QUICK, lambda p: p.name in SLOW_PROOFS),
                         ids=lambda p: p.name)
def test_quick_proof_holds_and_is_not_vacuous(proof, tmp_path):
    outcome = flow.run_proof(proof, tmp_path)
    assert outcome.result == "proved", (outcome.failed, outcome.missed, outcome.detail)
    assert outcome.missed == [] and outcome.covers      # every cover of the harness reached


def _broken_read_col(self, lb, t):
    """A transposer whose columns come out with their elements in reverse order."""
    from tilecosim.hdl.transpose import _Storage
    col = _broken_read_col.original(self, lb, t)
    rev = col.__class__(len(col), name="col_reversed")
    self.m.d.comb += rev.eq(Cat(col[(len(col) - 8 * (k + 1)):(len(col) - 8 * k)]
                                for k in range(len(col) // 8)))
    assert isinstance(self, _Storage)
    return rev


def test_a_broken_transposer_fails_with_a_counterexample(tmp_path, monkeypatch):
    from tilecosim.hdl import transpose
    _broken_read_col.original = transpose._Storage.read_col
    monkeypatch.setattr(transpose._Storage, "read_col", _broken_read_col)
    proof = next(p for p in PROOFS if p.name == "transpose-64-b32")
    outcome = flow.run_proof(proof, tmp_path)
    assert outcome.result == "failed"
    assert any(f.startswith("column_is_the_transpose") for f in outcome.failed), outcome.failed
    assert outcome.vcd and outcome.vcd.endswith(".vcd") and "/bmc/" in outcome.vcd
    assert "$var" in Path(outcome.vcd).read_text()       # a trace from reset


def test_an_unreachable_cover_is_reported(tmp_path):
    from tilecosim.formal.common import Harness

    def build():
        h = Harness()
        flag = h.past(h.live, "flag")
        h.cover(flag & ~flag, "never")
        h.cover(flag, "soon")
        return h
    proof = dataclasses.replace(QUICK[0], name="toy", build=build, mode="bmc", depth=2,
                                cover_depth=4)
    outcome = flow.run_proof(proof, tmp_path)
    assert outcome.result == "cover-missed"
    assert outcome.missed == ["never"] and outcome.covers == ["soon"]


def test_cli_reports_a_failure_with_the_reproduce_command(tmp_path):
    """Through ``tilecosim formal``: a failing toy proof prints the property, the VCD and
    the command, and exits 1."""
    script = f"""
import sys
from tilecosim.formal import proofs
from tilecosim.formal.common import Harness
def build():
    h = Harness()
    count = h.past(h.past(h.live, "a") & h.live, "b")
    h.check(~count, "count_stays_low")
    return h
proofs.PROOFS.append(proofs.Proof("toy-fails", "none", "a property that fails at step 2",
                                  build, "bmc", 4, 4, quick=True))
from tilecosim.cli import main
sys.exit(main(["formal", "--only", "toy-fails", "--out", {str(tmp_path)!r},
               "--json", {str(tmp_path / "f.json")!r}]))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "assertion count_stays_low" in run.stdout
    assert "counterexample: " in run.stdout and ".vcd" in run.stdout
    assert "reproduce: tilecosim formal --only toy-fails" in run.stdout
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary == {"proofs": 1, "proved": 0, "failed": ["toy-fails"],
                       "seconds": summary["seconds"], "version": summary["version"],
                       "git": summary["git"]}
    assert json.loads((tmp_path / "f.json").read_text())["results"][0]["result"] == "failed"
