"""``tilecosim examples`` and the ``example:NAME`` name: the examples ship inside the package,
list, copy out without overwriting, and run by name from any folder."""

import json
from pathlib import Path

from .test_cli import REGS, run

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.relative_to(ROOT / "examples").as_posix()
                 for p in (ROOT / "examples").rglob("*")
                 if p.is_file() and p.suffix in (".s", ".sv", ".v", ".toml"))


def test_the_list_names_every_example_of_the_repository():
    r = run("examples", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    assert sorted(e["name"] for e in got["examples"]) == SHIPPED
    kernel = next(e for e in got["examples"] if e["name"] == "kernel.s")
    assert kernel["example"] == "example:kernel.s"
    assert kernel["summary"] == ("A whole kernel: load A and B, add them, store the sum, and "
                                 "load the stored sum back.")
    text = run("examples").stdout
    assert [line for line in text.splitlines() if line and line[0] != " "][:-1] == [
        e["name"] for e in got["examples"]]                     # a name, then its sentence


def test_out_copies_them_byte_for_byte_and_never_overwrites_a_different_file(tmp_path):
    out = tmp_path / "mine"
    r = run("examples", "--out", str(out))
    assert r.returncode == 0, r.stderr
    for name in SHIPPED:
        assert (out / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
    assert run("examples", "--out", str(out)).returncode == 0       # the same files: fine
    (out / "kernel.s").write_text("; my own kernel\n")
    (out / "ring.s").unlink()
    r = run("examples", "--out", str(out))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (f"tilecosim examples: error: --out {str(out)!r}: kernel.s is "
                                f"there and differs from the example: nothing copied (choose "
                                f"another folder)")
    assert (out / "kernel.s").read_text() == "; my own kernel\n"
    assert not (out / "ring.s").exists()                            # nothing written


def test_an_example_runs_by_name_from_any_folder(tmp_path):
    """``run example:seed_tiles.s`` in an empty folder gives what the repository's file
    gives; an unknown name is a one-line usage error that lists the names."""
    by_name = run("run", "example:seed_tiles.s", "--reg", "a0=0", "--reg", "a1=512", "--reg",
                  "a2=1024", "--json")
    by_path = run("run", str(ROOT / "examples" / "seed_tiles.s"), "--reg", "a0=0", "--reg",
                  "a1=512", "--reg", "a2=1024", "--json")
    assert by_name.returncode == by_path.returncode == 0, by_name.stderr
    assert by_name.stdout == by_path.stdout
    r = run("run", "example:nope.s", *REGS)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "PROGRAM 'example:nope.s': no such example (kernel.s, " in r.stderr


def test_a_design_example_runs_by_name_with_dut():
    r = run("load-align", "--dist", "DIST_BRC_B16", "--dtype", "b8", "--addr", "64",
            "--backend", "icarus", "--dut", "example:designs/load_align_unit_bug.sv",
            "--no-waves", "--json")
    got = json.loads(r.stdout.splitlines()[-1])
    assert r.returncode == 1 and got["match"] is False          # the one-line bug, found
    r = run("load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0", "--backend",
            "icarus", "--dut", "example:designs/nope.sv")
    assert r.returncode == 2 and "--dut 'example:designs/nope.sv': no such example" in r.stderr
