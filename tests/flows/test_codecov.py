"""`regress --coverage`: Verilator's coverage files merged, scoped to the engine, waived and
reported (tilecosim/flows/codecov.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

from tilecosim.flows import codecov

from ..cli.test_cli import run
from ..tiers import SLOW

HARNESS_V = "/b/batch_x.v"


def _key(**f) -> str:
    return "".join(f"\x01{k}\x02{v}" for k, v in f.items())


def _dat(path: Path, points: dict) -> None:
    path.write_text("# SystemC::Coverage-3\n"
                    + "".join(f"C '{k}' {n}\n" for k, n in points.items()), encoding="latin-1")


def _toggle(module, signal, bit, direction, line=10):
    return _key(f=HARNESS_V, l=line, n=8, t="toggle", page=f"v_toggle/{module}",
                o=f"{signal}[{bit}]:{direction}", h=module)


def _line(module, line, what="block"):
    return _key(f=HARNESS_V, l=line, n=3, t="line", page=f"v_line/{module}", o=what, S=line,
                h=module)


def test_runs_are_merged_by_summing_each_point_and_scoped_to_the_engine(tmp_path):
    """Two runs of a harness 'batch_x' around an engine instance 'engine': the counts of one
    point add up; the harness's own module and a sibling ('batch_x.engine2', same prefix) are
    left out; names are demangled ($ and . written as __024 and __02e by Verilator)."""
    raw = tmp_path / "runs"
    raw.mkdir()
    a, b = _line("batch_x.engine", 5), _toggle("batch_x.engine.sub", "__024100", 3, "0->1")
    _dat(raw / "r1.dat", {a: 2, b: 0, _line("batch_x", 7): 9,
                          _line("batch_x.engine2", 8): 1})
    _dat(raw / "r2.dat", {a: 3, b: 1})
    (raw / "v.scope.json").write_text(json.dumps(
        {"file": HARNESS_V, "top": "batch_x", "instance": "engine", "engine": "x_engine"}))
    points, scopes = codecov.merge_dir(raw)
    assert points[a] == 5 and points[b] == 1
    got = codecov.engine_points(points, scopes)
    assert set(got) == {"x_engine"}
    by = {(p.kind, p.instance, p.what): p.count for p in got["x_engine"]}
    assert by == {("line", ".", "block"): 5, ("toggle", "sub", "$100[3]:0->1"): 1}


def test_a_unit_inside_an_engine_gets_a_row_of_its_own(tmp_path):
    """parts: {"x_engine": (("store", ...),)} adds the row x_engine.store, counted from the
    points under the instance 'store' (and its submodules) alone: 1 of 2 lines, 1 of 4
    toggle points there; the engine's row counts all of them."""
    raw = tmp_path / "runs"
    raw.mkdir()
    _dat(raw / "r.dat", {_line("batch_x.engine", 5): 1, _line("batch_x.engine", 6): 0,
                         _line("batch_x.engine.store", 7): 3,
                         _line("batch_x.engine.store.sub", 8): 0,
                         _toggle("batch_x.engine.store", "a", 0, "0->1"): 1,
                         _toggle("batch_x.engine.store", "a", 0, "1->0"): 0,
                         _toggle("batch_x.engine.storage", "b", 0, "0->1"): 1,
                         _toggle("batch_x.engine.store.sub", "c", 1, "0->1"): 0,
                         _toggle("batch_x.engine.store.sub", "c", 1, "1->0"): 0})
    (raw / "v.scope.json").write_text(json.dumps(
        {"file": HARNESS_V, "top": "batch_x", "instance": "engine", "engine": "x_engine"}))
    (tmp_path / "none.txt").write_text("")
    out = codecov.report(raw, tmp_path / "cov", waivers_path=tmp_path / "none.txt",
                         parts={"x_engine": (("store", "Store"),)})
    rows = {t["top"]: t for t in out["tops"]}
    assert list(rows) == ["x_engine", "x_engine.store"]
    assert (rows["x_engine"]["lines"]["hit"], rows["x_engine"]["lines"]["total"]) == (2, 4)
    assert (rows["x_engine.store"]["lines"]["hit"],
            rows["x_engine.store"]["lines"]["total"]) == (1, 2)
    assert (rows["x_engine.store"]["toggles"]["hit"],
            rows["x_engine.store"]["toggles"]["total"]) == (1, 4)
    assert "== x_engine.store:" in (tmp_path / "cov" / "uncovered.txt").read_text()


def test_a_merged_file_reads_back_the_same(tmp_path):
    pts = {_line("m", 1): 4, _toggle("m", "x", 0, "1->0"): 0}
    codecov.write_dat(pts, tmp_path / "c.dat")
    assert codecov.read_dat(tmp_path / "c.dat") == pts


@pytest.mark.parametrize("text, complaint", [
    ("* line foo", "needs its reason"),
    ("* line foo --   ", "needs its reason"),
    ("* lines foo -- why", "kind 'lines'"),
    ("* idiom no-such -- why", "idiom 'no-such'"),
    ("* toggle ([ -- why", "pattern '(['"),
    ("* toggle -- why", "expected '<top|*> <kind> <pattern> -- <reason>'"),
])
def test_a_bad_waiver_names_its_line(tmp_path, text, complaint):
    f = tmp_path / "w.txt"
    f.write_text("# comment\n\n" + text + "\n")
    with pytest.raises(codecov.WaiverError) as e:
        codecov.parse_waivers(f)
    assert f"{f}:3" in str(e.value) and complaint in str(e.value)


def test_the_shipped_waivers_parse_and_each_gives_a_reason():
    ws = codecov.parse_waivers(codecov.WAIVERS)
    assert ws and all(len(w.reason) > 20 for w in ws)


@pytest.mark.parametrize("argv, complaint", [
    (["--coverage"], "--coverage: needs --backend verilator (not amaranth)"),
    (["--backend", "icarus", "--coverage"], "needs --backend verilator (not icarus)"),
    (["--coverage-waivers", "x.txt"], "--coverage-waivers: only with --coverage"),
    (["--backend", "verilator", "--coverage", "--scheduler", "tcp://127.0.0.1:8786"],
     "--coverage: not with --scheduler"),
    (["--backend", "verilator", "--coverage", "--coverage-waivers", "/no/such/w.txt"],
     "--coverage-waivers: waivers '/no/such/w.txt': cannot be read"),
])
def test_coverage_usage_errors_are_one_line_exit_2(tmp_path, argv, complaint):
    r = run("regress", "--count", "1", "--out", str(tmp_path / "o"), *argv)
    assert r.returncode == 2, r.stderr
    assert complaint in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()                    # nothing written


@SLOW
def test_verilator_coverage_of_a_bench_shows_what_it_never_drove(tmp_path, monkeypatch):
    """LoadAligns at UB addresses 0, 32 and 64 only: address bits 5 and 6 toggle, bits 7..31
    never do (by construction of the cases).  A second run at address 2**20 (out of bounds),
    merged with the first, toggles bit 20 as well."""
    from cocotb_tests.simulators import need
    from tilecosim.model.load_align import Addressing
    from tilecosim.sim.benches.align import AlignCase, simulate_load_align
    need("verilator")
    raw = tmp_path / "runs"
    monkeypatch.setenv("TILECOSIM_COVERAGE_DIR", str(raw))
    ub = np.arange(4096, dtype=np.uint32).astype(np.uint8)

    def run_at(addrs):
        cases = [AlignCase("DIST_NORM", "b8", a, Addressing()) for a in addrs]
        simulate_load_align(cases, ub, backend="verilator")

    def addr_bits():
        points, scopes = codecov.merge_dir(raw)
        pts = codecov.engine_points(points, scopes)["load_align_unit"]
        seen = {}
        for p in pts:
            if p.kind == "toggle" and p.instance == "." and p.signal == "op__payload.addr":
                seen[p.bit] = seen.get(p.bit, 0) + (p.count > 0)
        return seen

    run_at([0, 32, 64, 0])
    seen = addr_bits()
    assert sorted(seen) == list(range(32))                  # 32 bits, two directions each
    assert seen[5] == 2 and seen[6] == 2
    assert [b for b in range(7, 32) if seen[b]] == []
    run_at([0, 1 << 20, 0])
    seen = addr_bits()
    assert seen[20] == 2 and seen[5] == 2
    assert [b for b in range(7, 32) if seen[b] and b != 20] == []
    out = codecov.report(raw, tmp_path / "cov")
    listing = (tmp_path / "cov" / "uncovered.txt").read_text()
    assert "== load_align_unit:" in listing
    assert any("op__payload.addr: never toggled bits 31:21,19:7" in line for line in
               listing.splitlines())
    row = out["tops"][0]
    assert row["top"] == "load_align_unit" and 0 < row["toggles"]["hit"] < row["toggles"]["total"]
    info = (tmp_path / "cov" / "coverage.info").read_text()
    lf = sum(int(x[3:]) for x in info.splitlines() if x.startswith("LF:"))
    lh = sum(int(x[3:]) for x in info.splitlines() if x.startswith("LH:"))
    assert 0 < lh <= lf


@SLOW
def test_regress_coverage_reports_each_engine_top_and_writes_lcov(tmp_path):
    from cocotb_tests.simulators import need
    need("verilator")
    r = run("regress", "--backend", "verilator", "--ops", "load-align", "--count", "40",
            "--seed", "1", "--coverage", "--jobs", "2", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    obj = json.loads(r.stdout.splitlines()[-1])
    code = obj["code_coverage"]
    assert [t["top"] for t in code["tops"]] == ["load_align_unit"]
    lines = code["tops"][0]["lines"]
    assert lines["total"] > 0 and lines["hit"] <= lines["total"]
    assert "code coverage" in r.stdout and "load_align_unit" in r.stdout
    cov = tmp_path / "coverage"
    assert (cov / "coverage.dat").read_text().startswith("# SystemC::Coverage-3")
    info = (cov / "coverage.info").read_text().splitlines()
    da = [x for x in info if x.startswith("DA:")]
    assert len({x.split(",")[0] for x in da}) == sum(int(x[3:]) for x in info
                                                     if x.startswith("LF:"))
    assert not (cov / "runs").exists()                  # the per-run files, merged, are gone


def test_a_waiver_matches_the_statement_in_its_context_and_a_toggle_by_its_bit(tmp_path):
    src = tmp_path / "x.v"
    src.write_text("module \\x.engine (clk);\n"          # 1
                   "  reg [3:0] cnt;\n"                  # 2
                   "  always @* begin\n"                 # 3
                   "    casez (sel)\n"                   # 4
                   "      3'h6:\n"                       # 5
                   "          y = 1'h1;\n"               # 6
                   "      3'h7:\n"                       # 7
                   "          y = 1'h0;\n"               # 8
                   "    endcase\n"
                   "  end\n"
                   "endmodule\n")
    w = tmp_path / "w.txt"
    w.write_text("x_engine line ^\\.:always @\\* begin / casez \\(sel\\) / 3'h6:$ -- size 6 "
                 "is never sent\n"
                 "* toggle ^\\.:cnt\\[3\\]$ -- the count stays below 8\n")
    ws = codecov.parse_waivers(w)
    v = codecov._Verilog()

    def point(kind, line, what):
        return codecov.Point(kind, str(src), line, ".", "x.engine", what, 0)

    assert codecov._waiver_for("x_engine", point("line", 5, "case"), ws, v) is ws[0]
    assert codecov._waiver_for("x_engine", point("line", 7, "case"), ws, v) is None
    assert codecov._waiver_for("y_engine", point("line", 5, "case"), ws, v) is None
    assert codecov._waiver_for("y_engine", point("toggle", 2, "cnt[3]:0->1"), ws, v) is ws[1]
    assert codecov._waiver_for("y_engine", point("toggle", 2, "cnt[2]:1->0"), ws, v) is None
