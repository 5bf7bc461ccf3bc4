"""The L1 -> L0 (LoadDataWithTranspose) engine on Amaranth's simulator against the model."""

import random

import numpy as np
import pytest

from tilecosim.ops.load_data_with_transpose import random_ldt_call
from tilecosim.sim.benches.load_data_with_transpose import LdtCall, run_and_compare_l1l0
from tilecosim.model.layouts import to_tile
from tilecosim.model.load_data import (LDT_DTYPES, LoadData2dTransposeParams as V1,
                             LoadData2dTransposeParamsV2 as V2)

from ..model.test_load_data import KEY_EXAMPLES, OUTER_LOOP, SQ_BYTES, as_bytes, ceil_div, padded


def check(calls, l1, l0_bytes=16384, seed=0, stall=0.0, transpose="square", l0_init=None,
          width=32):
    init = np.random.default_rng(seed).integers(0, 256, l0_bytes, dtype=np.uint8) \
        if l0_init is None else l0_init
    res, problems = run_and_compare_l1l0(calls, l1, init, seed=seed, stall=stall,
                                         transpose=transpose, width=width)
    assert problems == [], "\n".join(problems + [f"calls: {calls}", f"seed {seed}, W {width}"])
    return res


@pytest.mark.parametrize("dtype", list(LDT_DTYPES))
def test_random_calls_back_to_back(dtype):
    rng = random.Random(dtype)
    l1 = np.random.default_rng(len(dtype)).integers(0, 256, 32768, dtype=np.uint8)
    for k in range(3):
        calls = [random_ldt_call(rng, dtype) for _ in range(4)]
        # one destination buffer per run: keep the calls on the same L0
        name = calls[0].dst_name
        calls = [LdtCall(c.params, name, c.dst, c.src) for c in calls]
        check(calls, l1, seed=k, stall=0.2 if k else 0.0)


@pytest.mark.parametrize("width", [64, 128])
def test_every_data_type_at_a_wider_beat(width):
    """W = 64 and 128: P rows a read into P transpose lanes, P lines a write; random V1 and
    V2 calls of every data type back to back, with and without stalls."""
    rng = random.Random(width)
    l1 = np.random.default_rng(width).integers(0, 256, 32768, dtype=np.uint8)
    for k in range(2):
        calls = [random_ldt_call(rng, dt) for dt in LDT_DTYPES for _ in range(2)]
        calls = [LdtCall(c.params, "L0B", c.dst, c.src) for c in calls]
        check(calls, l1, seed=k, stall=0.3 if k else 0.0, width=width)


@pytest.mark.parametrize("width", [32, 128])
@pytest.mark.parametrize("dtype,kw,placements", KEY_EXAMPLES)
def test_key_feature_examples(dtype, kw, placements, width):
    l1 = np.random.default_rng(1).integers(0, 256, 16384, dtype=np.uint8)
    check([LdtCall(V1(dtype, **kw), "L0B" if dtype == "int4b" else "L0A")], l1, 8192,
          width=width)


@pytest.mark.parametrize("dtype,kw,dst_step,slot", OUTER_LOOP)
def test_outer_loop_examples(dtype, kw, dst_step, slot):
    l1 = np.random.default_rng(2).integers(0, 256, 32768, dtype=np.uint8)
    bits = LDT_DTYPES[dtype]
    dst = "L0B" if dtype == "int4b" else "L0A"
    calls = [LdtCall(V1(dtype, **kw), dst, c * dst_step * 512, c * 3 * SQ_BYTES[bits])
             for c in range(2)]
    check(calls, l1, seed=3, stall=0.1)


def test_e2e_matrix_b_int8_nz_to_zn_on_the_engine():
    """The seed's int8 B [70x50] snippet, all its calls on the engine: L0B holds B in Zn."""
    k, n = 70, 50
    B = np.random.default_rng(6).integers(-100, 100, (k, n)).astype(np.int8)
    K, N = ceil_div(k, 32) * 32, ceil_div(n, 32) * 32
    l1 = to_tile(as_bytes(padded(B, K, N), 1), "NZ").reshape(-1).copy()
    p = V1("int8", repeat_times=ceil_div(n, 32), src_stride=ceil_div(k, 32), dst_gap=1)
    calls = [LdtCall(p, "L0B", i * ceil_div(n, 32) * 1024, i * 1024) for i in range(ceil_div(k, 32))]
    res = check(calls, l1, 16384, l0_init=np.zeros(16384, np.uint8))
    want = to_tile(as_bytes(padded(B, K, N), 1), "ZN").reshape(-1)
    np.testing.assert_array_equal(res.l0[:want.size], want)


@pytest.mark.parametrize("transpose,width", [("square", 32), ("naive", 32), ("naive", 64)])
def test_both_transpose_units(transpose, width):
    l1 = np.random.default_rng(9).integers(0, 256, 32768, dtype=np.uint8)
    calls = [LdtCall(V1(dt, repeat_times=2, src_stride=1, dst_gap=3), "L0B") for dt in LDT_DTYPES]
    check(calls, l1, seed=4, stall=0.1, transpose=transpose, width=width)


FAULTS = [
    (V1("half", repeat_times=256), "L0A", 0, 0, 7),
    (V1("half", repeat_times=1, start_index=65536), "L0A", 0, 0, 7),
    (V2("half", repeat_times=0), "L0B", 0, 0, 7),
    (V1("int4b", repeat_times=1), "L0A", 0, 0, 2),
    (V2("half", repeat_times=1), "L0A", 0, 0, 2),
    (V1("half", repeat_times=1), "L0A", 256, 0, 5),
    (V1("half", repeat_times=1), "L0A", 0, 16, 5),
    (V1("int8", repeat_times=3, src_stride=1, dst_gap=0, dst_frac_gap=0), "L0A", 0, 0, 2),
    (V1("half", repeat_times=3, start_index=1, src_stride=1, addr_mode=True), "L0A", 0, 0, 6),
    (V1("half", repeat_times=1, start_index=64), "L0A", 0, 0, 6),
    (V1("half", repeat_times=40, src_stride=1), "L0A", 0, 0, 6),
    (V1("half", repeat_times=0, start_index=9999), "L0A", 0, 0, 0),
]


@pytest.mark.parametrize("case", range(len(FAULTS)))
def test_faults_and_no_op(case):
    p, dst, d, s, code = FAULTS[case]
    l1 = np.random.default_rng(5).integers(0, 256, 32768, dtype=np.uint8)
    calls = [LdtCall(p, dst, d, s)]
    res = check(calls, l1, 16384)
    assert res.faults == [code] and res.reads == 0 and res.first_write is None


@pytest.mark.parametrize("width", [32, 64, 128])
def test_efficiency_bound_repeat_4(width):
    """W bytes in and out per cycle: R iterations of S-row squares take about (R*S + S)/P
    cycles plus the pipeline (the first lines need the square's S rows, S/P reads)."""
    P = width // 32
    l1 = np.random.default_rng(6).integers(0, 256, 32768, dtype=np.uint8)
    for dt, rows in (("int8", 32), ("half", 16), ("float", 8), ("int4b", 64)):
        nfrac = SQ_BYTES[LDT_DTYPES[dt]] // 512
        p = V1(dt, repeat_times=4, src_stride=1, dst_gap=nfrac - 1)
        res = check([LdtCall(p, "L0B")], l1, width=width)
        beats = 4 * SQ_BYTES[LDT_DTYPES[dt]] // width
        assert res.cycles <= beats + rows // P + 6
        assert res.first_write - res.accept[0] <= rows // P + 3
