"""What regress promises a design from elsewhere (D17): a buffer bound off by one is caught
at the default count on any seed, and the edges are drawn first.

The bound is planted in each operation's own Verilog, as ``tilecosim verilog`` writes it:
the one comparison of an access's end with the buffer's size is moved by one, in the
direction a designer gets wrong (``>=`` for ``>``, or ``>`` for ``>=``).  The bug then
meets ``regress --dut`` alone, as a design from elsewhere does."""

import json
import re

import pytest

from tilecosim import ops
from tilecosim.flows import regress
from tilecosim.flows.coverage import OPS

from ..tiers import SLOW
from .test_cli import run

#: op -> (its top, the comparison as the generated Verilog writes it, the same off by one)
PLANTS = {
    "tload-mem": ("tload", "tload_engine", r"(\[95:0\]) >= mem_size;", r"\1 > mem_size;"),
    "ldt-l1": ("load-data-with-transpose", "l1l0_engine",
               r"\) > \$signed\(\{ 1'h0, l1_size \}\);", ") >= $signed({ 1'h0, l1_size });"),
    "ldt-l0": ("load-data-with-transpose", "l1l0_engine",
               r"\) > \$signed\(\{ 1'h0, l0_size \}\);", ") >= $signed({ 1'h0, l0_size });"),
    "la-ub": ("load-align", "load_align_unit",
              r"\) > \$signed\(\{ 1'h0, ub_size \}\);", ") >= $signed({ 1'h0, ub_size });"),
    "sa-ub": ("store-align", "store_align_unit",
              r"\) > \$signed\(\{ 1'h0, ub_size \}\);", ") >= $signed({ 1'h0, ub_size });"),
}


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("op", OPS)
def test_every_edge_is_drawn_first_at_any_seed(op, seed):
    """The edge bins are drawn first: the first scenarios of every run, as many as there
    are edges, hit every one."""
    edges = ops.get(op).edges()
    hit = {b for s in regress.draw_scenarios(op, len(edges), seed) for b in s.bins}
    assert [e for e in edges if e not in hit] == []


@pytest.fixture(scope="module")
def verilog(tmp_path_factory):
    out = tmp_path_factory.mktemp("verilog")
    r = run("verilog", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


@SLOW
@pytest.mark.parametrize("plant,seed", [(p, 11 + k) for k, p in enumerate(PLANTS)])
def test_a_bound_off_by_one_is_caught_at_the_default_count(tmp_path, verilog, plant, seed):
    """(The unplanted Verilog passes the same regress: test_dut.py's
    test_the_projects_own_engines_passed_back_give_the_built_in_report.)"""
    op, top, old, new = PLANTS[plant]
    text = (verilog / f"{top}.v").read_text()
    planted, n = re.subn(old, new, text)
    assert n == 1, f"the comparison occurs {n} times in {top}.v: update the plant"
    dut = tmp_path / f"{top}.v"
    dut.write_text(planted)
    r = run("regress", "--ops", op, "--backend", "verilator", "--seed", str(seed), "--jobs",
            "2", "--no-waves", "--out", str(tmp_path / "out"), "--json", "--dut", str(dut))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["mismatches"] >= 1
    # caught among the edges, which are drawn first
    edges = len(ops.get(op).edges())
    assert min(f["index"] for f in got["failures"]) < edges, got["failures"][:3]
