"""A design whose data is right but whose handshake breaks the contract fails regress (D17):
examples/designs/tload_engine_valid_drop.v (tload_engine_bytewise.v whose write valid falls
in every other stalled cycle) on Icarus and Verilator, and its Amaranth twin
(tests/designs/protocol_bugs.py) on Amaranth's simulator -- each reported as a protocol
violation, not a data mismatch, with its stream, cycle and waveform, and a reproduce line
that fails alone the same way."""

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from ..tiers import SLOW
from .test_cli import _command, run

ROOT = Path(__file__).resolve().parents[2]
DROP = ["--dut", str(ROOT / "examples" / "designs" / "tload_engine_valid_drop.v")]
DROP_AMARANTH = ["--dut-amaranth", str(ROOT / "tests" / "designs" / "protocol_bugs.py")
                 + ":TLoadValidDrop"]
RULE = "valid fell before its beat moved"


# 100 scenarios: the batches of 64 alternate between no back-pressure and 20 %, so the
# second batch stalls the write stream
# (the Verilog simulators in the slow tier: each builds a TLOAD harness around the design)
@pytest.mark.parametrize("backend,dut", [pytest.param("icarus", DROP, marks=SLOW),
                                         pytest.param("verilator", DROP, marks=SLOW),
                                         ("amaranth", DROP_AMARANTH)])
def test_a_valid_that_drops_before_its_beat_moves_is_a_protocol_failure(tmp_path, backend, dut):
    out = tmp_path / "out"
    r = run("regress", "--ops", "tload", "--backend", backend, "--count", "100", "--seed", "1",
            "--jobs", "2", "--out", str(out), "--json", *dut)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    fails = got["failures"]
    assert fails and got["protocol_violations"] == got["mismatches"] == len(fails)
    assert {f["kind"] for f in fails} == {"protocol"}
    assert all("protocol violation on write at cycle " in f["problem"] and RULE in f["problem"]
               for f in fails), fails[:2]
    assert all(f["index"] >= 64 for f in fails)      # only the batch with back-pressure
    first = fails[0]
    assert first["waveform"] and Path(first["waveform"]).stat().st_size > 0
    assert f"PROTOCOL tload #{first['index']}: protocol violation on write" in r.stdout
    # its reproduce line fails alone, as a protocol violation in the same cycle
    argv = shlex.split(first["repro"])
    assert argv[0] == "tilecosim"
    alone = subprocess.run(_command() + argv[1:], capture_output=True, text=True, timeout=900,
                           cwd=tmp_path)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert first["problem"] in alone.stdout
