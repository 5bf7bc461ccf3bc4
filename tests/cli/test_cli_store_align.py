"""`tilecosim store-align` through a subprocess.

Expected bytes come from seed 003's description of each StoreDist (worked out here by hand on
ramps), not from the model: PACK_B32 keeps the low half of each b32 element, INTLV puts the
elements of two registers in turn, a mask enables an element by the bit of its first byte."""

import json

import numpy as np
import pytest

from .test_cli import run


def _u16(values) -> np.ndarray:
    return np.asarray(values, "<u2").view(np.uint8)


def test_pack_b32_under_a_mask_writes_the_low_half_of_the_enabled_elements(tmp_path):
    """src0 is the b32 ramp (element k holds k); M3 enables elements 0, 3, 6, ...; PACK_B32
    writes element k's low 16 bits at byte 2k of a VL/2 = 128-byte range."""
    out = tmp_path / "ub.bin"
    r = run("store-align", "--dist", "DIST_PACK_B32", "--dtype", "b32", "--addr", "64",
            "--mask", "M3", "--ub-bytes", "1024", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    assert (got["address"], got["bytes_written"], got["fault"]) == (64, 2 * 22, None)
    ub = np.fromfile(out, np.uint8)
    want = np.zeros(1024, np.uint8)
    for k in range(0, 64, 3):
        want[64 + 2 * k:64 + 2 * k + 2] = _u16([k])
    assert np.array_equal(ub, want)


def test_intlv_puts_back_what_dintlv_split(tmp_path):
    """load-align DINTLV_B16 splits the even and odd b16 elements of UB into dst0 and dst1;
    store-align INTLV_B16 of those registers writes the 512 bytes back in order."""
    regs = tmp_path / "regs.npz"
    a = run("load-align", "--dist", "DIST_DINTLV_B16", "--dtype", "b16", "--addr", "0",
            "--ub-bytes", "4096", "--out", str(regs))
    assert a.returncode == 0, a.stderr
    out = tmp_path / "ub.bin"
    b = run("store-align", "--dist", "DIST_INTLV_B16", "--dtype", "b16", "--addr", "512",
            "--src", str(regs), "--ub-bytes", "2048", "--post-update", "256", "--out", str(out),
            "--json", "--backend", "amaranth")
    assert b.returncode == 0, b.stderr
    got = json.loads(b.stdout.splitlines()[-1])
    assert got["next_addr"] == 512 + 256 * 2 and got["match"] is True
    ub = np.fromfile(out, np.uint8)
    assert np.array_equal(ub[512:1024], _u16(range(256)))       # the ramp UB's first 512 B
    assert not ub[:512].any() and not ub[1024:].any()


def test_the_printout_marks_the_bytes_a_mask_keeps():
    r = run("store-align", "--dist", "NORM_B16", "--dtype", "b16", "--addr", "0",
            "--mask", "VL2", "--ub-bytes", "512")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "StoreAlign DIST_NORM_B16 T=b16 VL=256: wrote 4 of 256 B at UB 0x0"
    assert lines[2] == "  +   0 00 00 01 00 " + " ".join([".."] * 28)


def test_a_faulting_store_exits_3_and_writes_nothing(tmp_path):
    out = tmp_path / "ub.bin"
    r = run("store-align", "--dist", "DIST_NORM", "--dtype", "b8", "--addr", "16",
            "--ub-bytes", "1024", "--out", str(out), "--backend", "icarus")
    assert r.returncode == 3
    assert r.stderr.splitlines()[-1].startswith("Alignment: ")
    assert "icarus: match" in r.stdout and not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["--mask", "random"], "--mask random draws from --src-seed: give one"),
    (["--dist", "DIST_BOGUS"], "--dist 'DIST_BOGUS' is not a StoreDist"),
    (["--src", "missing.npz"], "--src 'missing.npz': No such file or directory"),
    (["--ub", "x.bin", "--ub-bytes", "64"], "--ub and --ub-bytes exclude each other"),
    (["--out", "ub.npz"], "--out 'ub.npz'"),
    (["--src-seed", "-1"], "--src-seed '-1' must be in 0.."),
])
def test_usage_errors_are_one_line(tmp_path, args, needle):
    base = {"--dist": "DIST_NORM_B8", "--dtype": "b8", "--addr": "0"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = [x for kv in base.items() for x in kv]
    r = run("store-align", *argv)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_a_src_archive_without_the_second_register_is_one_line(tmp_path):
    regs = tmp_path / "regs.npz"
    np.savez(regs, src0=np.zeros(256, np.uint8))
    r = run("store-align", "--dist", "DIST_INTLV_B8", "--dtype", "b8", "--addr", "0",
            "--src", str(regs))
    assert r.returncode == 2
    assert r.stderr.strip().endswith("no array src1 (or dst1); this store takes 2 register(s)")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    r = run("store-align", "--dist", "DIST_NORM_B8", "--dtype", "b8", "--addr", "0",
            "--src", str(bad))
    assert r.returncode == 2 and "not a NumPy .npz archive" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
