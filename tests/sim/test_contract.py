"""The port contracts (D16): derived from the engines' signatures, written as docs/contract.md
and as module skeletons that lint and compile, and checked against a design's ports.

Independent sources: a payload field's bits are checked against Amaranth's own packing of
the layout (``layout.const``); a skeleton's ports are read back by Verilator, and it is
compiled by Icarus and linted by Verilator -Wall."""

import random
import subprocess
from pathlib import Path

import pytest

from tilecosim import ops
from tilecosim.flows.contract import contract_ops, page
from tilecosim.flows.verilog import convert
from tilecosim.sim.contract import LANGS, skeleton
from tilecosim.sim.design import DesignError, check, read_ports, verilog_design
from tilecosim.sim.ports import probe
from tilecosim.sim.toolchain import verilator_env

from ..tiers import tiered

ROOT = Path(__file__).resolve().parents[2]

CASES = [(op.name, w) for op in contract_ops() for w in (op.widths or (None,))]


def _op(name, width):
    op = ops.get(name)
    return op.at_width(width) if width else op


def test_the_docs_page_is_the_contract():
    """docs/contract.md is what the contracts say today (rewrite it with
    ``tilecosim contract --doc > docs/contract.md``)."""
    assert (ROOT / "docs" / "contract.md").read_text() == page()


@pytest.mark.parametrize("name", [op.name for op in contract_ops()])
def test_every_fault_rule_on_the_page_is_the_models(name):
    """Each row of an operation's fault table names the edges regress draws on its sides:
    drawn through the golden model, a faulting edge faults with the row's code and a legal
    one does not fault; every faulting edge belongs to a row, so that no boundary regress
    draws is missing from the page."""
    op = ops.get(name)
    assert op.fault_rules
    edges = op.edges()
    named = set()
    for row in op.fault_rules:
        for edge in row.edges:
            assert edge in edges, f"{row.fault} ({row.when}): no edge {edge}"
            named.add(edge)
            rng = random.Random(edge)
            for _ in range(200):                 # as regress aims at a bin
                item, fault, bins = op.draw(rng, edge)
                if edge in bins:
                    break
            assert edge in bins, edge
            if ".fault:" in edge:
                assert type(fault).__name__ == row.fault, (edge, row.when, fault)
            else:
                assert fault is None, (edge, fault)
    assert [e for e in edges if ".fault:" in e and e not in named] == []


def _draw(rng, f):
    """A random legal value of field ``f``, one per element of an array."""
    def one(bits):
        if f.values:
            return rng.choice(f.values)[1]
        if f.kind == "signed":
            return rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))
        return rng.getrandbits(bits)
    if f.count > 1:
        return [one(f.element_width) for _ in range(f.count)]
    return one(f.width)


def _nest(flat: dict) -> dict:
    out = {}
    for name, v in flat.items():
        *outer, last = name.split(".")
        d = out
        for part in outer:
            d = d.setdefault(part, {})
        d[last] = v
    return out


@pytest.mark.parametrize("name,width", CASES)
def test_field_bits_are_amaranths_packing(name, width):
    """Amaranth's packing of the engine's payload layout (``layout.const``) of random
    field values puts each value at the contract's offset and width."""
    op = _op(name, width)
    contract = op.contract()
    members = probe(op.reference).signature.members
    rng = random.Random(name)
    checked = 0
    for port in contract.ports:
        if port.role != "payload" or not port.fields:
            continue
        layout = members[port.stream].signature.members["payload"].shape
        for _ in range(5):
            values = {f.name: _draw(rng, f) for f in port.fields}
            raw = layout.const(_nest(values)).as_value().value
            for f in port.fields:
                got = (raw >> f.offset) & ((1 << f.width) - 1)
                v = values[f.name]
                parts = v if isinstance(v, list) else [v]
                want = sum((x & ((1 << f.element_width) - 1)) << (k * f.element_width)
                           for k, x in enumerate(parts))
                assert got == want, (port.name, f.name)
                checked += 1
        assert sum(f.width for f in port.fields) <= port.width
    assert checked


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name,width", tiered(CASES, lambda name, width: width not in (None, 32)))
def test_skeletons_lint_compile_and_have_the_contracts_ports(name, width, lang, tmp_path):
    op = _op(name, width)
    contract = op.contract()
    path = tmp_path / f"{contract.module}.{'sv' if lang == 'systemverilog' else 'v'}"
    path.write_text(skeleton(contract, lang))
    lint = subprocess.run(["verilator", "--lint-only", "-Wall", path.name], cwd=tmp_path,
                          capture_output=True, text=True, env=verilator_env())
    assert lint.returncode == 0, lint.stderr
    icarus = subprocess.run(["iverilog", "-g2012", "-o", "/dev/null", path.name],
                            cwd=tmp_path, capture_output=True, text=True)
    assert icarus.returncode == 0, icarus.stderr
    found = read_ports(verilog_design(str(path)))
    assert {p.name: (p.direction, p.width) for p in contract.ports} == found
    check(verilog_design(str(path)), contract)


def _without(text: str, port: str) -> str:
    """``text`` (a Verilog skeleton) without the port ``port`` (its declaration and its
    tie-off)."""
    lines = text.splitlines()
    out = [ln for ln in lines if not ln.strip().endswith(f" {port},")
           and not ln.strip().startswith(f"assign {port} ")]
    return "\n".join(out) + "\n"


def test_a_design_with_other_ports_is_refused_with_each_difference(tmp_path):
    op = ops.get("load-align")
    contract = op.contract()
    text = skeleton(contract, "verilog")
    text = _without(text, "ub_en")                                       # missing
    text = text.replace("output wire [31:0] ub_addr,", "output wire [15:0] ub_addr,")
    text = text.replace("    input  wire clk,", "    input  wire clk,\n    input  wire go,")
    text = text.replace("assign ub_addr = 32'd0;", "assign ub_addr = 16'd0;")
    path = tmp_path / "load_align_unit.v"
    path.write_text(text)
    with pytest.raises(DesignError) as e:
        check(verilog_design(str(path)), contract)
    msg = str(e.value)
    assert "\n" not in msg
    assert "missing output ub_en [1]" in msg
    assert "ub_addr is 16 bits wide, the contract's is 32" in msg
    assert "extra input go [1]" in msg


def test_a_design_that_does_not_elaborate_is_refused_in_one_line(tmp_path):
    path = tmp_path / "load_align_unit.v"
    path.write_text("module load_align_unit(input wire clk);\n  wire x = y +;\nendmodule\n")
    with pytest.raises(DesignError, match=r"Verilator cannot read module load_align_unit"):
        check(verilog_design(str(path)), ops.get("load-align").contract())


@pytest.mark.parametrize("name,width", tiered(CASES, lambda name, width: width not in (None, 32)))
def test_the_project_s_own_verilog_has_the_contract_s_ports(tmp_path, name, width):
    """The Verilog ``tilecosim verilog`` writes of each engine is a design of the contract
    (at W = 64 and 128 it names the module ``<engine>_w64``; the engine is converted under
    the contract's module name)."""
    from amaranth.back import verilog
    op = _op(name, width)
    path = tmp_path / f"{op.contract_module}.v"
    if any(t.name == op.contract_module for t in ops.tops()) and width in (None, 32):
        path.write_text(convert(op.contract_module))
    else:
        path.write_text(verilog.convert(op.reference(), name=op.contract_module,
                                        emit_src=False))
    check(verilog_design(str(path)), op.contract())
