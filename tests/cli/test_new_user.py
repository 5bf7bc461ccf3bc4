"""What a new user typed and tripped over (issue 13): output paths, seeds, numbers that do
not fit, the arrow before every destination, the built-in ramps, help texts.

Bad input is a one-line error naming the option and the value, exit 2, nothing written;
good input writes exactly the file named.  Runs in-process (``main``) except where the
interpreter's own warnings are the point.
"""

import argparse
import json
import subprocess

import numpy as np
import pytest

from tilecosim.cli import build_parser
from tilecosim.model.asm import AsmError, parse_tload
from tilecosim.model.buffers import Buffer
from tilecosim.model.load_align import Addressing, LoadDist, load_align
from tilecosim.model.load_data import LoadData2dTransposeParams, load_data_with_transpose

from . import in_process
from .test_cli import _command

TLOAD = "TLOAD.NORM <LB0:16, LB1:16, FP16>, [a0], ->T<512>"
LDT = ["load-data-with-transpose", "--dtype", "int8", "--repeat-times", "3", "--src-stride", "1",
       "--dst-gap", "1", "--dst-bytes", "4096"]
LA = ["load-align", "--dist", "DIST_US_B16", "--dtype", "b16", "--addr", "64"]


def cli(*argv):
    return in_process(argv)


def usage_error(argv, *needles):
    code, out, err = cli(*argv)
    assert code == 2, (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


# --- 1, 4: output paths ---------------------------------------------------------------------

COMMANDS = {"tload": ["tload", TLOAD, "--reg", "a0=0"], "ldt": LDT, "load-align": LA}
SUFFIX = {"tload": ".npz", "ldt": ".bin", "load-align": ".npz"}


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_out_naming_a_directory_is_a_usage_error(cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"d{SUFFIX[cmd]}").mkdir()
    for path in (f"d{SUFFIX[cmd]}", str(tmp_path), "sub/"):
        usage_error(COMMANDS[cmd] + ["--out", path], f"--out {path!r}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"d{SUFFIX[cmd]}"]


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_out_where_nothing_can_be_written(cmd, tmp_path):
    (tmp_path / "file").write_text("x")
    usage_error(COMMANDS[cmd] + ["--out", f"/proc/x{SUFFIX[cmd]}"], "--out '/proc/x", "cannot write")
    usage_error(COMMANDS[cmd] + ["--out", str(tmp_path / f"file/x{SUFFIX[cmd]}")],
                "is a file, not a directory")
    usage_error(COMMANDS[cmd] + ["--out", str(tmp_path / f"none/x{SUFFIX[cmd]}")],
                "does not exist")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.mark.parametrize("cmd", ["tload", "load-align"])
def test_an_npz_output_must_be_named_npz(cmd, tmp_path):
    usage_error(COMMANDS[cmd] + ["--out", str(tmp_path / "x.txt")], "--out", "x.txt",
                "must end in .npz")
    assert list(tmp_path.iterdir()) == []


def test_the_file_written_is_the_file_named(tmp_path):
    code, out, _ = cli("tload", TLOAD, "--reg", "a0=0", "--out", str(tmp_path / "T.NPZ"))
    assert code == 0 and f"wrote {tmp_path / 'T.NPZ'}" in out
    code, out, _ = cli(*LDT, "--out", str(tmp_path / "l0.raw"))
    assert code == 0 and f"wrote {tmp_path / 'l0.raw'}" in out
    code, out, _ = cli(*LA, "--out", str(tmp_path / "regs.npz"))
    assert code == 0 and f"wrote {tmp_path / 'regs.npz'}" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T.NPZ", "l0.raw", "regs.npz"]
    with np.load(tmp_path / "T.NPZ") as z:
        assert sorted(z.files) == ["tile0", "valid0"]
    assert (tmp_path / "l0.raw").stat().st_size == 4096


def test_a_failed_write_keeps_the_old_file_and_leaves_no_debris(tmp_path, monkeypatch):
    out = tmp_path / "t.npz"
    out.write_bytes(b"the user's older file")

    def broken(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(np, "savez", broken)
    usage_error(["tload", TLOAD, "--reg", "a0=0", "--out", str(out)], "No space left on device")
    assert out.read_bytes() == b"the user's older file"
    assert [p.name for p in tmp_path.iterdir()] == ["t.npz"]


# --- 2, 8, 9: numbers -----------------------------------------------------------------------

@pytest.mark.parametrize("argv,needle", [
    (["tload", TLOAD, "--reg", "a0=0", "--mem-seed", "-3"], "--mem-seed '-3' must be in 0.."),
    (["regress", "--count", "1", "--seed", "-1"], "--seed '-1' must be in 0.."),
    (["regress", "--count", "1", "--seed", str(1 << 64)], "must be in 0..18446744073709551615"),
    (["tload", TLOAD, "--reg", "a0=0", "--backend", "amaranth", "--seed", "-2"], "--seed '-2'"),
    (["tload", TLOAD, "--reg", "a0=0", "--backend", "amaranth", "--latency", "-1"],
     "--latency '-1' must be in 1..256"),
    (["tload", TLOAD, "--reg", "a0=0", "--backend", "amaranth", "--latency", "0"],
     "--latency '0' must be in 1..256"),
    (["tload", TLOAD, "--reg", f"a0={10 ** 26}"], f"--reg 'a0={10 ** 26}': VALUE must fit the 64-bit register"),
    (["tload", TLOAD, "--reg", f"a0={-(1 << 63) - 1}"], "must fit the 64-bit register"),
])
def test_numbers_out_of_range_name_the_option_and_the_range(argv, needle):
    usage_error(argv, needle)


def test_register_values_at_the_edges_of_64_bits_are_taken():
    code, _, err = cli("tload", TLOAD, "--reg", f"a0={(1 << 64) - 1}")
    assert code == 3 and "RegSrc0=18446744073709551615" in err      # not wrapped: out of bounds
    code, _, err = cli("tload", TLOAD, "--reg", "a0=-1")            # two's complement
    assert code == 3 and "RegSrc0=18446744073709551615" in err
    code, _, _ = cli("tload", TLOAD, "--reg", "a0=0010")            # leading zeros: decimal 10
    assert code == 0


@pytest.mark.parametrize("text,field", [
    ("TLOAD.NORM <LB0:99999999999999999999999, FP16>, [a0], ->T<512>", "LB0 (ValidCol)"),
    ("TLOAD.NORM <LB0:16, LB1:a1+18446744073709551616, FP16>, [a0], ->T<512>", "LB1 (ValidRow)"),
    ("TLOAD.NORM <LB0:16, FP16>, [a0], ->T<17592186044416MB>", "DstTile0"),  # 2**64 B,
])
def test_assembly_numbers_wider_than_64_bits_are_refused(text, field):
    with pytest.raises(AsmError, match=r"does not fit a 64-bit field \(0\.\.18446744073709551615\)") as e:
        parse_tload(text)
    assert field in str(e.value)


def test_the_largest_64_bit_literal_is_kept_exactly():
    insn = parse_tload("TLOAD.NORM <LB0:18446744073709551615, FP16>, [a0], ->T<512>")
    assert insn.valid_col.imm == (1 << 64) - 1


def test_latency_help_says_what_it_counts():
    code, out, _ = cli("tload", "--help")
    text = " ".join(out.split())
    assert code == 0 and "at the earliest CYCLES cycles after the cycle its request was accepted" in text


# --- 3, 5: waveforms ------------------------------------------------------------------------

def test_an_unwritable_vcd_is_one_line_without_a_coroutine_warning():
    r = subprocess.run(_command() + ["tload", TLOAD, "--reg", "a0=0", "--backend", "amaranth",
                                     "--vcd", "/proc/x.vcd"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--vcd '/proc/x.vcd'" in r.stderr and "Warning" not in r.stderr


@pytest.mark.parametrize("argv,needle", [
    (["--backend", "verilator", "--waves", "x.vcd"], "--waves 'x.vcd': the file name must end in .fst"),
    (["--backend", "icarus", "--waves", "x.wlf"], "--waves 'x.wlf': the file name must end in .vcd or .fst"),
    (["--backend", "amaranth", "--vcd", "x.fst"], "--vcd 'x.fst': the file name must end in .vcd"),
])
def test_a_waveform_is_named_after_its_format(argv, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    usage_error(["tload", TLOAD, "--reg", "a0=0", *argv], needle)
    assert list(tmp_path.iterdir()) == []


# --- 7: the arrow before each destination -----------------------------------------------------

SEVERAL = "TLOAD.ND2NZ <LB0:150, LB1:40, LB2:192, BF16, Max>, [a0, a1], {}"


@pytest.mark.parametrize("dsts", ["->T<8KB>, ->T<8KB>, ->T<8KB>", "->T<8KB>, T<8KB>, ->T<8KB>"])
def test_the_arrow_may_be_repeated_before_each_destination(dsts):
    one = parse_tload(SEVERAL.format("->T<8KB>, T<8KB>, T<8KB>"))
    insn = parse_tload(SEVERAL.format(dsts))
    assert insn == one and insn.dsts == (("T", 8192),) * 3
    assert insn.text().endswith("->T<8KB>, T<8KB>, T<8KB>")     # one canonical form


def test_a_program_takes_the_repeated_arrow(tmp_path):
    prog = tmp_path / "p.s"
    prog.write_text("TLOAD.NORM <LB0:16, LB1:32, FP16, Zero>, [a0], ->T<512>, ->U<512>\n")
    code, out, err = cli("run", str(prog), "--reg", "a0=0")
    assert code == 0, err
    assert "->  T#1, U#1" in out


def test_a_lone_arrow_is_still_an_error():
    with pytest.raises(AsmError, match="expected a destination queue"):
        parse_tload("TLOAD.NORM <LB0:16, FP16>, [a0], ->T<512>, ->")


# --- 10: the built-in ramps -------------------------------------------------------------------

def test_ldt_without_src_reads_a_ramp_of_its_element_type(tmp_path):
    code, out, err = cli(*LDT, "--out", str(tmp_path / "l0.bin"))
    assert code == 0, err
    l1 = np.arange(512 << 10, dtype=np.int64) % 256          # int8: element k holds k
    want = Buffer("L0A", 4096)
    load_data_with_transpose(Buffer("L1", l1.astype(np.uint8)), want,
                             LoadData2dTransposeParams("int8", repeat_times=3, src_stride=1,
                                                       dst_gap=1))
    np.testing.assert_array_equal(np.fromfile(tmp_path / "l0.bin", np.uint8), want.data)
    square = out.split("before (L1)")[1].splitlines()
    assert square[1].split()[:3] == ["00", "01", "02"] and square[2].split()[0] == "20"


def test_ldt_ramp_of_half_elements():
    code, out, err = cli("load-data-with-transpose", "--dtype", "half", "--repeat-times", "1",
                         "--dst-bytes", "512", "--src-bytes", "512")
    assert code == 0, err
    after = out.split("after (L0A)")[1].splitlines()
    assert after[1].split()[:3] == ["0000", "0010", "0020"]     # element (0, j) <- (j, 0) = 16 j


def test_load_align_without_ub_reads_a_ramp_of_its_element_type(tmp_path):
    code, out, err = cli(*LA, "--out", str(tmp_path / "r.npz"), "--json")
    assert code == 0, err
    ub = (np.arange(128 << 10, dtype=np.int64) % 65536).astype("<u2").view(np.uint8)
    r = load_align(Buffer("UB", ub), 64, LoadDist.DIST_US_B16, "b16", Addressing(), 256, 1)
    with np.load(tmp_path / "r.npz") as z:
        np.testing.assert_array_equal(z["dst0"], r.dst[0])
    lanes = r.dst[0].view("<u2")
    assert list(lanes[:4]) == [32, 32, 33, 33] and lanes.size == 128     # US: each element twice
    assert json.loads(out.splitlines()[-1])["bytes_read"] == 128


def test_ramp_sizes_are_checked():
    usage_error(LDT + ["--src-bytes", "0"], "--src-bytes '0' must be in 32..")
    usage_error(LA + ["--ub-bytes", "-1"], "--ub-bytes '-1' must be in 32..")


# --- 12, 13: help -----------------------------------------------------------------------------

def test_every_option_of_every_command_has_help():
    top, _ = build_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    missing = [(name, a.option_strings or a.dest) for name, p in sub.choices.items()
               for a in p._actions if not a.help]
    assert missing == []
    assert all(p.description for p in sub.choices.values())


def test_asm_without_registers_says_that_is_fine():
    code, out, _ = cli("asm", "TLOAD.NORM <LB0:a0, FP16>, [a1], ->T<512>")
    assert code == 0
    assert "values: not evaluated, register a0 has no value" in out
    assert "do not need register values" in out


def test_run_names_the_program_line_of_an_unset_register(tmp_path):
    prog = tmp_path / "p.s"
    prog.write_text("; two lines\n" + TLOAD + "\n")
    usage_error(["run", str(prog)], "PROGRAM line 2: register a0 has no value",
                "--reg a0=")


# --- 14: the demo ------------------------------------------------------------------------------

def test_the_demo_prints_each_fault_once():
    code, out, _ = cli("demo")
    assert code == 0
    assert out.count("ValidCol=40: exceeds Col=32") == 1
    assert out.count("source=T#3: was released") == 1
