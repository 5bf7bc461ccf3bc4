"""`tilecosim regress`: coverage-driven drawing, the run, the report and its failures."""

import json
import re
import shlex
from pathlib import Path

import pytest

from tilecosim import ops
from tilecosim.flows import regress
from tilecosim.flows.coverage import OPS, all_bins
from tilecosim.model.faults import Fault
from tilecosim.model.tload import plan
from tilecosim.ops.load_data_with_transpose import L1_SIZE
from tilecosim.ops.tload import MEM_SIZE as TLOAD_MEM

from ..cli.test_cli import run
from ..tiers import slow


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("op", OPS)
def test_the_default_count_hits_every_bin(op, seed):
    scs = regress.draw_scenarios(op, 200, seed)
    hit = {b for s in scs for b in s.bins}
    assert [b for b in all_bins(op) if b not in hit] == []
    assert any(s.fault for s in scs) and any(not s.fault for s in scs)


def test_drawing_is_reproducible_and_bins_follow_the_model():
    a = regress.draw_scenarios("tload", 40, 7)
    b = regress.draw_scenarios("tload", 40, 7)
    assert [s.item for s in a] == [s.item for s in b]
    for s in a:
        try:
            plan(s.item, TLOAD_MEM)                 # the golden model's own checks
            fault = None
        except Fault as f:
            fault = f
        assert (fault is None) == (s.fault is None)
        assert all(x.startswith("tload.fault:") for x in s.bins) == (s.fault is not None)


def test_regress_json_and_table(tmp_path):
    r = run("regress", "--count", "10", "--seed", "2", "--jobs", "2", "--out", str(tmp_path),
            "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["scenarios"] == 40 and obj["mismatches"] == 0
    assert set(obj["coverage"]) == {b for op in ops.regress_default_names() for b in all_bins(op)}
    assert sorted(obj["uncovered"]) == sorted(b for b, n in obj["coverage"].items() if n == 0)
    assert obj["faults_checked"] == sum(o["faults_checked"] for o in obj["ops"])
    assert "tload" in r.stdout and "load-align" in r.stdout and "scenarios" in r.stdout
    assert "40/40 scenarios" in r.stderr                       # the progress bar's last state
    assert (tmp_path / "l1-seed2.bin").stat().st_size == L1_SIZE


def test_a_mismatch_is_reported_with_a_command_that_reproduces_it(tmp_path, monkeypatch,
                                                                  capsys):
    """A bug planted in the LoadAlign comparison: the regression names the op and prints a
    reproduce line; the command line replays that op alone."""
    import tilecosim.sim.benches.align as sa
    real = sa.compare_load_align

    def broken(cases, ub, res, vl=256):
        out = real(cases, ub, res, vl)
        return out + [f"op {i} planted: dst0 byte lane 0 differs" for i, c in enumerate(cases)
                      if c.dist == "DIST_BRC_B16"]
    monkeypatch.setattr("tilecosim.ops.load_align.compare_load_align", broken)  # regress's
    from tilecosim.cli import main
    code = main(["regress", "--ops", "load-align", "--count", "40", "--seed", "1", "--jobs", "1", "--out",
                 str(tmp_path), "--json"])
    out = capsys.readouterr().out
    assert code == 1
    obj = json.loads(out.splitlines()[-1])
    fails = obj["failures"]
    assert fails and obj["mismatches"] == len(fails)
    assert all("planted" in f["problem"] for f in fails)
    line = fails[0]["repro"]
    assert line.startswith("tilecosim load-align --dist DIST_BRC_B16 ")
    monkeypatch.undo()
    r = run(*line.split()[1:], "--json")
    assert json.loads(r.stdout.splitlines()[-1])["match"] is True     # the real unit is fine


@pytest.mark.parametrize("flag", [["--fail-fast"], ["--max-failures", "2", "--no-waves"]])
def test_a_run_stops_at_its_failure_limit_and_reports_what_it_checked(tmp_path, monkeypatch,
                                                                      capsys, flag):
    """The planted LoadAlign bug again: --fail-fast (--max-failures N) stops the run once
    1 (N) scenarios mismatched, with fewer scenarios checked than drawn, exit 1."""
    import tilecosim.sim.benches.align as sa
    real = sa.compare_load_align

    def broken(cases, ub, res, vl=256):
        return real(cases, ub, res, vl) + [f"op {i} planted" for i, c in enumerate(cases)
                                           if c.dist == "DIST_BRC_B16"]
    monkeypatch.setattr("tilecosim.ops.load_align.compare_load_align", broken)
    from tilecosim.cli import main
    code = main(["regress", "--ops", "load-align", "--count", "600", "--seed", "1", "--jobs",
                 "1", "--out", str(tmp_path), "--json", *flag])         # 3 batches of 256
    out = capsys.readouterr().out
    limit = 1 if flag == ["--fail-fast"] else 2
    obj = json.loads(out.splitlines()[-1])
    assert code == 1
    assert obj["mismatches"] >= limit and obj["scenarios"] < obj["planned"] == 600
    assert obj["stopped"].endswith(f"the most --max-failures {limit} allows")
    assert f"STOPPED ({obj['mismatches']} mismatch" in out
    first = obj["failures"][0]
    if "--no-waves" in flag:                    # no re-run with a waveform
        assert all(f["waveform"] is None for f in obj["failures"]) and "waveform:" not in out
    else:                                       # the first failures re-run alone with VCD
        assert "$date" in Path(first["waveform"]).read_text()
        assert f"  waveform: {first['waveform']}" in out


def test_fail_fast_and_max_failures_exclude_each_other():
    r = run("regress", "--fail-fast", "--max-failures", "3")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


@pytest.mark.parametrize("width", [64, 128])
def test_regress_at_a_wider_beat(tmp_path, width, monkeypatch, capsys):
    """--width: the same scenarios on the engine built at W; a TLOAD mismatch (planted in
    the comparison) prints a reproduce command at that width, which replays it."""
    import tilecosim.sim.benches.tload as st
    real = st.compare

    def broken(p, mem, res, *args, instr=0, **kw):
        code, mism = real(p, mem, res, *args, instr=instr, **kw)
        return code, (mism + ["planted"] if instr % 4 == 0 and code is None else mism)
    monkeypatch.setattr("tilecosim.ops.tload.compare", broken)        # the one regress calls
    from tilecosim.cli import main
    code = main(["regress", "--ops", "tload", "--width", str(width), "--count", "16",
                 "--seed", "1", "--jobs", "1", "--out", str(tmp_path), "--json"])
    obj = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 1 and obj["width"] == width and obj["scenarios"] == 16
    line = obj["failures"][0]["repro"]
    assert f"--width {width} " in line + " "
    monkeypatch.undo()
    r = run(*shlex.split(line)[1:], "--json")
    got = json.loads(r.stdout.splitlines()[-1])
    assert r.returncode == 0 and got["match"] is True


@pytest.mark.parametrize("args,needle", [
    (["--width", "48"], "--width: invalid choice: 48"),
    (["--ops", "tload,bogus"], "--ops: 'tload,bogus': a comma-separated list of"),
    (["--count", "0"], "--count '0' must be in 1..100000"),
    (["--jobs", "x"], "--jobs 'x' is not an integer"),
    (["--backend", "golden"], "invalid choice: 'golden'"),
])
def test_usage_errors(args, needle):
    r = run("regress", *args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) <= 3


def test_a_harness_batch_that_fails_is_narrowed_to_its_scenario_in_one_more_start(
        tmp_path, monkeypatch):
    """On a Verilog simulator an operation with a batch harness runs all its batches in one
    start; a batch-level failure (not attributable to a scenario) re-runs that batch's
    scenarios alone, all in one more start, and names the culprit with its reproduce line."""
    from tilecosim import ops
    from tilecosim.ops import Outcome
    op = ops.get("load-align")
    drawn = {"load-align": regress.draw_scenarios("load-align", 600, 3)}
    culprit = drawn["load-align"][345].item
    calls = []

    def run_many(batches, backend, image):
        calls.append([len(items) for items, _, _ in batches])
        return [Outcome({-1: "the unit hung"} if culprit in items else {})
                for items, _, _ in batches]
    monkeypatch.setattr(op, "run_many", run_many)
    monkeypatch.setattr(regress, "draw_scenarios", lambda name, count, seed: drawn[name])
    files = regress.image_files(tmp_path, 3)
    work = regress.plan_jobs(["load-align"], drawn, "verilator", 3, files)
    assert [len(b) for _, batches, *_ in work for b, _, _ in batches] == [256, 256, 88]
    assert len(work) == 1                             # 600 scenarios: one simulator start
    shared = regress.plan_jobs(["load-align"], drawn, "verilator", 3, files, processes=2)
    assert [[len(b) for b, _, _ in batches] for _, batches, *_ in shared] == [[256, 256], [88]]
    results = regress.run_job(*work[0])
    assert calls == [[256, 256, 88], [1] * 256]       # the failing batch's scenarios alone
    bad = [o for r in results for o in r.outcomes if not o.ok]
    assert [o.index for o in bad] == [345]
    assert bad[0].problem == "the unit hung" and bad[0].repro.startswith(
        "tilecosim load-align ") and "--backend verilator" in bad[0].repro
    assert sum(len(r.outcomes) for r in results) == 600


def test_a_batch_that_hangs_is_narrowed_to_its_scenario(tmp_path, monkeypatch):
    """A hang of a batch (the watchdog fired: the bench gives its waveform, no problem of a
    scenario) re-runs the batch's scenarios alone and names the one that hangs alone; it
    once raised KeyError out of regress (a mutant of the TLOAD engine that hangs found it)."""
    from tilecosim import ops
    from tilecosim.ops import Outcome
    op = ops.get("load-align")
    drawn = {"load-align": regress.draw_scenarios("load-align", 40, 3)}
    culprit = drawn["load-align"][17].item

    def run_many(batches, backend, image):
        return [Outcome({}, "hang.vcd") if culprit in items else Outcome({})
                for items, _, _ in batches]
    monkeypatch.setattr(op, "run_many", run_many)
    monkeypatch.setattr(regress, "draw_scenarios", lambda name, count, seed: drawn[name])
    files = regress.image_files(tmp_path, 3)
    work = regress.plan_jobs(["load-align"], drawn, "verilator", 3, files)
    results = regress.run_job(*work[0])
    bad = [o for r in results for o in r.outcomes if not o.ok]
    assert [(o.index, o.problem) for o in bad] == [(17, "hung; waveform: hang.vcd")]


def test_the_report_explains_its_columns_and_keeps_the_whole_uncovered_list(tmp_path):
    """3 LoadAligns leave most of the 125 bins uncovered: the line under the table names
    the file with all of them; the bins column is explained; a worker ran 1 job."""
    r = run("regress", "--ops", "load-align", "--count", "3", "--seed", "1", "--jobs", "1",
            "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    obj = json.loads(r.stdout.splitlines()[-1])
    listed = tmp_path / "uncovered-bins.txt"
    assert len(obj["uncovered"]) > 20
    assert listed.read_text().split() == obj["uncovered"]
    assert f" ... (all {len(obj['uncovered'])} in {listed})" in r.stdout
    assert "bins = functional coverage bins hit / the operation's bins" in r.stdout
    assert re.search(r"^worker pid \d+ \(host [^)]*\): 1 job, 3 scenarios, 0 builds, ",
                     r.stdout, re.M)
    r = run("regress", "--ops", "load-align", "--count", "3", "--seed", "1", "--jobs", "1",
            "--out", str(tmp_path), "--require-coverage")
    assert r.returncode == 1
    assert (f"coverage required (--require-coverage): {len(obj['uncovered'])} functional bins "
            "uncovered") in r.stderr


@pytest.mark.parametrize("sim", ["icarus", slow("verilator")])
def test_the_same_seed_takes_the_same_cycles_on_every_backend(tmp_path, sim):
    """The batches are the same whatever runs them (Amaranth's Python-driven bench, a
    Verilog simulator's batch harness), so the cycles of each operation and of each class
    are equal: TLOAD seed 5 once gave 1.41 on Amaranth (batches of 8) and 1.29 on Icarus
    (batches of 64)."""
    from cocotb_tests.simulators import need
    need(sim)
    got = {}
    for backend in ("amaranth", sim):
        r = run("regress", "--ops", "tload", "--count", "70", "--seed", "5",
                "--jobs", "2", "--backend", backend, "--out", str(tmp_path / backend),
                "--json")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        got[backend] = [(o["op"], o["cycles"], o["ideal_cycles"], o["classes"])
                        for o in json.loads(r.stdout.splitlines()[-1])["ops"]]
    assert got[sim] == got["amaranth"]
    assert all(cycles > ideal > 0 for _, cycles, ideal, _ in got[sim])


def test_without_a_seed_each_run_draws_a_fresh_one_and_prints_it_first(tmp_path):
    """No --seed: the run draws a seed, prints it on its first line and in the JSON, and two
    runs draw different ones; --seed with the printed value repeats the run's scenarios."""
    def regress(*extra, out):
        r = run("regress", "--ops", "store-align", "--count", "8", "--jobs", "1", "--out",
                str(tmp_path / out), "--json", *extra)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout.splitlines(), json.loads(r.stdout.splitlines()[-1])
    (first, a), (_, b) = regress(out="a"), regress(out="b")
    assert a["seed_drawn"] and b["seed_drawn"] and a["seed"] != b["seed"]
    assert first[0] == f"seed {a['seed']} (drawn for this run; --seed {a['seed']} repeats it)"
    lines, again = regress("--seed", str(a["seed"]), out="c")
    assert not again["seed_drawn"] and not lines[0].startswith("seed ")
    assert (again["seed"], again["coverage"], again["ops"]) == (a["seed"], a["coverage"],
                                                                a["ops"])
