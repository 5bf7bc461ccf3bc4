"""`tilecosim run --backend`: a program on the RTL tile system, compared with the golden
machine after every instruction (the same run on Icarus and Verilator is in
cocotb_tests/test_tiles.py)."""

import json

import pytest

from tilecosim.cli import main

from .test_cli import run

REGS = ["--reg", "a0=0", "--reg", "a1=512", "--reg", "a2=1024"]


def test_the_seed_example_on_amaranth_json():
    r = run("run", "examples/seed_tiles_int.s", *REGS, "--backend", "amaranth", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["op"] == "run" and obj["backend"] == "amaranth" and obj["match"] is True
    assert obj["fault"] is None and obj["arith"] == "integer" and obj["mismatches"] == []
    assert isinstance(obj["cycles"], int) and obj["cycles"] > 0
    # the seed: each TLOAD becomes T#1; TADD and TSUB each write U#1
    assert [(s["line"], s["names"]) for s in obj["steps"]] == [
        (7, ["T#1"]), (8, ["T#1"]), (9, ["T#1"]), (10, ["U#1"]), (11, ["U#1"])]


def test_a_fault_on_the_rtl_exits_3_with_its_name_and_code():
    prog = "TLOAD.NORM <LB0:16, LB1:16, U8, Zero>, [a0], ->M<256>\n" * 17
    r = run("run", "-", *REGS, "--backend", "amaranth", "--json", stdin=prog)
    assert r.returncode == 3, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["match"] is True
    assert obj["fault"]["name"] == "TileAllocation" and obj["fault"]["code"] == 3
    assert len(obj["steps"]) == 17 and obj["steps"][-1]["fault"]["code"] == 3
    assert r.stderr.startswith("line 17: TileAllocation: ")


def test_a_planted_alu_bug_is_a_mismatch_naming_line_register_row_column_byte(monkeypatch,
                                                                                capsys, tmp_path):
    """16-bit lanes computed as 8-bit ones (the carry between the bytes lost): exit 1, the
    report names the TADD's line, its destination register, the row, column and byte, and
    the program runs again with a waveform (in $TILECOSIM_WAVES_DIR), whose path it
    prints."""
    import tilecosim.hdl.tiles.elementwise as ew
    monkeypatch.setitem(ew.LANE_BITS, ew.LaneWidth.B16, 8)
    monkeypatch.setenv("TILECOSIM_WAVES_DIR", str(tmp_path))
    code = main(["run", "examples/seed_tiles_int.s", *REGS, "--backend", "amaranth"])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    assert "amaranth (W=32): MISMATCH" in out
    assert "after line 10 (TADD T#2.reuse, T#3, ->U): register U#1, row " in out
    assert ", byte 1: expected " in out
    assert "reproduce: " in out
    vcd = tmp_path / "run-mismatch-amaranth.vcd"
    assert f"  waveform: {vcd}  (gtkwave {vcd} " in out
    assert "$enddefinitions" in vcd.read_text()


@pytest.mark.parametrize("args,needle", [
    (["--backend", "amaranth", "--arith", "full"], "--arith full: the RTL tile system has "
                                                   "integer arithmetic only"),
    (["--backend", "icarus", "--lcfr", "256:65536"], "--lcfr 256:65536: the RTL keeps 64 "
                                                     "registers of MAX bytes each"),
    (["--vcd", "x.vcd"], "--vcd needs an HDL backend"),
    (["--backend", "verilator", "--vcd", "x.vcd"], "--vcd is for --backend amaranth"),
    (["--backend", "amaranth", "--width", "48"], "--width"),
])
def test_run_usage_errors_are_one_line_exit_2(args, needle):
    r = run("run", "examples/seed_tiles_int.s", *REGS, *args)
    assert r.returncode == 2, r.stdout[-1000:]
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_unset_register_names_the_line():
    r = run("run", "examples/seed_tiles_int.s", "--reg", "a0=0", "--backend", "amaranth")
    assert r.returncode == 2
    assert "PROGRAM line 8: register a1 has no value" in r.stderr
