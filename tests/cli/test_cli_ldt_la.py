"""`tilecosim load-data-with-transpose` and `tilecosim load-align` through a subprocess."""

import json

import numpy as np
import pytest

from tilecosim.model.buffers import Buffer
from tilecosim.model.load_align import Addressing, load_align
from tilecosim.model.load_data import LoadData2dTransposeParams, load_data_with_transpose

from .test_cli import run


@pytest.fixture
def l1(tmp_path):
    data = np.random.default_rng(11).integers(0, 256, 16384, dtype=np.uint8)
    path = tmp_path / "l1.bin"
    data.tofile(path)
    return path, data


def test_ldt_out_matches_the_model(l1, tmp_path):
    path, data = l1
    out = tmp_path / "l0.bin"
    r = run("load-data-with-transpose", "--dtype", "int8", "--repeat-times", "3", "--src-stride", "1",
            "--dst-gap", "0", "--dst-frac-gap", "2", "--src", str(path), "--dst-bytes", "4096",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    want = Buffer("L0A", 4096)
    load_data_with_transpose(Buffer("L1", data), want,
                             LoadData2dTransposeParams("int8", repeat_times=3, src_stride=1, dst_frac_gap=2))
    np.testing.assert_array_equal(np.fromfile(out, np.uint8), want.data)
    assert "iteration 1: L1 fractals 0x400, 0x600 -> L0A fractals 0x200, 0x800" in r.stdout
    assert "square of iteration 0, before (L1): 32x32 elements" in r.stdout


def test_ldt_json_and_v2_default_l0b(l1):
    path, _ = l1
    r = run("load-data-with-transpose", "--v2", "--dtype", "half", "--repeat-times", "2",
            "--src-stride", "1", "--src", str(path), "--dst-bytes", "2048", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["op"] == "load-data-with-transpose" and obj["dst"] == "L0B"
    assert obj["params"]["version"] == 2 and obj["bytes_moved"] == 1024 and obj["fault"] is None
    assert {"cycles", "ideal_cycles", "match"} <= set(obj)
    assert [(p["src"], p["dst"]) for p in obj["placements"]] == [(0, 0), (512, 512)]


def test_ldt_fault_exit_3_nothing_written(l1, tmp_path):
    path, _ = l1
    out = tmp_path / "l0.bin"
    r = run("load-data-with-transpose", "--dtype", "int4b", "--repeat-times", "1", "--src", str(path),
            "--dst-bytes", "4096", "--out", str(out), "--json")
    assert r.returncode == 3
    assert r.stderr.strip() == "IllegalParameter: dtype=int4b: int4b may be loaded only to L0B"
    assert json.loads(r.stdout.splitlines()[-1])["fault"]["code"] == 2
    assert not out.exists()
    r = run("load-data-with-transpose", "--dtype", "half", "--repeat-times", "300", "--src", str(path),
            "--dst-bytes", "4096")
    assert r.returncode == 3 and r.stderr.startswith("ParameterRange: repeatTimes=300")


@pytest.mark.parametrize("args,needle", [
    (["--dtype", "int7", "--repeat-times", "1"], "invalid choice: 'int7'"),
    (["--dtype", "half", "--repeat-times", "x"], "--repeat-times 'x' is not an integer"),
    (["--dtype", "half", "--repeat-times", "1", "--src-frac-gap", "1"], "--src-frac-gap is a V2 parameter"),
    (["--dtype", "half", "--repeat-times", "1", "--addr-mode", "2"], "invalid choice: 2"),
    (["--dtype", "half", "--repeat-times", "1", "--backend", "verilator", "--vcd", "x.vcd"],
     "--vcd is for --backend amaranth"),
    (["--dtype", "half", "--repeat-times", "1", "--stall", "2"], "--stall '2' must be in [0, 1)"),
])
def test_ldt_usage_errors(l1, args, needle):
    path, _ = l1
    r = run("load-data-with-transpose", *args, "--src", str(path), "--dst-bytes", "4096")
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_load_align_npz_json_and_lanes(l1, tmp_path):
    path, data = l1
    out = tmp_path / "regs.npz"
    r = run("load-align", "--dist", "DIST_DINTLV_B16", "--dtype", "b16", "--ub", str(path),
            "--addr", "64", "--post-update", "256", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["op"] == "load-align" and obj["next_addr"] == 64 + 512 and obj["fault"] is None
    want = load_align(Buffer("UB", data), 64, "DIST_DINTLV_B16", "b16", Addressing.post_update(256))
    with np.load(out) as z:
        assert sorted(z.files) == ["dst0", "dst1"]
        for k in range(2):
            assert z[f"dst{k}"].dtype == np.uint8 and z[f"dst{k}"].size == 256
            np.testing.assert_array_equal(z[f"dst{k}"], want.dst[k])
    r = run("load-align", "--dist", "brc_b16", "--dtype", "b16", "--ub", str(path), "--addr", "2")
    lane = f"{data[3]:02x}{data[2]:02x}"
    assert r.returncode == 0 and r.stdout.splitlines()[2].split("]")[1].split()[:2] == [lane, lane]


def test_load_align_faults_and_usage(l1):
    path, _ = l1
    r = run("load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--ub", str(path), "--addr", "16")
    assert r.returncode == 3 and r.stderr.startswith("Alignment: UB address=0x10")
    r = run("load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--ub", str(path), "--addr", "16384")
    assert r.returncode == 3 and r.stderr.startswith("OutOfBounds: UB address=0x4000")
    r = run("load-align", "--dist", "DIST_FOO", "--dtype", "b8", "--ub", str(path), "--addr", "0")
    assert r.returncode == 2 and "--dist 'DIST_FOO' is not a LoadDist" in r.stderr
    r = run("load-align", "--dist", "NORM", "--dtype", "b8", "--ub", str(path), "--addr", "0",
            "--post-update", "1", "--addr-reg", "2")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


def test_load_align_takes_the_dist_field_code(l1):
    """--dist also takes the 5-bit code (how regress reproduces a code no mode has): 7 is
    DIST_US_B16 (D12), 5 names no mode and faults IllegalParameter, 32 is outside the field."""
    path, _ = l1
    r = run("load-align", "--dist", "7", "--dtype", "b16", "--ub", str(path), "--addr", "0")
    assert r.returncode == 0 and r.stdout.startswith("LoadAlign DIST_US_B16 T=b16")
    r = run("load-align", "--dist", "5", "--dtype", "b8", "--ub", str(path), "--addr", "0",
            "--backend", "amaranth", "--json")
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("IllegalParameter: dist=5: not a LoadAlign distribution mode")
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["dist"] == 5 and obj["match"] is True
    r = run("load-align", "--dist", "32", "--dtype", "b8", "--ub", str(path), "--addr", "0")
    assert r.returncode == 2 and "--dist '32': a code is 0..31 (5 bits)" in r.stderr
