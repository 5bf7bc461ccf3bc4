"""`tilecosim bench`: its parts measure what they say, and the report shows them all.
(The whole run takes minutes: `make bench`.)"""

from tilecosim.perf import bench

from ..cli.test_cli import run


def test_golden_model_speed_part():
    g = bench._golden()
    assert g["tile_bytes"] == 65536 and g["ratio"] > 1 and g["fast_mb_per_s"] > 0


def test_l1l0_part_matches_the_bound():
    for w in (32, 128):
        r = bench._l1l0_case("half", 4, w)
        assert r["ideal"] == 4 * 512 // w and r["cycles"] >= r["ideal"] and r["width"] == w
        assert abs(r["efficiency"] - r["ideal"] / r["cycles"]) < 1e-3
        fill = 16 * 32 // w                           # half: 16 rows, 16/P reads
        assert abs(r["of_fill_bound"] - r["efficiency"] * (r["ideal"] + fill) / r["ideal"]) < 1e-3


def test_markdown_has_every_section():
    res = {"tload": [{"layout": "NORM", "dtype": "b8", "size": s, "efficiency": 0.9,
                      "first_write": 5} for s in bench.SIZES]
           + [{"layout": "ND2ZN", "dtype": "b16", "size": s, "efficiency": 0.8, "width": 64,
               "first_write": 21, "fill_bound": 0.9} for s in bench.SIZES],
           "tload_stream": [{"layout": "ND2ZN", "dtype": "b16", "width": 64,
                             "beats_per_cycle": 0.97}],
           "tload_narrow": [{"name": "NORM b8, 16-byte rows", "width": 64, "efficiency": 0.96}],
           "l1l0": [{"dtype": "half", "repeat": r, "efficiency": 0.8, "first_write": 9,
                     "width": w, "of_fill_bound": 0.9} for r in bench.REPEATS for w in (32, 64)],
           "load_align": {"ops": 108, "ops_per_cycle": 1.0, "latency": [2]},
           "speed": [{"backend": b, "harness": h, "cycles": 100, "seconds": 0.1,
                      "cycles_per_s": 1000.0 * (k + 1), "repeat": 2}
                     for k, (b, h) in enumerate([("amaranth", "python"), ("amaranth", "bulk")])],
           "regress": [{"backend": b, "ops": ["tload", "load-align"], "per_op": n,
                        "scenarios": 2 * n, "seconds": 10.0, "scenarios_per_s": 0.2 * n}
                       for b, n in (("amaranth", 40), ("verilator", 2000))],
           "golden": {"tile_bytes": 65536, "fast_s": 0.001, "reference_s": 1.0, "ratio": 1000.0,
                      "fast_mb_per_s": 65.5},
           "area": [{"top": "x", "cells": 1234, "flip_flops": 56}], "seconds": 1.0, "jobs": 2}
    md = bench.markdown(res)
    for needle in ("| NORM | b8 | 0.900 (5) |", "| half | 0.800 (9) / 0.900 |", "1.0 ops/cycle",
                   "### L1 -> L0 engine (LoadDataWithTranspose), W = 64",
                   "### TLOAD engine, W = 64", "| ND2ZN | b16 | 0.800 (21) / 0.889 |",
                   "| 0.970 |", "NORM b8, 16-byte rows 0.960",
                   "| amaranth | bulk | 2 | 100 | 0.10 | 2,000 | 1.0x |",
                   "| verilator | batch | 2000 | 4000 | 10.0 | 400.0 | 50.0x |",
                   "(tload, load-align; the same scenarios first)", "1000.0x the source's loops",
                   "| x | 1,234 | 56 |"):
        assert needle in md, needle


def test_tstore_part_counts_beats_and_the_fill_bound():
    """A 4 KB TSTORE (matched against the model inside the case): beats = bytes / W, and a
    transposing layout's bound is beats / (beats + S) with S = 32 / esize (b16: 16)."""
    from tilecosim.model.tload import TLoadLayout
    from tilecosim.perf.tstore import bench_case
    for layout, w in ((TLoadLayout.ND2ZN, 64), (TLoadLayout.ND2NZ, 128)):
        r = bench_case(layout, 2, w, size=4096)
        assert r["ideal"] == 4096 // w and r["cycles"] > r["ideal"]
        want = r["ideal"] / (r["ideal"] + 16) if layout.transposing else 1.0
        assert abs(r["bound"] - want) < 1e-4
        assert abs(r["of_bound"] - r["ideal"] / r["cycles"] / want) < 1e-3


def test_tstore_markdown():
    row = {"layout": "ND2ZN", "dtype": "b16", "width": 64, "efficiency": 0.98,
           "first_write": 19, "of_bound": 0.997}
    kernel = {"width": 32, "kernel": 535, "parts": [142, 142, 132, 133], "sum": 549,
              "overlap": 0.0255, "order": {"cycles": 396, "parts": [128, 133, 128],
                                           "sum": 389, "floor": 256}}
    md = "\n".join(bench._tstore_markdown({"tstore": [row], "tstore_kernel": [kernel]}))
    for needle in ("| 64 | ND2ZN | 0.980 (19) / 0.997 |", "Lowest fraction of its bound: 0.997",
                   "| 32 | 535 | 142, 142, 132, 133 | 549 | 2.5 % | 396 | 128, 133, 128 | 256 "
                   "| 140 |"):
        assert needle in md, needle


def test_regress_rate_part_runs_the_regression_it_names():
    r = bench._regress("amaranth", 2)
    assert r["scenarios"] == 2 * len(r["ops"]) and r["match"] and r["scenarios_per_s"] > 0
    assert r["ops"] == ["tload", "load-data-with-transpose", "load-align", "store-align"]


def test_usage_errors():
    r = run("bench", "--jobs", "0")
    assert r.returncode == 2 and "--jobs '0' must be in 1..256" in r.stderr


def test_the_cluster_prediction_hands_out_the_planned_jobs_longest_first():
    """128 scenarios per op on Verilator for 2 workers: TLOAD makes two batches of 64 (a job
    each, for 2 processes), LoadAlign one of 128: three jobs of 1 s start and 0.1 s per
    batch; two of them go to one worker: 2.2 s, after a 1 s draw."""
    from tilecosim.perf.cluster import predict
    ops2 = ["tload", "load-align"]
    p = predict("verilator", 128, 2, 1.0, dict.fromkeys(ops2, 1.0), dict.fromkeys(ops2, 0.1),
                0.001)
    assert p["tasks"] == 3 and p["makespan_s"] == 2.2 and p["seconds"] == 3.2
    assert p["scenarios"] == 256 and p["scheduler_s"] == 0.0 and p["work_s"] == 3.3
    assert p["efficiency"] == 0.52                      # 3.3 s of work in 2 x 3.2 s
    # a scheduler slower than the workers bounds the run instead: 3 tasks x 2 s
    slow = predict("verilator", 128, 2, 1.0, dict.fromkeys(ops2, 1.0), dict.fromkeys(ops2, 0.1),
                   2.0)
    assert slow["seconds"] == 7.0
