"""The TLOAD engine on Amaranth's simulator against the golden model.

Every scenario's memory comes from a seed, and a failure prints the
``tilecosim tload ... --backend amaranth`` line that reruns it alone.
"""

import random
import zlib

import pytest

from tilecosim.sim.benches.tload import SimConfig, repro_command, run_and_compare
from tilecosim.model.display import ramp_memory, seeded_memory
from tilecosim.model.dtypes import PadValue
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout as L, TLoadParams

from ..model.test_tload import EDGE, P
from ..tiers import slow

STALL = 0.25


def cfg_for(width=32, stall=0.0, seed=0, **kw):
    ok = 1 - stall
    return SimConfig(width=width, seed=seed, p_req_ready=ok, p_resp_valid=ok,
                     p_write_ready=ok, p_instr_valid=ok, **kw)


def check(p, cfg, mem_seed=0, mem_size=1 << 16):
    mem = seeded_memory(mem_seed, mem_size)
    res, code, mism, problems = run_and_compare(p, mem, cfg)
    if mism or problems:
        first = p if isinstance(p, TLoadParams) else p[0]
        lines = [str(x) for x in problems + mism[:8]]
        lines.append("reproduce: " + repro_command(first, cfg, mem_seed, mem_size))
        pytest.fail("\n".join(lines))
    return res, code


DTYPES = ["S8", "FP16", "FP32", "S64", "S4x2"]


# W = 64 runs the code of 128 with P = 2; make test draws at W = 32 and runs the wide engines
# on the named cases below (every element size and pad, narrow dense tiles)
@pytest.mark.parametrize("width", [32, slow(64), slow(128)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(L), ids=lambda x: x.name)
def test_random_scenarios(layout, dtype, width):
    seed = zlib.crc32(f"{layout.name}:{dtype}:{width}".encode()) & 0xFFFF   # stable across runs
    rng = random.Random(seed)
    for k in range(2):
        p, size = random_tload(rng, layout, dtype, sizes=(256, 512, 1024, 2048))
        stall = STALL if k else 0.0
        check(p, cfg_for(width, stall, seed=seed + k), mem_seed=seed + k, mem_size=size)


@pytest.mark.parametrize("profile", ["finite", "ieee-inf"])
@pytest.mark.parametrize("pad", list(PadValue), ids=lambda x: x.name)
def test_pads(pad, profile):
    for dt in ("FP16", "BF16", "S32", "E5M2"):
        p = P(L.ND2NZ, dt, 10, 13, None if dt != "S32" else 16, [("T", 1024)], pad=pad)
        if dt != "S32":
            p = P(L.ND2NZ, dt, 10, 13, 32 if dt == "E5M2" else 16, [("T", 1024)], pad=pad)
        check(p, cfg_for(profile=profile))


@pytest.mark.parametrize("profile", ["finite", "ieee-inf"])
def test_max_and_min_pads_of_every_data_type(profile):
    """All 23 data types x Max/Min back to back: the engine's own pad table (hdl/dtype_rom.py)
    against the model's (model/dtypes.py), under both profiles."""
    from tilecosim.model.dtypes import DTYPES as ALL
    plist = [TLoadParams(L.NORM, name, valid_col=1, valid_row=1, col=32 // dt.esize,
                         pad=pad, outputs=(("T", 256),))
             for name, dt in ALL.items() for pad in (PadValue.Max, PadValue.Min)]
    check(plist, cfg_for(profile=profile))


@pytest.mark.parametrize("n", [1, 2, slow(3), 4, slow(5), slow(6), slow(7), 8])
def test_outputs(n):
    rng = random.Random(n)
    for width in (32, 128):
        for layout in (L.ND2NZ, L.DN2ZN, L.ND2ZN, L.DN2NZ):
            p, size = random_tload(rng, layout, "FP16", sizes=(512, 1024), n=n)
            check(p, cfg_for(width, stall=STALL, seed=n), mem_seed=n, mem_size=size)


@pytest.mark.parametrize("name", [n for n in EDGE if n != "largest_tile"])
def test_edge_shapes(name):
    check(EDGE[name], cfg_for(seed=len(name)), mem_seed=len(name), mem_size=1 << 20)


def test_largest_tile_256k():
    res, _ = check(EDGE["largest_tile"], cfg_for(), mem_seed=9, mem_size=1 << 20)
    assert res.cycles < 1.01 * (256 * 1024 // 32) + 20


@pytest.mark.parametrize("transpose", ["square", "naive"])
def test_both_transpose_units(transpose):
    for layout in (L.ND2ZN, L.DN2NZ):
        for dt in ("S8", "FP16", "FP32", "S64"):
            p, size = random_tload(random.Random(dt), layout, dt, sizes=(1024, 2048))
            check(p, cfg_for(transpose=transpose, stall=0.1), mem_size=size)


SEED_EXAMPLES = {
    "asm_example_1_norm": P(L.NORM, "FP16", 100, 8, 128, [("T", 2048)], base=64),
    "asm_example_2_nd2nz": P(L.ND2NZ, "FP16", 100, 16, 128, [("T", 4096)], stride=256,
                             pad=PadValue.Zero),
    "multi_output_1_nd2nz_3_tiles": P(L.ND2NZ, "FP16", 48, 32, None, [("T", 1024)] * 3),
    "multi_output_2_dn2nz_2_tiles": P(L.DN2NZ, "FP16", 16, 32, 16, [("T", 512), ("U", 512)],
                                      pad=PadValue.Zero),
}


@pytest.mark.parametrize("width", [32, 64, 128])
@pytest.mark.parametrize("name", list(SEED_EXAMPLES))
def test_seed_examples(name, width):
    check(SEED_EXAMPLES[name], cfg_for(width, stall=STALL, seed=3))


FAULTS = {
    "to_acc": (P(L.NORM, "FP16", 16, 1, None, [("ACC", 512)]), 1),
    "to_s": (P(L.NORM, "FP16", 16, 1, None, [("T", 512), ("S", 512)]), 1),
    "nine_outputs": (P(L.NORM, "S8", 16, 1, 18, [("T", 256)] * 9), 1),
    "validcol_gt_col": (P(L.NORM, "FP16", 40, 1, 32, [("T", 512)]), 2),
    "validrow_gt_row": (P(L.NORM, "FP16", 32, 9, 32, [("T", 512)]), 2),
    "row_not_whole": (P(L.NORM, "FP16", 100, 1, None, [("T", 2048)]), 2),
    "col_zero": (P(L.NORM, "FP16", 0, 1, None, [("T", 512)]), 2),
    "col_not_multiple_of_n": (P(L.NORM, "S8", 16, 1, 64, [("T", 256)] * 3), 2),
    "row_not_multiple_of_n": (P(L.DN2NZ, "S8", 32, 4, 48, [("T", 256)] * 3), 2),
    "nz_rule": (P(L.ND2NZ, "FP16", 32, 8, 32, [("T", 512)]), 2),
    "zn_rule": (P(L.ND2ZN, "S8", 8, 32, 8, [("T", 256)]), 2),
    "size_not_pow2": (P(L.NORM, "S8", 16, 1, None, [("T", 768)]), 2),
    "size_over_lcfr": (P(L.NORM, "S8", 16, 1, None, [("T", 512 * 1024)]), 2),
    "sizes_differ": (P(L.NORM, "S8", 16, 1, 32, [("T", 256), ("U", 512)]), 2),
    "out_of_bounds": (P(L.NORM, "S8", 16, 2, 128, [("T", 256)], base=(1 << 16) - 20), 6),
    "huge_stride": (P(L.ND2ZN, "FP16", 16, 16, 16, [("T", 512)], stride=(1 << 64) - 2), 6),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_faults(name):
    p, code = FAULTS[name]
    res, model_code = check(p, cfg_for())
    assert model_code == code and res.faults == [code]
    assert res.requests == 0 and not res.tiles


def test_back_to_back_same_kind_has_no_bubble():
    ps = [P(L.ND2NZ, "FP16", 32, 32, 32, [("T", 2048)], base=2048 * k, pad=PadValue.Zero)
          for k in range(4)]
    res, _ = check(ps, cfg_for())
    assert res.faults == [0, 0, 0, 0]
    beats = 4 * 2048 // 32
    first = res.first_write_cycle
    assert res.last_write_cycle - first + 1 == beats           # one beat per cycle throughout
    ps = [P(L.DN2NZ, "S16", 32, 32, 32, [("T", 2048)], base=4096 * k) for k in range(3)]
    res, _ = check(ps, cfg_for())
    assert res.faults == [0, 0, 0]
    assert res.last_write_cycle - res.first_write_cycle + 1 == 3 * 2048 // 32


def test_back_to_back_mixed_kinds_and_a_fault_in_order():
    rng = random.Random(77)
    ps = []
    for layout in (L.ND2ZN, L.NORM, L.DN2NZ, L.DN2ZN, L.ND2NZ, L.ND2ZN):
        ps.append(random_tload(rng, layout, rng.choice(DTYPES), sizes=(512, 1024))[0])
    ps.insert(3, FAULTS["validcol_gt_col"][0])
    ps.insert(5, FAULTS["to_acc"][0])
    res, _ = check(ps, cfg_for(stall=0.2, seed=5), mem_size=1 << 16)
    assert res.faults[3] == 2 and res.faults[5] == 1 and len(res.faults) == len(ps)


def test_a_hang_is_a_failure_with_a_waveform(tmp_path, monkeypatch):
    """The watchdog ends the run and the run is repeated with a waveform, named in the
    report (here the watchdog is set far below what the TLOAD needs)."""
    monkeypatch.setenv("TILECOSIM_WAVES_DIR", str(tmp_path))
    p = TLoadParams(L.ND2NZ, "FP16", valid_col=64, valid_row=16, outputs=(("T", 2048),))
    res, _, mism, problems = run_and_compare(p, ramp_memory("FP16", 4096), SimConfig(max_cycles=20))
    assert res.timed_out
    assert problems[0].startswith("the engine did not complete within the watchdog")
    path = problems[0].rsplit("waveform: ", 1)[1]
    assert path == res.waveform and path.endswith(".vcd") and path.startswith(str(tmp_path / "hang-"))
    from pathlib import Path
    text = Path(path).read_text()
    assert "$enddefinitions" in text and "write__valid" in text


# --- every W (slow: last, so that a mutant is killed by the tests above first) ----------

@pytest.mark.parametrize("width", [32, slow(64), 128])
@pytest.mark.parametrize("layout", list(L), ids=lambda x: x.name)
def test_every_element_size_and_pad_at_every_width(layout, width):
    """Every element size x pad of a layout, back to back with back-pressure, each TLOAD of
    1..8 outputs and up to 2 KB, wide and narrow shapes alike."""
    seed = zlib.crc32(f"all:{layout.name}:{width}".encode()) & 0xFFFF
    rng = random.Random(seed)
    plist, need = [], 0
    for dt in ("S8", "FP16", "FP32", "S64"):
        for pad in PadValue:
            p, size = random_tload(rng, layout, dt, sizes=(256, 1024, 2048), pad=pad)
            plist.append(p)
            need = max(need, size)
    check(plist, cfg_for(width, STALL, seed=seed), mem_seed=seed, mem_size=need)


NARROW = {   # (layout, type, Col, Row): one output whose rows (NORM, ND2NZ, ND2ZN) or columns
    # (DN2ZN, DN2NZ) are narrower than W, in a dense source
    "norm_b8_16B_rows": (L.NORM, "S8", 16, 256),
    "norm_b16_32B_rows": (L.NORM, "FP16", 16, 128),
    "norm_b32_64B_rows": (L.NORM, "FP32", 16, 64),
    "nd2nz_b16_one_fractal_column": (L.ND2NZ, "FP16", 16, 128),
    "nd2nz_b8_one_fractal_column": (L.ND2NZ, "S8", 32, 64),
    "dn2zn_b32_one_fractal_row": (L.DN2ZN, "FP32", 128, 8),
    "nd2nz_b16_two_fractal_columns": (L.ND2NZ, "FP16", 32, 64),
    "dn2zn_b8_two_fractal_rows": (L.DN2ZN, "S8", 64, 64),
    "nd2zn_b8_16B_rows": (L.ND2ZN, "S8", 16, 256),
    "dn2nz_b8_16B_columns": (L.DN2NZ, "S8", 256, 16),
    "nd2zn_b16_32B_rows": (L.ND2ZN, "FP16", 16, 128),
    "dn2nz_b32_64B_columns": (L.DN2NZ, "FP32", 64, 16),
}


@pytest.mark.parametrize("width", [32, slow(64), 128])
@pytest.mark.parametrize("name", list(NARROW))
def test_narrow_dense_tiles_move_several_rows_a_beat(name, width):
    """A dense tile whose rows are narrower than W moves W bytes a cycle: the tile of 4 KB
    takes its 4096/W beats plus the pipeline's latency, and a transposing one the reads that
    bring the S rows of its first square too (S x rowbytes / W: several rows a read), one of
    several fractals (ND2NZ, DN2ZN) those of the P lines of the first beat;
    partly valid (rows past ValidRow, columns past ValidCol padded: the latter make the
    source rows no longer back to back) and strided ones agree with the model too."""
    layout, dt, src_cols, src_rows = NARROW[name]
    dn = layout.source_dn
    full = TLoadParams(layout, dt, valid_col=src_cols, valid_row=src_rows, col=src_cols,
                       outputs=(("T", 4096),), pad=PadValue.Max)
    res, _ = check(full, cfg_for(width, seed=1), mem_seed=1, mem_size=8192)
    esize = full.dtype.esize
    row_bytes = (src_rows if dn else src_cols) * esize
    if layout.transposing:              # the S rows of the first square
        fill = (32 // esize) * min(row_bytes, width) // width
    elif layout in (L.ND2NZ, L.DN2ZN) and row_bytes > 32:   # P lines of the first fractal
        fill = (width // 32) * min(row_bytes, width) // width
    else:
        fill = 0
    assert res.cycles <= 4096 // width + fill + 6
    vr, vc = (src_rows, src_cols - 3) if dn else (src_rows - 5, src_cols)
    part = TLoadParams(layout, dt, valid_col=vc, valid_row=vr, col=src_cols,
                       outputs=(("T", 4096),), pad=PadValue.Min)
    padded = TLoadParams(layout, dt, valid_col=src_cols - (not dn), valid_row=src_rows - dn,
                         col=src_cols, outputs=(("T", 4096),), pad=PadValue.Null)
    strided = TLoadParams(layout, dt, valid_col=src_cols, valid_row=src_rows, col=src_cols,
                          outputs=(("T", 4096),), pad=PadValue.Zero, base=32,
                          stride=(src_cols if not dn else src_rows) * full.dtype.esize + 32)
    check([full, part, padded, strided], cfg_for(width, STALL, seed=2), mem_seed=2,
          mem_size=1 << 15)
