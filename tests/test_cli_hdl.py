"""`tilecosim tload --backend amaranth` and `tilecosim verilog` through a subprocess."""

import json

import pytest

from .test_cli import REGS, SEED_1, run


def test_amaranth_backend_json(tmp_path):
    vcd = tmp_path / "run.vcd"
    r = run("tload", SEED_1, *REGS, "--backend", "amaranth", "--json", "--vcd", str(vcd),
            "--mem-seed", "4", "--mem-size", "8192")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["backend"] == "amaranth" and obj["match"] is True and obj["fault"] is None
    assert obj["ideal_cycles"] == 2048 // 32 and obj["cycles"] >= obj["ideal_cycles"]
    assert vcd.exists() and vcd.stat().st_size > 0


def test_amaranth_backend_human_and_fault():
    r = run("tload", "TLOAD.DN2NZ <LB0:30, LB1:20, LB2:32, BF16, Max>, [a0], ->T<1KB>, U<1KB>",
            "--reg", "a0=0", "--backend", "amaranth", "--width", "64", "--stall", "0.3")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "amaranth (W=64): match" in r.stdout
    r = run("tload", "TLOAD.NORM <LB0:40, LB2:32, FP16>, [a0], ->T<512>", "--reg", "a0=0",
            "--backend", "amaranth", "--json")
    assert r.returncode == 3
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["fault"]["code"] == 2 and obj["hdl_fault"] == 2 and obj["match"] is True


def test_backends_still_to_come_fail_on_one_line(tmp_path):
    ub = tmp_path / "ub.bin"
    ub.write_bytes(bytes(1024))
    r = run("load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--ub", str(ub), "--addr", "0",
            "--backend", "icarus")
    assert r.returncode == 2 and "not available yet" in r.stderr
    r = run("tload", SEED_1, *REGS, "--vcd", "x.vcd")
    assert r.returncode == 2 and "--vcd needs an HDL backend" in r.stderr


def test_verilog_writes_the_tops(tmp_path):
    r = run("verilog", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "tload_engine.v").read_text()
    assert text.count("module tload_engine(") == 1
    for port in ("instr__payload", "instr__valid", "instr__ready", "req__payload", "resp__payload",
                 "write__payload", "done__payload", "mem_size", "clk", "rst"):
        assert port in text
    assert "src =" not in text                                  # emit_src=False
    for stem in ("tload_engine_w64", "square_transpose", "load_align_unit", "store_align_unit",
                 "l1l0_engine"):
        assert (tmp_path / f"{stem}.v").read_text().count(f"module {stem}(") == 1


def test_load_align_amaranth_backend(tmp_path):
    ub = tmp_path / "ub.bin"
    ub.write_bytes(bytes(range(256)) * 16)
    vcd = tmp_path / "la.vcd"
    r = run("load-align", "--dist", "DIST_E2B_B32", "--dtype", "b32", "--ub", str(ub),
            "--addr", "64", "--addr-reg", "8", "--backend", "amaranth", "--json", "--vcd", str(vcd))
    assert r.returncode == 0, r.stderr
    assert vcd.stat().st_size > 0
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["match"] is True and obj["cycles"] == 2 and obj["ideal_cycles"] == 1
    r = run("load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--ub", str(ub),
            "--addr", "4000", "--backend", "amaranth", "--json")
    assert r.returncode == 3
    assert json.loads(r.stdout.splitlines()[-1])["match"] is True


def test_load_data_with_transpose_amaranth_backend(tmp_path):
    src = tmp_path / "l1.bin"
    src.write_bytes(bytes(range(256)) * 64)
    r = run("load-data-with-transpose", "--dtype", "float", "--repeat-times", "4", "--src-stride",
            "1", "--dst-gap", "1", "--src", str(src), "--dst-bytes", "8192", "--backend",
            "amaranth", "--stall", "0.2", "--json", "--vcd", str(tmp_path / "ldt.vcd"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ldt.vcd").stat().st_size > 0
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["match"] is True and obj["ideal_cycles"] == 128 and obj["cycles"] >= 128
    r = run("load-data-with-transpose", "--dtype", "int8", "--repeat-times", "3", "--src-stride",
            "1", "--src", str(src), "--dst-bytes", "8192", "--backend", "amaranth")
    assert r.returncode == 3 and "amaranth: match" in r.stdout          # the overlap fault


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_tload_on_the_verilog_simulators(sim):
    """Same tiles as the model and the same cycle count as Amaranth's simulator."""
    from hdl.cocotb_run import missing
    from hdl.toolchain import in_ci
    if missing(sim):
        (pytest.fail if in_ci() else pytest.skip)(missing(sim))
    args = ["tload", "TLOAD.DN2NZ <LB0:30, LB1:20, LB2:32, BF16, Max>, [a0], ->T<1KB>, U<1KB>",
            "--reg", "a0=0", "--stall", "0.2", "--seed", "3", "--json"]
    r = run(*args, "--backend", sim)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    ref = json.loads(run(*args, "--backend", "amaranth").stdout.splitlines()[-1])
    assert got["match"] is True and got["backend"] == sim
    assert got["cycles"] == ref["cycles"] and got["ideal_cycles"] == ref["ideal_cycles"]
