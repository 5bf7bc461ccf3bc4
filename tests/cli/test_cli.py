"""The command line through a subprocess: exit codes, npz contents, JSON shape."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecosim.model.asm import parse_tload
from tilecosim.model.tload import tload

SEED_1 = "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>"
REGS = ["--reg", "a0=8", "--reg", "a1=118", "--reg", "a2=0"]


def _command():
    script = Path(sys.executable).parent / "tilecosim"
    if script.exists():
        return [str(script)]
    if os.environ.get("CI"):
        pytest.fail("the tilecosim console script is not installed next to the Python running "
                    "the tests: run 'make install'")
    return [sys.executable, "-m", "tilecosim"]


def run(*args, stdin=None, env=None):
    """``tilecosim ARGS`` in a subprocess, ``env`` added to the environment."""
    # a guard against a hang, not a speed check: a Verilog backend's first run converts and
    # builds the design (a cold Verilator build with waves took over 2 minutes while the
    # other test process was building too)
    return subprocess.run(_command() + list(args), capture_output=True, text=True, input=stdin,
                          timeout=900, env=dict(os.environ, **env) if env else None)


def test_seed_example_human_output():
    r = run("tload", SEED_1, *REGS)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16, Null>, [a2], ->T<2KB>"
    assert lines[1].startswith("T#1 (DstTile0): T<2048> FP16 ND 8x128, loaded 8x100")
    assert "undefined (Null pad)" in lines[1]
    # ramp memory: element k holds k; row i starts at i * ValidCol
    assert lines[2].split()[:3] == ["0", "1", "2"] and lines[3].split()[:2] == ["100", "101"]
    assert lines[2].split()[-1] == "."


def test_json_shape():
    r = run("tload", SEED_1, *REGS, "--json")
    assert r.returncode == 0
    obj = json.loads(r.stdout.splitlines()[-1])
    assert {"op", "backend", "tiles", "cycles", "ideal_cycles", "match", "fault"} <= set(obj)
    assert obj["op"] == "tload" and obj["backend"] == "golden" and obj["fault"] is None
    assert obj["cycles"] is None and obj["ideal_cycles"] is None and obj["match"] is None
    assert obj["tiles"] == [{"queue": "T", "size": 2048, "rows": 8, "cols": 128, "layout": "ND",
                             "dtype": "FP16", "name": "T#1"}]


def test_npz_matches_the_model_on_a_memory_file(tmp_path):
    gm = np.random.default_rng(3).integers(0, 256, 1 << 16, dtype=np.uint8)
    gm.tofile(tmp_path / "gm.bin")
    asm = "TLOAD.DN2NZ <LB0:20, LB1:a0, LB2:32, BF16, Min>, [a1, a2], ->T<1KB>, U<1KB>"
    out = tmp_path / "t.npz"
    r = run("tload", asm, "--reg", "a0=30", "--reg", "a1=0x40", "--reg", "a2=100",
            "--mem", str(tmp_path / "gm.bin"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    want = tload(gm, parse_tload(asm).resolve({"a0": 30, "a1": 0x40, "a2": 100}))
    with np.load(out) as z:
        assert sorted(z.files) == ["tile0", "tile1", "valid0", "valid1"]
        for k, img in enumerate(want):
            assert z[f"tile{k}"].dtype == np.uint8 and z[f"valid{k}"].dtype == bool
            np.testing.assert_array_equal(z[f"tile{k}"], img.data)
            np.testing.assert_array_equal(z[f"valid{k}"], img.valid)


def test_null_padding_marks_bytes_invalid_in_npz(tmp_path):
    out = tmp_path / "t.npz"
    r = run("tload", "TLOAD.NORM <LB0:3, LB2:128, S16>, [a0], ->T<256>", "--reg", "a0=0",
            "--out", str(out))
    assert r.returncode == 0
    with np.load(out) as z:
        assert z["valid0"].tolist() == [True] * 6 + [False] * 250


def test_profile_option(tmp_path):
    out = tmp_path / "t.npz"
    asm = "TLOAD.NORM <LB0:1, LB2:128, FP16, Max>, [a0], ->T<256>"
    assert run("tload", asm, "--reg", "a0=0", "--profile", "ieee-inf", "--out", str(out)).returncode == 0
    with np.load(out) as z:
        assert z["tile0"].view(np.uint16)[1] == 0x7C00


def test_fault_exit_3_json_and_nothing_written(tmp_path):
    out = tmp_path / "t.npz"
    r = run("tload", "TLOAD.NORM <LB0:40, LB2:32, FP16>, [a0], ->T<512>", "--reg", "a0=0",
            "--json", "--out", str(out))
    assert r.returncode == 3
    assert r.stderr.strip() == "IllegalParameter: ValidCol=40: exceeds Col=32"
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["fault"] == {"name": "IllegalParameter", "code": 2,
                            "message": "ValidCol=40: exceeds Col=32"}
    assert obj["tiles"] == []
    assert not out.exists()


def test_out_of_bounds_on_a_small_memory(tmp_path):
    (tmp_path / "gm.bin").write_bytes(bytes(1000))
    r = run("tload", "TLOAD.NORM <LB0:64, LB1:4, S8>, [a0], ->T<256>", "--reg", "a0=900",
            "--mem", str(tmp_path / "gm.bin"))
    assert r.returncode == 3 and r.stderr.startswith("OutOfBounds: RegSrc0=900")


def test_tload_to_acc_is_illegal_instruction():
    r = run("tload", "TLOAD <LB0:16, S8>, [a0], ->ACC<256>", "--reg", "a0=0")
    assert r.returncode == 3 and r.stderr.startswith("IllegalInstruction: DstTile0=ACC")


@pytest.mark.parametrize("args,needle", [
    (["tload", SEED_1, "--reg", "a0=eight"], "--reg 'a0=eight': VALUE 'eight' is not an integer"),
    (["tload", SEED_1, "--reg", "q9=1"], "--reg 'q9=1': expected NAME=VALUE"),
    (["tload", SEED_1, "--reg", "a0=8"], "register a1 has no value"),
    (["tload", SEED_1, *REGS, "--backend", "icarus", "--vcd", "x.vcd"], "--vcd is for --backend amaranth"),
    (["tload", SEED_1, *REGS, "--backend", "amaranth", "--waves", "x.fst"], "--waves is for --backend icarus"),
    (["tload", SEED_1, *REGS, "--waves", "x.fst"], "--waves needs an HDL backend"),
    (["tload", SEED_1, *REGS, "--backend", "verilator", "--waves", "/nonexistent/x.fst"], "--waves '/nonexistent/x.fst': directory"),
    (["tload", SEED_1, *REGS, "--backend", "modelsim"], "invalid choice: 'modelsim'"),
    (["tload", SEED_1, *REGS, "--profile", "fast"], "invalid choice: 'fast'"),
    (["tload", SEED_1, *REGS, "--mem", "/nonexistent/gm.bin"], "--mem '/nonexistent/gm.bin'"),
    (["tload", SEED_1, *REGS, "--out", "/nonexistent/dir/t.npz"], "does not exist"),
    (["tload", SEED_1, *REGS, "--mem-size", "-5"], "--mem-size '-5' must be in 1..1073741824"),
    (["tload", SEED_1, *REGS, "--lcfr", "1:2"], "need 256 <= MIN <= MAX"),
    (["run", "/nonexistent/prog.s"], "PROGRAM '/nonexistent/prog.s'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_usage_errors_exit_2_on_one_line(args, needle):
    r = run(*args)
    assert r.returncode == 2
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_malformed_assembly_points_at_the_column():
    r = run("tload", "TLOAD.ND2NZ <LB0:100 LB1:a0, FP16>, [a2], ->T<2KB>")
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0] == "tilecosim tload: error: column 22: expected ',' between operands " \
                       "(or '>' to close them), found 'LB1'"
    assert lines[2].index("^") == lines[1].index("LB1")


def test_asm_prints_template_fields_and_values():
    r = run("asm", "TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>", *REGS)
    assert r.returncode == 0
    assert "  B.DIM a1, 10, ->LB2\n" in r.stdout and "  B.IOR a2, a0\n" in r.stdout
    assert "  Col       a1+10" in r.stdout and "  col       128" in r.stdout
    r = run("asm", SEED_1, "--json")
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["block"][0] == "BSTART.TMA TLOAD, FP16" and obj["values"] is None


SEED_PROGRAM = """\
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a0], ->T<512>
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a1], ->T<512>
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a2], ->T<512>
TADD T#2.reuse, T#3, ->U
TSUB T#2, T#1, ->U
"""


def test_run_seed_program(tmp_path):
    (tmp_path / "p.s").write_text(SEED_PROGRAM)
    r = run("run", str(tmp_path / "p.s"), "--reg", "a0=0", "--reg", "a1=512", "--reg", "a2=1024")
    assert r.returncode == 0, r.stderr
    assert "line 4: TADD T#2.reuse, T#3, ->U  ->  U#1" in r.stdout
    assert "live tile registers (2):" in r.stdout
    r = run("run", "-", "--reg", "a0=0", "--reg", "a1=512", "--reg", "a2=1024",
            stdin=SEED_PROGRAM + "TADD T#3, T#1, ->U\n")
    assert r.returncode == 3
    assert r.stderr.startswith("line 6: TileReleased: source=T#3")


@pytest.mark.parametrize("cmd", [[], ["tload"], ["asm"], ["run"]])
def test_help_explains_with_an_example(cmd):
    r = run(*cmd, "--help")
    assert r.returncode == 0 and "example" in r.stdout


def test_each_command_is_defined_by_the_group_the_table_names():
    """tilecosim.cli.COMMANDS lists every command in the order of --help, with the group that
    defines it; a command builds its own group's parsers alone."""
    from tilecosim.cli import COMMANDS, build_parser
    top, every = build_parser()
    assert list(every) == list(COMMANDS)
    listed = next(a for a in top._actions if a.dest == "cmd")
    assert list(listed.choices) == list(COMMANDS)
    for name, group in COMMANDS.items():
        _, commands = build_parser([name, "--help"])
        assert list(commands) == [c for c, g in COMMANDS.items() if g == group], name


def test_a_command_imports_its_own_group_alone():
    """``tilecosim examples`` does not import the regression, the benchmarks, the drawing
    library or the other groups; an unknown command still lists every command."""
    code = ("import sys, contextlib, io\n"
            "from tilecosim.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['examples']) == 0\n"
            "print(' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(r.stdout.split())
    assert "tilecosim.cli.examples" in loaded
    assert not loaded & {"tilecosim.cli.regress", "tilecosim.cli.tload", "tilecosim.cli.draw",
                         "tilecosim.flows.regress", "tilecosim.perf.bench", "PIL"}
    r = run("frobnicate")
    assert r.returncode == 2 and "invalid choice: 'frobnicate'" in r.stderr
    assert "store-align" in r.stderr and "demo" in r.stderr


def test_demo_runs():
    r = run("demo")
    assert r.returncode == 0, r.stdout[-2000:]
    assert r.stdout.rstrip().endswith("demo: all steps behaved as expected")


# --- one parser per tool: bench parts and the mutation runner are subcommands ----------------

def test_bench_runs_the_parts_it_is_asked_for(tmp_path):
    r = run("bench", "--only", "load-align", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["load_align"]["ops"] == 108 and obj["load_align"]["ops_per_cycle"] == 1.0
    assert obj["tload"] == [] and obj["speed"] == [] and obj["area"] == []
    assert "### LoadAlign unit" in (tmp_path / "bench.md").read_text()


def test_mutation_lists_every_mutant_and_refuses_unknown_ones():
    r = run("mutation", "--list")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 62
    assert all(line.split()[1].startswith("hdl/") for line in r.stdout.splitlines())
    r = run("mutation", "--only", "addr-norm,bogus")
    assert r.returncode == 2 and "unknown mutant(s) bogus" in r.stderr


def test_mutation_generated_mutants_are_listed_by_seed_and_bad_options_named():
    r = run("mutation", "--generated", "60", "--seed", "1", "--generated-only", "--list")
    ids = [line.split()[0] for line in r.stdout.splitlines()]
    assert r.returncode == 0 and len(ids) == len(set(ids)) == 60
    assert all(i.startswith("g:") for i in ids)
    r = run("mutation", "--generated-only", "--list")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--generated-only" in r.stderr
    r = run("mutation", "--generated", "-3", "--list")
    assert r.returncode == 2 and "--generated" in r.stderr and "Traceback" not in r.stderr


def test_version_names_the_distribution_and_the_checkout(tmp_path):
    """``--version`` prints the installed distribution's version and, run from this git
    checkout, its ``git describe --always --dirty``; every JSON report carries both."""
    from importlib.metadata import version
    root = Path(__file__).resolve().parents[2]
    want = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip()
    r = run("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"tilecosim {version('tilecosim')} (git {want})"
    r = run("tload", SEED_1, *REGS, "--json")
    obj = json.loads(r.stdout.splitlines()[-1])
    assert (obj["version"], obj["git"]) == (version("tilecosim"), want)
    r = run("regress", "--ops", "load-align", "--count", "3", "--seed", "2", "--jobs", "1",
            "--out", str(tmp_path), "--json")
    obj = json.loads(r.stdout.splitlines()[-1])
    assert (obj["version"], obj["git"]) == (version("tilecosim"), want)


def test_regress_junit_has_a_suite_per_operation_and_a_case_per_bin(tmp_path):
    """``--junit``, read back with a JUnit library: a suite per operation with the run's seed
    and backend, a case per functional coverage bin (every bin the JSON report lists), the bins
    no scenario hit skipped, and nothing failed in a run without a mismatch."""
    from junitparser import JUnitXml, Skipped
    xml = tmp_path / "r.xml"
    r = run("regress", "--ops", "load-align,store-align", "--count", "12", "--seed", "4",
            "--jobs", "1", "--out", str(tmp_path / "out"), "--junit", str(xml), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    suites = {s.name: s for s in JUnitXml.fromfile(str(xml))}
    assert list(suites) == ["tilecosim.regress.load-align", "tilecosim.regress.store-align"]
    for row in got["ops"]:
        suite = suites[f"tilecosim.regress.{row['op']}"]
        props = {p.name: p.value for p in suite.properties()}
        assert (props["seed"], props["backend"], props["scenarios"]) == ("4", "amaranth", "12")
        cases = {c.name: c for c in suite}
        mine = {b for b in got["coverage"] if b in cases}
        assert len(cases) == row["bins"] == len(mine)
        assert (suite.tests, suite.failures, suite.errors) == (row["bins"], 0, 0)
        skipped = {n for n, c in cases.items() if c.result and isinstance(c.result[0], Skipped)}
        assert skipped == {b for b in mine if got["coverage"][b] == 0}
        assert suite.skipped == len(skipped) == row["bins"] - row["covered"] > 0
