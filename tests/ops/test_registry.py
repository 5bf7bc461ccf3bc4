"""The registry of operations: every flow finds an operation through it alone."""

import random
import re

import pytest

from tilecosim import ops
from tilecosim.flows import coverage


def test_the_registry_holds_the_operations_once_each():
    assert ops.names() == ["tload", "load-data-with-transpose", "load-align", "store-align",
                           "program"]
    assert [op.seed_name for op in ops.REGISTRY] == ["TLOAD", "LoadDataWithTranspose",
                                                     "LoadAlign", "StoreAlign", "tile system"]
    assert ops.regress_default_names() == ["tload", "load-data-with-transpose", "load-align",
                                           "store-align"]
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
                                            "tstore_engine", "tstore_engine_w64",
                                            "tstore_engine_w128", "tile_system"]


def test_coverage_counts_are_those_of_the_report():
    """164 TLOAD (15 of them edges), 106 LoadDataWithTranspose (30 edges), 125 LoadAlign
    (10 edges) and 104 StoreAlign (10 edges) bins (499 in all), and 48 of the programs of
    the tile system."""
    assert coverage.OPS == ("tload", "load-data-with-transpose", "load-align", "store-align",
                            "program")
    assert [len(coverage.all_bins(op)) for op in coverage.OPS] == [164, 106, 125, 104, 48]
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


@pytest.mark.parametrize("kind,message", [
    ("full", r"->(\w)=1: queue \1 is full, all 16 registers live: \1#16 \(allocated at line "
             r"\d+\) is still live"),
    ("ring", r"->(\w)=\d: (?!queue)\1#1[0-6] \(allocated at line \d+\) is still live")])
def test_programs_reach_both_allocation_faults(kind, message):
    """Queue pressure reaches both faults of the ring rule (D7): a full queue, and a live
    Q#16 (or, for several outputs, Q#17-n..Q#16) with free slots -- each program aimed at
    the bin ends in that fault, whose message says which (the golden Machine's, written
    here from D7's wording)."""
    op = ops.get("program")
    rng = random.Random(4)
    for _ in range(10):
        item, fault, bins = op.draw(rng, f"program.fault:TileAllocation/{kind}")
        assert f"program.fault:TileAllocation/{kind}" in bins, item.lines[-3:]
        assert fault.name == "TileAllocation" and re.match(message, fault.message), fault


def test_random_programs_keep_within_the_ring_rule():
    """Programs not aimed at a fault allocate into queues with room and release the register
    in the way (D7), so that they run long: of 200, more than 30 take a queue past 16
    allocations, and fewer than 30 end in TileAllocation (those whose blocking registers
    are of a floating-point type, which no integer TSUB can release).  Drawn blind to the
    rule, the same 200 gave 17 and 46."""
    from tilecosim.model.scenarios import random_program
    from tilecosim.ops.program import ProgramItem, program_bins
    rng = random.Random(6)
    blocked = wraps = 0
    for _ in range(200):
        lines, regs = random_program(rng)
        fault, bins = program_bins(ProgramItem(tuple(lines), tuple(sorted(regs.items()))))
        blocked += fault is not None and fault.name == "TileAllocation"
        wraps += "program.queue:wrap" in bins
    assert blocked < 30 and wraps > 30, (blocked, wraps)


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


class _Toy(ops.Operation):
    """A small operation of the test's own: a transpose unit, declared once."""
    name = "toy"
    seed_name = "Toy"
    tops = (ops.Top("toy_top", lambda profile="finite": _square(8), "the toy's top"),)
    tests = ("tests/hdl/test_toy.py",)
    units = (ops.Unit("SquareTranspose", "transpose.py", ("tests/hdl/test_toy_unit.py",),
                      area=(("toy transpose (8 rows of 64 bits)", {"max_rows": 8,
                                                                   "line_bits": 64}),),
                      proof="toy", proof_args={"max_rows": 8, "line_bits": 64}, quick=True),)


def _square(rows):
    from tilecosim.hdl.transpose import SquareTranspose
    return SquareTranspose(max_rows=rows, line_bits=64)


def test_an_operation_declared_once_appears_in_every_flow(monkeypatch):
    """Registered, the toy has its Verilog, its area row, its stream-contract proof and its
    tests first for a mutant of its unit's file -- no flow names it."""
    from tilecosim.flows import formal, mutation, verilog
    from tilecosim.perf import bench
    monkeypatch.setattr(ops, "REGISTRY", ops.REGISTRY + [_Toy()])
    assert ops.get("toy").name == "toy"
    assert "toy_top" in [t.name for t in ops.tops()]
    text = verilog.convert("toy_top")
    assert "module toy_top" in text
    assert bench.area_rows()["toy transpose (8 rows of 64 bits)"][1] == {"max_rows": 8,
                                                                        "line_bits": 64}
    proof = next(p for p in formal.all_proofs() if p.name == "streams-toy")
    assert proof.unit == "SquareTranspose(max_rows=8, line_bits=64)" and proof.quick
    assert [p.name for p in formal.select(["streams-toy"])] == ["streams-toy"]
    from amaranth import ClockSignal, ResetSignal
    from amaranth.back import rtlil
    harness = proof.build()          # converted as the flow does, so nothing is left unused
    text = rtlil.convert(harness.m, ports=[ClockSignal(), ResetSignal()])
    assert "cell $check" in text and "cell $anyseq" in text   # properties, free inputs
    first = mutation.tests_of("transpose.py")
    assert first[:1] == ["tests/hdl/test_transpose.py"]
    assert {"tests/hdl/test_toy_unit.py", "tests/hdl/test_toy.py"} <= set(first)
