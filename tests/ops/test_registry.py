"""The registry of operations: every flow finds an operation through it alone."""

import random

import pytest

from tilecosim import ops
from tilecosim.flows import coverage


def test_the_registry_holds_the_operations_once_each():
    assert ops.names() == ["tload", "load-data-with-transpose", "load-align", "store-align",
                           "program"]
    assert [op.seed_name for op in ops.REGISTRY] == ["TLOAD", "LoadDataWithTranspose",
                                                     "LoadAlign", "StoreAlign", "tile system"]
    assert ops.regress_default_names() == ["tload", "load-data-with-transpose", "load-align"]
    tops = [t.name for t in ops.tops()]
    assert len(tops) == len(set(tops))
    with pytest.raises(KeyError, match="'bogus' is not an operation"):
        ops.get("bogus")


def test_tops_are_the_verilog_listing():
    assert [t.name for t in ops.tops()] == ["tload_engine", "tload_engine_w64",
                                            "tload_engine_w128",
                                            "square_transpose", "l1l0_engine",
                                            "l1l0_engine_w64", "l1l0_engine_w128",
                                            "load_align_unit", "store_align_unit",
                                            "tile_system"]


def test_coverage_counts_are_those_of_the_report():
    """149 TLOAD, 76 LoadDataWithTranspose and 115 LoadAlign bins (340 in all), and 30 of
    the programs of the tile system."""
    assert coverage.OPS == ("tload", "load-data-with-transpose", "load-align", "program")
    assert [len(coverage.all_bins(op)) for op in coverage.OPS] == [149, 76, 115, 30]
    for op in coverage.OPS:
        bins = coverage.all_bins(op)
        assert len(bins) == len(set(bins))


@pytest.mark.parametrize("name", ops.regress_names())
def test_every_drawn_scenario_names_only_bins_of_its_operation(name):
    op = ops.get(name)
    bins = set(op.bins())
    rng = random.Random(1)
    for hint in [None] + op.bins()[::7]:
        item, fault, hit = op.draw(rng, hint)
        assert set(hit) <= bins
        assert (fault is None) == (not any(".fault:" in b for b in hit))


@pytest.mark.parametrize("name", ops.regress_names())
def test_a_batch_runs_clean_and_its_repro_line_names_the_subcommand(name, tmp_path):
    op = ops.get(name)
    rng = random.Random(2)
    items = [op.draw(rng, None)[0] for _ in range(3)]
    if op.batch_key(items[0]) is not None:
        items = [i for i in items if op.batch_key(i) == op.batch_key(items[0])]
    got = op.run(items, "amaranth", op.image(5), 3, 0.0)
    assert got.problems == {} and got.waveform is None
    line = op.repro(items[0], "amaranth", 5, tmp_path / "img.bin", 0.0, 3)
    sub = "run - " if name == "program" else f"{name} "
    assert f"tilecosim {sub}" in line and line.startswith(("tilecosim ", "printf "))


@pytest.mark.parametrize("name", [n for n in ops.names() if n != "program"])
def test_every_operation_has_a_batch_harness_equal_to_its_python_bench(name):
    """The fixed scenario set of each engine through its batch harness (with the build
    regress uses) on Amaranth's simulator: the golden model's results (cross_check asserts
    them) and the same cycle for every event as the Python-driven bench.  (Programs of the
    tile system have no harness inside the design: their checks after every instruction
    read the register file through the debug port from the bench.)"""
    op = ops.get(name)
    assert op.harness_batch > 0
    assert op.cross_check("amaranth", harness=True) == op.cross_check("amaranth")


def test_an_operation_refuses_a_width_its_engine_is_not_built_at():
    """at_width: a width outside ``widths`` is a ValueError naming the operation; an
    operation without a beat width (LoadAlign) runs as it is at every W."""
    class Narrow(ops.Operation):
        name = "narrow"
        widths = (32,)
    with pytest.raises(ValueError, match="--width 64: narrow runs at W = 32 only"):
        Narrow().at_width(64)
    assert Narrow().at_width(32).width == 32
    la = ops.get("load-align")
    assert la.at_width(128) is la
    assert ops.get("load-data-with-transpose").at_width(128).width == 128
