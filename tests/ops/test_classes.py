"""Cycles per class of scenario and the fill bound (D14) that ``regress`` reports them
against.  Expected values are worked by hand from D14's rule: a transposing layout waits
for the S = 32 / esize source rows of its first square, and a W-byte read brings
W / (row bytes) of them."""

import json

import pytest

from tilecosim.model.tload import TLoadLayout as L, TLoadParams
from tilecosim.ops.base import by_class
from tilecosim.ops.load_data_with_transpose import ldt_fill
from tilecosim.ops.tload import tload_fill

from ..cli.test_cli import run


def test_a_batch_is_split_between_its_classes_end_to_end():
    # accepted at 10; ends at 14, 20, 21: the first gets 14 - 9, then 6, then 1
    got = by_class(["A", "B", "A"], [10, 12, 15], [14, 20, 21], [4, 5, 1], [2, 0, 0])
    assert got == {"A": [5 + 1, 4 + 1, 2], "B": [6, 5, 0]}
    assert by_class(["A"], [10], [], [4]) == {}                # an end not seen: nothing


@pytest.mark.parametrize("layout,dtype,vr,vc,width,fill", [
    (L.ND2ZN, "FP16", 16, 64, 32, 16),   # S = 16 rows of 128 B: one read each
    (L.ND2ZN, "FP16", 16, 8, 32, 8),     # rows of 16 B: two in a 32-byte read
    (L.ND2ZN, "FP16", 16, 8, 128, 2),    # ... eight in a 128-byte read
    (L.DN2NZ, "S8", 16, 32, 32, 16),     # S = 32 columns of 16 B (ValidRow x 1)
    (L.ND2ZN, "FP32", 8, 8, 64, 4),      # S = 8 rows of 32 B, two a read
    (L.NORM, "FP16", 16, 64, 32, 0),     # no transpose (D14: ND2ZN and DN2NZ have one)
    (L.ND2NZ, "FP16", 16, 64, 32, 0),
    (L.DN2ZN, "FP16", 16, 64, 32, 0),
])
def test_a_tload_waits_for_the_rows_of_its_first_square(layout, dtype, vr, vc, width, fill):
    p = TLoadParams(layout=layout, dtype=dtype, valid_row=vr, valid_col=vc,
                    outputs=(("T", 4096),))
    assert tload_fill(p, width) == fill


@pytest.mark.parametrize("dtype,width,fill", [("int4b", 32, 64), ("int8", 32, 32),
                                              ("half", 64, 8), ("float", 128, 2)])
def test_an_l1l0_call_waits_for_the_rows_of_its_square(dtype, width, fill):
    assert ldt_fill(dtype, width) == fill


def test_regress_reports_every_class_against_its_fill_bound(tmp_path):
    # 45: past the 30 edges of LoadDataWithTranspose, most of them faults, drawn first
    r = run("regress", "--ops", "tload,load-data-with-transpose", "--count", "45", "--seed",
            "2", "--jobs", "2", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    fills = [v for row in got["ops"] for v in row["classes"].values() if v["fill_cycles"]]
    assert len(fills) >= 4                          # transposing layouts and L1 -> L0 types
    for row in got["ops"]:
        classes = row["classes"]
        # each scenario to its completion: the batch's cycles, or (TLOAD, whose batch ends
        # at its last write) a cycle more a batch
        assert 0 <= sum(v["cycles"] for v in classes.values()) - row["cycles"] \
            <= 0.01 * row["cycles"]
        assert sum(v["ideal_cycles"] for v in classes.values()) == row["ideal_cycles"]
        for name, v in classes.items():
            transposing = name in ("ND2ZN", "DN2NZ")
            if row["op"] == "tload":
                assert (v["fill_cycles"] > 0) == transposing, (name, v)
            elif name != "fault":
                assert v["fill_cycles"] > 0, (name, v)
            if v["fill_cycles"]:
                bound = (v["ideal_cycles"] + v["fill_cycles"]) / v["cycles"]
                assert v["of_fill_bound"] == pytest.approx(bound, abs=1e-4)
                assert f"{name} {v['cycles'] / v['ideal_cycles']:.2f} ({bound:.2f} of its " \
                       f"fill bound)" in r.stdout
