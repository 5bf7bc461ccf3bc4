"""The generated mutants: which sites they take, that each applies as one text edit, and
that the same seed draws the same ones."""

import ast
import shutil
import textwrap

import pytest

from tilecosim.flows import mutagen
from tilecosim.flows.mutation import ROOT, select

UNIT = textwrap.dedent('''\
    """A unit -- with a non-ASCII docstring: × ‖ ."""
    from amaranth import Module, Mux, Signal, signed


    class Unit:
        def __init__(self, width):
            if width < 2:                   # a parameter check: not hardware
                raise ValueError(width)

        def elaborate(self, platform):
            """Not code: a < b."""
            m = Module()
            x = Signal(4, name="x")
            y = Signal(signed(40))
            with m.If((x < 3) & x[1:3].any()):
                m.d.sync += x.eq(Mux(x[0], x + 1, 5))
            return m
    ''')


def _sites(tmp_path):
    (tmp_path / "hdl").mkdir()
    (tmp_path / "hdl" / "unit.py").write_text(UNIT)
    return tmp_path / "hdl", mutagen.candidates(tmp_path / "hdl")


def test_the_sites_of_a_small_unit(tmp_path):
    _, sites = _sites(tmp_path)
    got = sorted((s.kind, s.old, s.new) for s in sites)
    assert got == sorted([
        ("if", "(x < 3) & x[1:3].any()", "1"),
        ("arith", "(x < 3) & x[1:3].any()", "(x < 3) | x[1:3].any()"),
        ("cmp", "x < 3", "x <= 3"),
        ("const+1", "3", "4"), ("const-1", "3", "2"),
        ("slice-lo+1", "1", "(1) + 1"), ("slice-hi+1", "3", "(3) + 1"),
        ("const+1", "1", "2"), ("const-1", "1", "0"),           # x[1:3]
        ("const+1", "3", "4"), ("const-1", "3", "2"),
        ("mux", "Mux(x[0], x + 1, 5)", "Mux(x[0], 5, x + 1)"),
        ("const+1", "0", "1"),                                  # x[0]
        ("arith", "x + 1", "x - 1"), ("const+1", "1", "2"), ("const-1", "1", "0"),
        ("const+1", "5", "6"), ("const-1", "5", "4"),
    ])           # not: Signal(4), signed(40) (widths), name="x", the docstring, __init__'s check


def test_each_site_applies_as_one_edit_and_parses(tmp_path):
    hdl, sites = _sites(tmp_path)
    for s in sites:
        shutil.copy(hdl / "unit.py", hdl / "orig.py")
        mutagen.apply_site(s, hdl)
        text = (hdl / "unit.py").read_text()
        ast.parse(text)
        raw = UNIT.encode()                   # columns are UTF-8 byte offsets
        assert raw[s.start:s.start + len(s.old.encode())] == s.old.encode()
        assert text.encode() == raw[:s.start] + s.new.encode() + raw[s.start + len(s.old.encode()):]
        (hdl / "orig.py").replace(hdl / "unit.py")


def test_a_changed_source_is_refused(tmp_path):
    hdl, sites = _sites(tmp_path)
    (hdl / "unit.py").write_text(UNIT.replace("x < 3", "x <  3"))
    with pytest.raises(RuntimeError, match="changed at line"):
        mutagen.apply_site([s for s in sites if s.kind == "cmp"][0], hdl)


def test_the_gateware_gives_every_kind_and_a_seed_draws_the_same_sample():
    sites = mutagen.candidates(ROOT / "hdl")
    assert {s.kind for s in sites} >= {"cmp", "arith", "const+1", "const-1", "if", "mux",
                                       "slice-hi+1"}
    a = [m.id for m in select(None, 60, 1, hand_written=False)]
    assert len(a) == len(set(a)) == 60
    assert a == [m.id for m in select(None, 60, 1, hand_written=False)]
    assert a != [m.id for m in select(None, 60, 2, hand_written=False)]
    assert len(select(None, 60, 1)) == 60 + len(select(None))


def test_every_mutant_argued_equivalent_is_a_site_of_the_gateware():
    """An equivalence is argued for a site by its position: once the gateware moves, a stale
    id would let that mutant be drawn again and counted as surviving."""
    ids = {s.id for s in mutagen.candidates(ROOT / "hdl")}
    assert [k for k in mutagen.EQUIVALENT if k not in ids] == []
