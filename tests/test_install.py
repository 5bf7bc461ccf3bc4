"""The installed package stands alone: the wheel, installed (not editable) into a fresh virtual
environment, runs every command but ``mutation`` from an empty folder, with no file of the
repository in reach; ``mutation --list`` works, and running a mutant says in one line that
it needs a checkout.

The wheel is built from a copy of the sources that ship (so that the build writes nothing
into the repository) and installed without its dependencies, which the fresh environment
reads from this one's site-packages through a path file: a path file's own path files are
not run, so this environment's editable tilecosim stays out of reach."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPS = ("tilecosim", "model", "hdl", "examples", "pyproject.toml", "README.md")

SEED_1 = "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>"
REGS = ["--reg", "a0=8", "--reg", "a1=118", "--reg", "a2=0"]
PROGRAM_REGS = ["--reg", "a0=0", "--reg", "a1=512", "--reg", "a2=1024"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh environment's ``tilecosim`` script, an empty folder, its environment)."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    for name in SHIPS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(ROOT / name, src / name)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(tmp / "dist"), str(src)], capture_output=True, text=True,
                           timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next((tmp / "dist").glob("tilecosim-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    python = venv / "bin" / "python"
    inst = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert inst.returncode == 0, inst.stdout + inst.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    empty = tmp / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}" \
                  f"{env.get('PATH', '')}"
    return venv / "bin" / "tilecosim", empty, env, wheel


def _run(installed, *args, code=0):
    script, empty, env, _ = installed
    r = subprocess.run([str(script), *args], cwd=empty, env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == code, f"tilecosim {' '.join(args)}: exit {r.returncode}\n" \
                                 f"{r.stdout[-2000:]}{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr
    return r


def test_the_wheel_holds_the_examples_and_the_waivers_and_no_tests(installed):
    names = zipfile.ZipFile(installed[3]).namelist()
    for want in ("tilecosim/examples/kernel.s", "tilecosim/examples/designs/load_align_unit.sv",
                 "tilecosim/examples/designs/tload_engine_bytewise.supports.toml",
                 "tilecosim/flows/coverage_waivers.txt", "tilecosim/flows/lint_waivers.vlt",
                 "tilecosim/hdl/tload/engine.py", "tilecosim/model/tload.py"):
        assert want in names
    assert not [n for n in names if n.startswith(("tests/", "cocotb_tests/", "model/", "hdl/"))]


def test_it_runs_the_installed_copy_not_the_repository(installed):
    script, empty, env, _ = installed
    r = subprocess.run([str(script.parent / "python"), "-c",
                        "import tilecosim, tilecosim.hdl; print(tilecosim.__file__); "
                        "print(tilecosim.hdl.__file__)"], cwd=empty, env=env,
                       capture_output=True, text=True, check=True)
    for path in r.stdout.split():
        assert Path(path).is_relative_to(script.parent.parent) and ROOT.as_posix() not in path
    from importlib.metadata import version
    assert _run(installed, "--version").stdout.strip() == f"tilecosim {version('tilecosim')}"


def test_every_command_but_mutation_runs_from_an_empty_folder(installed):
    """Each command as a user first tries it, with the examples by name; what they write
    goes to the empty folder, and a JSON report names no git checkout."""
    r = _run(installed, "tload", SEED_1, *REGS, "--json")
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["git"] is None and (got["tiles"][0]["rows"], got["tiles"][0]["cols"]) == (8, 128)
    _run(installed, "tload", SEED_1, *REGS, "--backend", "amaranth")
    _run(installed, "asm", "TSTORE.ND2NZ <LB0:32, LB1:32, LB2:32, S16>, U#1, [a2]")
    assert "TADD" in _run(installed, "run", "example:seed_tiles.s", *PROGRAM_REGS).stdout
    r = _run(installed, "run", "example:kernel.s", "--reg", "a0=0", "--reg", "a1=2048",
             "--reg", "a2=8192", "--backend", "amaranth", "--out", "kernel.npz")
    assert "amaranth (W=32): match" in r.stdout
    _run(installed, "load-data-with-transpose", "--dtype", "int8", "--repeat-times", "3",
         "--src-stride", "1", "--dst-gap", "1", "--dst-bytes", "4096")
    _run(installed, "load-align", "--dist", "DIST_US_B16", "--dtype", "b16", "--addr", "64",
         "--backend", "icarus", "--dut", "example:designs/load_align_unit.sv")
    _run(installed, "store-align", "--dist", "DIST_PACK_B32", "--dtype", "b32", "--addr", "64")
    r = _run(installed, "regress", "--ops", "load-align", "--count", "20", "--seed", "1",
             "--junit", "r.xml", "--json")
    assert json.loads(r.stdout.splitlines()[-1])["mismatches"] == 0
    _run(installed, "contract", "load-align", "--lang", "systemverilog")
    _run(installed, "draw", "ZZ", "--rows", "4", "--cols", "4", "--fractal", "2x2", "--out",
         "zz.svg")
    _run(installed, "bench", "--only", "golden", "--out", "bench")
    _run(installed, "verilog", "--out", "v")
    _run(installed, "formal", "--list")
    _run(installed, "examples", "--out", "ex")
    assert "demo: all steps behaved as expected" in _run(installed, "demo").stdout
    empty = installed[1]
    for made in ("kernel.npz", "build/regress", "r.xml", "zz.svg", "bench/bench.md",
                 "v/tload_engine.v", "ex/kernel.s", "ex/designs/load_align_unit_bug.sv"):
        assert (empty / made).exists(), made
    # every --help, and none names a path of the repository
    for cmd in ([], ["tload"], ["asm"], ["run"], ["load-data-with-transpose"], ["load-align"],
                ["store-align"], ["regress"], ["contract"], ["draw"], ["bench"], ["verilog"],
                ["mutation"], ["formal"], ["examples"], ["demo"]):
        text = _run(installed, *cmd, "--help").stdout
        for path in ("examples/", "docs/", "model/", "tests/", "README", "tilecosim/"):
            assert path not in text, f"tilecosim {' '.join(cmd)} --help names {path}"


def test_mutation_lists_its_mutants_and_says_in_one_line_what_running_them_needs(installed):
    r = _run(installed, "mutation", "--list")
    assert "addr-norm" in r.stdout and "hdl/tload/addrgen.py" in r.stdout
    assert _run(installed, "mutation", "--list", "--generated", "3", "--seed", "1").stdout
    r = _run(installed, "mutation", "--only", "addr-norm", code=2)
    assert r.stderr.strip().splitlines() == [
        "tilecosim mutation: error: running mutants needs a source checkout: the mutants meet "
        "the repository's tests, and this tilecosim is installed without them (--list works "
        "anywhere)"]
