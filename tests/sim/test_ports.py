"""Port lists derived from a design's signature, held against the ports Amaranth's Verilog
back end actually declares for the same design."""

import re

import pytest

from tilecosim import ops
from tilecosim.flows.verilog import convert
from tilecosim.sim import ports

from ..tiers import tiered


def verilog_ports(name):
    """The ports of the top ``name`` in the Verilog ``tilecosim verilog`` writes of it
    (Amaranth's back end, kept in the build cache)."""
    text = convert(name)
    head = text[text.index(f"module {name}("):]
    head = head[:head.index("endmodule")]
    found = {}
    for kind, names in re.findall(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[[^\]]+\]\s*)?"
                                  r"([\\\w$ ,]+);", head, flags=re.M):
        for n in names.split(","):
            found[n.strip().lstrip("\\")] = kind
    found.pop("clk", None)
    found.pop("rst", None)
    return found


@pytest.mark.parametrize("top", tiered([t.name for t in ops.tops()],
                                      lambda name: name.endswith(("_w64", "_w128"))))
def test_inputs_and_outputs_are_the_verilog_ports(top):
    make = ops.top(top).make
    got = {p.name: "input" if p.is_input else "output" for p in ports.ports(ports.probe(make))}
    assert got == verilog_ports(top)
    assert set(ports.inputs(ports.probe(make))) == {n for n, k in got.items() if k == "input"}


def test_wave_groups_cover_every_port_once():
    eng = ports.probe(ops.top("tload_engine").make)
    groups = ports.wave_groups(eng)
    assert [g for g, _ in groups] == ["instr", "req", "resp", "write", "done", "ports"]
    names = [n for _, ns in groups for n in ns]
    assert sorted(names) == sorted(p.name for p in ports.ports(eng))
    assert dict(groups)["req"] == ["req__payload", "req__valid", "req__ready"]
