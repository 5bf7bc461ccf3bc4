"""The HDL backends of `tilecosim tload`, `load-data-with-transpose` and `load-align`, and
`tilecosim verilog [--lint]`, through a subprocess."""

import json

import pytest

from cocotb_tests.simulators import need
from tests.tiers import SLOW, slow
from tilecosim.flows.verilog import lint
from tilecosim.ops import tops

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


def test_waveform_options_go_with_their_backend(tmp_path):
    ub = tmp_path / "ub.bin"
    ub.write_bytes(bytes(1024))
    r = run("load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--ub", str(ub), "--addr", "0",
            "--backend", "verilator", "--vcd", "x.vcd")
    assert r.returncode == 2 and "--vcd is for --backend amaranth" in r.stderr
    r = run("tload", SEED_1, *REGS, "--vcd", "x.vcd")
    assert r.returncode == 2 and "--vcd needs an HDL backend" in r.stderr
    assert not (tmp_path / "x.vcd").exists()


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


@pytest.mark.parametrize("sim", ["icarus", slow("verilator")])   # Verilator: test_sims.py
def test_tload_on_the_verilog_simulators(sim):
    """Same tiles as the model and the same cycle count as Amaranth's simulator."""
    need(sim)
    args = ["tload", "TLOAD.DN2NZ <LB0:30, LB1:20, LB2:32, BF16, Max>, [a0], ->T<1KB>, U<1KB>",
            "--reg", "a0=0", "--stall", "0.2", "--seed", "3", "--json"]
    r = run(*args, "--backend", sim)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    ref = json.loads(run(*args, "--backend", "amaranth").stdout.splitlines()[-1])
    assert got["match"] is True and got["backend"] == sim
    assert got["cycles"] == ref["cycles"] and got["ideal_cycles"] == ref["ideal_cycles"]


FST_MAGIC = bytes(7) + b"\x01"        # an FST file opens with its header block (type 0, length 329)


def test_icarus_writes_vcd_or_fst_as_the_file_is_named(tmp_path):
    """VCD by default on Icarus (regress's mismatch waveforms are .vcd), FST when asked."""
    args = ["store-align", "--dist", "DIST_NORM_B8", "--dtype", "b8", "--addr", "0",
            "--backend", "icarus", "--waves"]
    vcd, fst = tmp_path / "a.vcd", tmp_path / "b.fst"
    for path in (vcd, fst):
        r = run(*args, str(path))
        assert r.returncode == 0 and f"waveform: {path}" in r.stdout, r.stderr
    text = vcd.read_text()
    assert text.startswith("$date") and "$scope module store_align_unit $end" in text
    assert "$enddefinitions $end" in text and "\n#1" in text        # time advanced
    assert fst.read_bytes()[:8] == FST_MAGIC


@pytest.mark.parametrize("sim", ["icarus", slow("verilator")])
def test_load_data_with_transpose_and_load_align_on_the_verilog_simulators(sim, tmp_path):
    """Same JSON as amaranth (cycles included); --waves writes an FST file.  (Verilator in
    the slow tier: its two builds take a minute; cocotb_tests/test_sims.py runs both
    operations on it in make test.)"""
    need(sim)
    src = tmp_path / "l1.bin"
    src.write_bytes(bytes(range(256)) * 64)
    args = ["load-data-with-transpose", "--dtype", "half", "--repeat-times", "2", "--src-stride",
            "1", "--dst-gap", "1", "--src", str(src), "--dst-bytes", "8192", "--stall", "0.2",
            "--json"]
    fst = tmp_path / "ldt.fst"
    r = run(*args, "--backend", sim, "--waves", str(fst))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    ref = json.loads(run(*args, "--backend", "amaranth").stdout.splitlines()[-1])
    assert got["match"] is True and got["backend"] == sim
    assert {k: got[k] for k in ("cycles", "ideal_cycles", "placements", "hdl_fault")} == \
        {k: ref[k] for k in ("cycles", "ideal_cycles", "placements", "hdl_fault")}
    assert fst.read_bytes()[:8] == FST_MAGIC
    ub = tmp_path / "ub.bin"
    ub.write_bytes(bytes(range(256)) * 16)
    for extra, code in ((["--addr", "64", "--post-update", "16"], 0), (["--addr", "4000"], 3)):
        args = ["load-align", "--dist", "DIST_DINTLV_B16", "--dtype", "b16", "--ub", str(ub),
                *extra, "--json"]
        r = run(*args, "--backend", sim)
        assert r.returncode == code, r.stdout[-2000:] + r.stderr
        got = json.loads(r.stdout.splitlines()[-1])
        ref = json.loads(run(*args, "--backend", "amaranth").stdout.splitlines()[-1])
        assert got["match"] is True and got.pop("backend") == sim and ref.pop("backend")
        assert got == ref


@SLOW
def test_verilog_writes_the_tops_and_they_lint_clean_with_the_waivers(tmp_path):
    """One run of ``verilog --lint`` (the Verilog of every top is slow to write): each top's
    module, its ports from the signatures, no source attributes, and a clean lint each.
    (Slow tier: make lint runs the same.)"""
    need("verilator")
    r = run("verilog", "--lint", "--out", str(tmp_path))
    assert r.returncode == 0, r.stdout
    assert r.stdout.count("lint: clean") == len(tops())
    text = (tmp_path / "tload_engine.v").read_text()
    assert text.count("module tload_engine(") == 1
    for port in ("instr__payload", "instr__valid", "instr__ready", "req__payload", "resp__payload",
                 "write__payload", "done__payload", "mem_size", "clk", "rst"):
        assert port in text
    assert "src =" not in text                                  # emit_src=False
    for stem in ("tload_engine_w64", "tload_engine_w128", "square_transpose", "load_align_unit",
                 "store_align_unit", "l1l0_engine", "l1l0_engine_w64", "l1l0_engine_w128",
                 "tstore_engine", "tstore_engine_w64", "tstore_engine_w128", "tile_system"):
        assert (tmp_path / f"{stem}.v").read_text().count(f"module {stem}(") == 1
    assert len(tops()) == 13                    # the stems above and tload_engine


def test_lint_reports_what_the_waivers_do_not_cover(tmp_path):
    """A combinational loop and a latch are not waived."""
    need("verilator")
    bad = tmp_path / "bad.v"
    bad.write_text("""module bad(input clk, input a, input en, output reg q, output y, output z);
  wire loop;
  assign loop = ~loop & a;
  assign y = loop;
  always @* if (en) q = a;
  assign z = a;
endmodule
""")
    found = " ".join(lint(bad, "bad"))
    assert "%Warning-LATCH" in found and "%Warning-UNOPTFLAT" in found


def _vcd_names(path):
    """Full dotted names of the variables of a VCD file."""
    scope, names = [], set()
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("$enddefinitions")[0].splitlines()
    for line in lines:
        parts = line.split()
        if parts[:1] == ["$scope"]:
            scope.append(parts[2])
        elif parts[:1] == ["$upscope"]:
            scope.pop()
        elif parts[:1] == ["$var"]:
            names.add(".".join(scope + [parts[4].lstrip("\\\\")]))
    return names


@pytest.mark.parametrize("cmd,top", [
    (["tload", SEED_1, *REGS], "tload_engine"),
    (["load-align", "--dist", "DIST_NORM", "--dtype", "b8", "--addr", "0"], "load_align_unit"),
    (["load-data-with-transpose", "--dtype", "half", "--repeat-times", "1", "--dst-bytes",
      "4096"], "l1l0_engine"),
])
def test_gtkwave_save_file_names_signals_of_the_waveform(cmd, top, tmp_path):
    img = tmp_path / "img.bin"
    img.write_bytes(bytes(range(256)) * 16)
    extra = {"load-align": ["--ub", str(img)], "load-data-with-transpose": ["--src", str(img)]}
    vcd = tmp_path / "w.vcd"
    r = run(*cmd, *extra.get(cmd[0], []), "--backend", "amaranth", "--vcd", str(vcd))
    assert r.returncode == 0, r.stderr
    gtkw = tmp_path / "w.vcd.gtkw"
    assert f"gtkwave {vcd} {gtkw}" in r.stdout
    signals = [ln for ln in gtkw.read_text().splitlines() if ln and ln[0] not in "@-["]
    names = _vcd_names(vcd)
    assert signals and all(s in names for s in signals), set(signals) - names
    groups = [ln[1:] for ln in gtkw.read_text().splitlines() if ln.startswith("-")]
    assert len(groups) >= 6                      # each stream opens and closes a group
