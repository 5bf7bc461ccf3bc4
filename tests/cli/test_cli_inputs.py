"""Inputs as a new user tries them: conflicting options, odd input files, options that must
do what their help says, messages that point the right way, printouts of bounded length."""

import re

import numpy as np
import pytest

from . import in_process

TLOAD = "TLOAD.NORM <LB0:16, LB1:4, FP16>, [a0], ->T<512>"


def run(argv):
    return in_process(argv)


def one_line_error(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err


@pytest.fixture
def ramp(tmp_path):
    f = tmp_path / "ramp.bin"
    f.write_bytes(bytes(range(256)) * 64)
    return str(f)


# --- conflicting inputs are refused, as --mem with --mem-seed -------------------------------

@pytest.mark.parametrize("argv, first, second", [
    (["load-data-with-transpose", "--dtype", "int8", "--repeat-times", "1", "--dst-bytes",
      "1024", "--src", "{f}", "--src-bytes", "100"], "--src", "--src-bytes"),
    (["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0", "--ub", "{f}",
      "--ub-bytes", "64"], "--ub", "--ub-bytes"),
    (["tload", TLOAD, "--reg", "a0=0", "--mem", "{f}", "--mem-size", "4096"], "--mem",
     "--mem-size"),
    (["run", "-", "--mem", "{f}", "--mem-size", "4096"], "--mem", "--mem-size"),
])
def test_a_file_and_a_size_exclude_each_other(ramp, argv, first, second):
    code, out, err = run([a.replace("{f}", ramp) for a in argv])
    assert code == 2 and out == ""
    one_line_error(err, f"{first} and {second} exclude each other")


def test_the_size_alone_still_sizes_the_ramp():
    code, out, _ = run(["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "32",
                        "--ub-bytes", "64", "--json"])
    assert code == 3 and '"OutOfBounds"' in out            # 256 B from 32 in a 64 B UB


def test_load_data_with_transpose_latency_is_the_l1_read_latency():
    """--latency sets the bench's L1 read latency: eight int8 squares, read one 32 B line a
    request, take longer when each answer comes 64 cycles after its request."""
    base = ["load-data-with-transpose", "--dtype", "int8", "--repeat-times", "8",
            "--src-stride", "1", "--dst-gap", "1", "--dst-bytes", "16384", "--backend",
            "icarus", "--json"]
    cycles = {}
    for lat in ("2", "64"):
        code, out, err = run(base + ["--latency", lat])
        assert code == 0, err
        got = __import__("json").loads(out.strip().splitlines()[-1])
        assert got["match"] is True
        cycles[lat] = got["cycles"]
    assert cycles["64"] > cycles["2"] + 62               # at least the added wait, once


# --- input files are read alike, bounded, and refused in one line ---------------------------

FILE_OPTIONS = {
    "--mem": ["tload", TLOAD, "--reg", "a0=0", "--mem"],
    "--src": ["load-data-with-transpose", "--dtype", "int8", "--repeat-times", "1",
              "--dst-bytes", "1024", "--src"],
    "--ub": ["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0", "--ub"],
    "PROGRAM": ["run", "--reg", "a0=0"],
}


@pytest.mark.parametrize("opt", list(FILE_OPTIONS))
@pytest.mark.parametrize("kind, says", [("empty", "the file is empty"),
                                        ("/dev/zero", "not a regular file"),
                                        ("/proc/self/mem", "a /proc or /sys file"),
                                        ("folder", "is a folder"),
                                        ("missing", "No such file")])
def test_odd_input_files_are_one_line_usage_errors_in_every_option(tmp_path, opt, kind, says):
    path = {"empty": tmp_path / "empty", "folder": tmp_path,
            "missing": tmp_path / "missing"}.get(kind, kind)
    if kind == "empty":
        path.write_bytes(b"")
    code, out, err = run(FILE_OPTIONS[opt] + [str(path)])
    assert code == 2 and out == ""
    one_line_error(err, f"{opt} {str(path)!r}", says)


@pytest.mark.parametrize("name, says", [("r.txt", "the file name must end in .xml"),
                                        ("a_file/r.xml", "is a file")])
def test_a_junit_path_that_cannot_be_written_is_refused_before_the_run(tmp_path, name, says):
    (tmp_path / "a_file").write_text("x")
    code, out, err = run(["regress", "--count", "1", "--out", str(tmp_path / "out"),
                          "--junit", str(tmp_path / name)])
    assert code == 2 and out == ""
    one_line_error(err, f"--junit {str(tmp_path / name)!r}", says)
    assert not (tmp_path / "out").exists() and (tmp_path / "a_file").read_text() == "x"


# --- messages --------------------------------------------------------------------------------

@pytest.mark.parametrize("cmd", [["verilog"], ["bench", "--no-area"], ["formal"],
                                 ["regress", "--count", "1"]])
def test_out_naming_a_file_says_a_folder_is_expected(tmp_path, cmd):
    f = tmp_path / "a_file"
    f.write_text("x")
    code, _, err = run(cmd + ["--out", str(f)])
    assert code == 2
    one_line_error(err, f"--out {str(f)!r}: is a file; a folder is expected")
    assert f.read_text() == "x"


@pytest.mark.parametrize("argv", [["tload", TLOAD], ["run", "prog.s"], ["verilog"],
                                  ["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0"],
                                  ["regress"]])
def test_an_unknown_option_points_to_the_subcommands_help(argv):
    cmd = argv[0]
    code, _, err = run(argv + ["--no-such-option"])
    assert code == 2
    one_line_error(err, "unrecognized arguments: --no-such-option",
                   f"(see 'tilecosim {cmd} --help')")


def test_a_cold_build_says_it_is_building(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECOSIM_BUILD_CACHE", str(tmp_path / "cache"))
    code, out, err = run(["tload", TLOAD, "--reg", "a0=0", "--backend", "icarus"])
    assert code == 0 and "icarus (W=32): match" in out
    assert re.search(r"^tilecosim: building tload_engine for icarus \(once; later runs reuse ",
                     err, re.M), err
    code, out, err = run(["tload", TLOAD, "--reg", "a0=0", "--backend", "icarus"])
    assert code == 0 and "building" not in err            # the second run reuses it


# --- bounded printout ------------------------------------------------------------------------

def test_a_long_register_is_elided_and_saved_whole(tmp_path):
    """VL = 16 MiB of b8: 524,288 rows of 32 lanes; the printout keeps 16 + 2 of them and
    says how many it left out, --out holds every byte (element k of the ramp holds k)."""
    out_file = tmp_path / "r.npz"
    code, out, _ = run(["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0",
                        "--vl", str(1 << 24), "--ub-bytes", str(1 << 25), "--out",
                        str(out_file)])
    assert code == 0
    lines = out.splitlines()
    assert len(lines) < 30
    assert any("524270 rows left out (--full prints them" in ln for ln in lines)
    dst0 = np.load(out_file)["dst0"]
    assert dst0.size == 1 << 24
    assert np.array_equal(dst0, np.arange(1 << 24, dtype=np.uint32).astype(np.uint8))
