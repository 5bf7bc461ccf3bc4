"""Verify your own design (D16): a design from elsewhere runs through regress and the
single-operation command with ``--dut`` / ``--dut-amaranth``, against the golden model.

The designs: examples/designs/ (written in SystemVerilog from seed 003, not from the
gateware), its copy with a one-line bug, the project's own Verilog passed back, and the
built-in Amaranth class named as a design from elsewhere."""

import json
import shlex
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from ..tiers import SLOW
from .test_cli import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "designs" / "load_align_unit.sv"
BUGGY = ROOT / "examples" / "designs" / "load_align_unit_bug.sv"


def _regress(tmp_path, *extra, count=200, backend="verilator"):
    r = run("regress", "--ops", "load-align", "--backend", backend, "--count", str(count),
            "--seed", "1", "--jobs", "2", "--out", str(tmp_path / "out"), "--json", *extra)
    return r, (json.loads(r.stdout.splitlines()[-1]) if r.stdout.strip() else None)


# Verilator in the slow tier: its harness build is the long part, and the same harness runs
# on Icarus here
@pytest.mark.parametrize("backend,count", [pytest.param("verilator", 400, marks=SLOW),
                                           ("icarus", 100)])
def test_the_example_design_passes_regress(tmp_path, backend, count):
    r, got = _regress(tmp_path, "--dut", str(EXAMPLE), count=count, backend=backend)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    row = got["ops"][0]
    assert (got["mismatches"], row["scenarios"], row["covered"]) == (0, count, row["bins"])
    assert got["design"] == "load_align_unit (load_align_unit.sv)"
    # its own timing, reported: one op every 3 cycles, where the built-in unit takes one a cycle
    assert row["cycles"] / row["ideal_cycles"] > 2.5


STORE_EXAMPLE = ROOT / "examples" / "designs" / "store_align_unit.sv"


# Verilator in the slow tier: make test runs the same harness with this design on Icarus
@pytest.mark.parametrize("backend,count", [("icarus", 300),
                                           pytest.param("verilator", 200, marks=SLOW)])
def test_the_store_example_passes_regress(tmp_path, backend, count):
    r = run("regress", "--ops", "store-align", "--backend", backend, "--count", str(count),
            "--seed", "1", "--jobs", "2", "--out", str(tmp_path / "out"), "--json",
            "--dut", str(STORE_EXAMPLE))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    row = got["ops"][0]
    assert (got["mismatches"], row["scenarios"], row["covered"]) == (0, count, row["bins"])
    assert got["design"] == "store_align_unit (store_align_unit.sv)"
    assert row["cycles"] / row["ideal_cycles"] == pytest.approx(3, abs=0.05)   # its timing
    one = run("store-align", "--dist", "DIST_INTLV_B32", "--dtype", "b32", "--addr", "64",
              "--src-seed", "5", "--mask", "random", "--backend", backend,
              "--dut", str(STORE_EXAMPLE))
    assert one.returncode == 0, one.stderr
    assert f"{backend}: match, result 2 cycles after the op was accepted" in one.stdout


def test_regress_finds_the_one_line_bug_and_its_reproduce_line_fails_alone(tmp_path):
    xml = tmp_path / "report.xml"
    r, got = _regress(tmp_path, "--dut", str(BUGGY), "--junit", str(xml), backend="icarus")
    assert r.returncode == 1, r.stderr[-2000:]
    first = got["failures"][0]
    assert first["index"] < 200
    assert "DIST_BRC_B16" in first["problem"] and "dst0 element" in first["problem"]
    wave = Path(first["waveform"])
    assert wave.is_file() and wave.suffix == ".vcd"                 # Icarus: VCD
    assert wave.read_text().startswith("$date") and "load_align_unit" in wave.read_text()
    assert f"  waveform: {wave}" in r.stdout
    line = first["repro"]
    assert f"--dut {BUGGY}" in line and f"reproduce: {line}" in r.stdout
    # the JUnit report, read by a JUnit library: the bug's bins fail with the first mismatch
    # of each, its reproduce line and waveform; every other bin of LoadAlign passes
    assert got["junit"] == str(xml) and f"junit: {xml}" in r.stdout
    suites = list(JUnitXml.fromfile(str(xml)))
    assert [s.name for s in suites] == ["tilecosim.regress.load-align"]
    cases = list(suites[0])
    assert len(cases) == got["ops"][0]["bins"]
    failed = {c.name: c.result[0] for c in cases if c.result and isinstance(c.result[0], Failure)}
    assert failed and not [n for n in failed if "DIST_" in n and "DIST_BRC_B16" not in n]
    bad = {o["index"]: o for o in got["failures"]}
    for name, f in failed.items():
        index = int(f.message.split("#")[1].split(":")[0])
        assert f.message == f"load-align #{index}: {bad[index]['problem']}"
        assert f"reproduce: {bad[index]['repro']}" in f.text
    assert any(f"waveform: {wave}" in f.text for f in failed.values())
    assert all(not c.result for c in cases if c.name not in failed)
    # alone, the mismatch runs again with a waveform (at $TILECOSIM_WAVES_DIR), whose path
    # the report prints; --no-waves leaves it out
    folder = tmp_path / "waves"
    alone = run(*shlex.split(line)[1:], env={"TILECOSIM_WAVES_DIR": str(folder)})
    assert alone.returncode == 1, alone.stderr
    assert first["problem"] in alone.stdout
    vcd = folder / "load-align-mismatch-icarus.vcd"
    assert f"  waveform: {vcd}  (gtkwave {vcd} " in alone.stdout
    assert vcd.read_text().startswith("$date") and "load_align_unit" in vcd.read_text()
    for f in folder.iterdir():                  # the VCD and its GTKWave save file
        f.unlink()
    quiet = run(*shlex.split(line)[1:], "--no-waves", "--json",
                env={"TILECOSIM_WAVES_DIR": str(folder)})
    got = json.loads(quiet.stdout.splitlines()[-1])
    assert quiet.returncode == 1 and got["match"] is False and got["waveform"] is None
    assert list(folder.iterdir()) == []


@SLOW              # the example designs check the same harness path in make test
def test_the_projects_own_verilog_gives_the_built_in_report(tmp_path):
    """``tilecosim verilog`` writes the built-in unit; passed back with --dut it gives the
    same results, coverage and cycles as the built-in path."""
    v = run("verilog", "--out", str(tmp_path / "v"))
    assert v.returncode == 0, v.stderr
    own, got = _regress(tmp_path / "a", "--dut", str(tmp_path / "v" / "load_align_unit.v"))
    builtin, want = _regress(tmp_path / "b")
    assert own.returncode == builtin.returncode == 0, own.stderr[-2000:]
    assert got["ops"] == want["ops"] and got["coverage"] == want["coverage"]
    assert got["design"] == "load_align_unit (load_align_unit.v)" and want["design"] == "built-in"


@pytest.mark.parametrize("backend", ["amaranth", pytest.param("icarus", marks=SLOW),
                                     pytest.param("verilator", marks=SLOW)])
def test_an_amaranth_design_runs_on_every_simulator(tmp_path, backend):
    spec = "tilecosim.hdl.align.load:LoadAlignUnit"
    r, got = _regress(tmp_path, "--dut-amaranth", spec, count=60, backend=backend)
    assert r.returncode == 0, r.stderr[-2000:]
    assert got["mismatches"] == 0 and got["design"] == spec
    one = run("load-align", "--dist", "DIST_US_B16", "--dtype", "b16", "--addr", "64",
              "--backend", backend, "--dut-amaranth", spec)
    assert one.returncode == 0 and f"{backend}: match" in one.stdout, one.stderr


def test_the_single_command_runs_the_design(tmp_path):
    r = run("load-align", "--dist", "DIST_DINTLV_B16", "--dtype", "b16", "--addr", "64",
            "--backend", "icarus", "--dut", str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    assert "icarus: match, result 2 cycles after the op was accepted" in r.stdout


def _skeleton(tmp_path, edit) -> Path:
    r = run("contract", "load-align")
    path = tmp_path / "load_align_unit.v"
    path.write_text(edit(r.stdout))
    return path


@pytest.mark.parametrize("edit,needle", [
    (lambda t: t.replace("input  wire [31:0] ub_size,\n", "")
              .replace("    input  wire rst,", "    input  wire rst,\n    input  wire [31:0] ub_bytes,"),
     "missing input ub_size [32]; extra input ub_bytes [32]"),
    (lambda t: t.replace("input  wire [4095:0] ub_data,", "input  wire [2047:0] ub_data,"),
     "ub_data is 2048 bits wide, the contract's is 4096"),
    (lambda t: t.replace("output wire ub_en,", "input  wire ub_en,")
              .replace("assign ub_en = 1'd0;", ""),
     "ub_en is an input, the contract's is an output"),
])
def test_a_design_whose_ports_differ_is_refused_before_anything_runs(tmp_path, edit, needle):
    path = _skeleton(tmp_path, edit)
    out = tmp_path / "never"
    r = run("regress", "--ops", "load-align", "--backend", "verilator", "--dut", str(path),
            "--out", str(out))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["regress", "--ops", "load-align", "--dut-top", "x"], "--dut-top names the top module"),
    (["regress", "--ops", "load-align", "--backend", "amaranth", "--dut", str(EXAMPLE)],
     "--dut: Verilog runs on --backend icarus or verilator"),
    (["regress", "--ops", "load-align,tload", "--backend", "icarus", "--dut", str(EXAMPLE)],
     "a design implements one operation"),
    (["regress", "--ops", "load-align", "--backend", "icarus", "--dut", "nowhere.sv"],
     "--dut nowhere.sv: no such file"),
    (["regress", "--ops", "load-align", "--backend", "icarus", "--dut", "README.md"],
     "not a Verilog or SystemVerilog file"),
    (["regress", "--ops", "load-align", "--backend", "icarus", "--dut", str(EXAMPLE),
      "--dut-top", "nothing_here"], "Verilator cannot read module nothing_here"),
    (["regress", "--ops", "program", "--backend", "icarus", "--dut", str(EXAMPLE)],
     "program has no port contract"),
    (["regress", "--ops", "load-align", "--dut-amaranth", "no_such_module:X"],
     "no module named no_such_module"),
    (["regress", "--ops", "load-align", "--dut-amaranth", "tilecosim.hdl.align.load:Nope"],
     "Nope is not a wiring.Component class"),
    (["regress", "--ops", "load-align", "--dut-amaranth", "tilecosim.hdl.align.store:StoreAlignUnit"],
     "its ports differ from the load-align contract"),
    (["load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--addr", "0", "--dut", str(EXAMPLE)],
     "--dut: the design runs on an HDL backend"),
    (["load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--addr", "0", "--vl", "128",
      "--backend", "icarus", "--dut", str(EXAMPLE)], "the load-align contract is at VL = 256"),
])
def test_dut_usage_errors_are_one_line(tmp_path, args, needle):
    r = run(*args)
    assert r.returncode == 2, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_an_amaranth_design_that_does_not_elaborate_is_one_line(tmp_path):
    (tmp_path / "broken.py").write_text(
        "from amaranth import Module, Signal\n"
        "from tilecosim.hdl.align.load import LoadAlignUnit\n"
        "class Broken(LoadAlignUnit):\n"
        "    def elaborate(self, platform):\n"
        "        m = Module()\n"
        "        x = Signal()\n"
        "        m.d.comb += x.eq(self.op.valid)\n"
        "        m.d.sync += x.eq(1)\n"
        "        return m\n")
    out = tmp_path / "out"
    r = run("regress", "--ops", "load-align", "--count", "20", "--out", str(out),
            "--dut-amaranth", f"{tmp_path / 'broken.py'}:Broken")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"tilecosim regress: error: --dut-amaranth {tmp_path / 'broken.py'}:Broken: it does "
        f"not elaborate: SyntaxError: Driver-driver conflict: trying to drive (sig x) bit 0 "
        f"from d.sync, but it is already driven from d.comb"]
    assert not out.exists()


@pytest.mark.parametrize("op,top,width", [
    # the slow tier: test_the_projects_own_verilog_gives_the_built_in_report checks the
    # Instance path of a harness, and the TLOAD example the engine factory of the TLOAD one
    pytest.param("tload", "tload_engine", 32, marks=SLOW),
    pytest.param("tload", "tload_engine_w64", 64, marks=SLOW),
    pytest.param("load-data-with-transpose", "l1l0_engine", 32, marks=SLOW),
    pytest.param("load-data-with-transpose", "l1l0_engine_w128", 128, marks=SLOW),
    pytest.param("store-align", "store_align_unit", 32, marks=SLOW)])
def test_the_projects_own_engines_passed_back_give_the_built_in_report(tmp_path, op, top,
                                                                        width):
    """Each engine's Verilog from ``tilecosim verilog``, as a design from elsewhere: the
    same results, coverage and cycles as the built-in path, at its beat width."""
    v = run("verilog", "--out", str(tmp_path / "v"))
    assert v.returncode == 0, v.stderr
    common = ["regress", "--ops", op, "--backend", "verilator", "--count", "120", "--seed",
              "4", "--jobs", "2", "--width", str(width), "--json"]
    own = run(*common, "--out", str(tmp_path / "a"), "--dut", str(tmp_path / "v" / f"{top}.v"))
    builtin = run(*common, "--out", str(tmp_path / "b"))
    assert own.returncode == builtin.returncode == 0, own.stderr[-2000:]
    got, want = (json.loads(r.stdout.splitlines()[-1]) for r in (own, builtin))
    assert got["ops"] == want["ops"] and got["coverage"] == want["coverage"]
    assert got["design"] == f"{top} ({top}.v)"


TLOAD_EXAMPLE = ROOT / "examples" / "designs" / "tload_engine_bytewise.v"


@pytest.mark.parametrize("backend", ["icarus", pytest.param("verilator", marks=SLOW)])
def test_a_design_that_declares_a_subset_gets_only_scenarios_inside_it(tmp_path, backend):
    """The simple TLOAD engine implements NORM, one output, Zero and Null, W = 32, and no
    fault checks (its .supports.toml): regress draws only those, covers every bin they can
    hit, and reports the others as not applicable.  (Verilator in the slow tier: the TLOAD
    harness around it takes a minute to build.)"""
    r = run("regress", "--ops", "tload", "--backend", backend, "--count", "60",
            "--seed", "2", "--jobs", "2", "--out", str(tmp_path / "out"), "--json",
            "--dut", str(TLOAD_EXAMPLE))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    row = got["ops"][0]
    assert (got["mismatches"], row["faults_checked"]) == (0, 0)
    # 17 bins of NORM, one output, Zero or Null, and the 4 legal edges such a TLOAD can hit
    assert row["covered"] == row["bins"] == 21 and row["not_applicable"] == 143
    hit = {b for b, n in got["coverage"].items() if n}
    assert hit and all(b.startswith(("tload.shape:NORM/", "tload.outputs:NORM/1",
                                     "tload.region:NORM/", "tload.source:NORM/",
                                     "tload.edge:")) for b in hit)
    assert {b for b in hit if ".edge:" in b} == {
        "tload.edge:mem/end", "tload.edge:size/min", "tload.edge:ValidRow/at",
        "tload.edge:size/max"}
    assert not any(b.endswith(("/Max", "/Min")) for b in hit)
    assert got["uncovered"] == [] and len(got["not_applicable"]) == 143
    assert "coverage: all 21 bins hit that the design's declared subset can hit; 143 not " \
           "applicable" in r.stdout


@pytest.mark.parametrize("text,needle", [
    ("layouts = [\"NORM\", \"NZ\"]\n", "layouts = 'NZ' is not one of 'NORM', 'ND2NZ'"),
    ("colours = [\"red\"]\n", "'colours' is not a capability of tload"),
    ("faults = \"no\"\n", "faults = 'no': true (it checks the faults) or false"),
    ("outputs = []\n", "outputs = []: name at least one"),
    ("layouts = [\n", "not TOML"),
])
def test_a_bad_subset_file_is_one_line(tmp_path, text, needle):
    path = tmp_path / "subset.toml"
    path.write_text(text)
    r = run("tload", "TLOAD.NORM <LB0:16, FP16>, [a0], ->T<512>", "--reg", "a0=0",
            "--backend", "icarus", "--dut", str(TLOAD_EXAMPLE), "--dut-supports", str(path))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_a_width_outside_the_subset_is_refused(tmp_path):
    r = run("regress", "--ops", "tload", "--backend", "icarus", "--width", "64",
            "--dut", str(TLOAD_EXAMPLE), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "--width 64: the design declares W = 32 only" in r.stderr
    assert not (tmp_path / "out").exists()


@SLOW              # as the other coverage flows (a coverage build of its own)
def test_code_coverage_is_over_the_designs_own_hierarchy(tmp_path):
    """--coverage on Verilator reports line, branch and toggle coverage of the design's
    modules (its own file), not of the harness or the wrapper."""
    out = tmp_path / "out"
    r = run("regress", "--ops", "load-align", "--backend", "verilator", "--count", "60",
            "--seed", "1", "--jobs", "1", "--out", str(out), "--json", "--coverage",
            "--dut", str(EXAMPLE))
    assert r.returncode == 0, r.stderr[-2000:]
    code = json.loads(r.stdout.splitlines()[-1])["code_coverage"]
    (top,) = code["tops"]
    assert top["top"] == "load_align_unit"
    assert top["lines"]["total"] > 20 and top["branches"]["total"] > 10
    assert top["toggles"]["total"] > 500 and top["lines"]["hit"] > 0
    listing = (out / "coverage" / "uncovered.txt").read_text()
    assert "load_align_unit.sv:" in listing and "batch_load_align" not in listing


@pytest.mark.parametrize("op,spec", [("tload", "tilecosim.hdl.tload.engine:TLoadEngine"),
                                     ("load-data-with-transpose",
                                      "tilecosim.hdl.l1l0.engine:L1L0Engine"),
                                     pytest.param("store-align",
                                                  "tilecosim.hdl.align.store:StoreAlignUnit",
                                                  marks=SLOW)])
def test_each_engine_takes_an_amaranth_design(tmp_path, op, spec):
    """The built-in class named as a design from elsewhere runs the Python-driven bench of
    each operation with the results and cycles of the built-in path."""
    common = ["regress", "--ops", op, "--backend", "amaranth", "--count", "24", "--seed", "3",
              "--jobs", "2", "--json"]
    own = run(*common, "--out", str(tmp_path / "a"), "--dut-amaranth", spec)
    builtin = run(*common, "--out", str(tmp_path / "b"))
    assert own.returncode == builtin.returncode == 0, own.stderr[-2000:]
    got, want = (json.loads(r.stdout.splitlines()[-1]) for r in (own, builtin))
    assert got["ops"] == want["ops"] and got["design"] == spec
