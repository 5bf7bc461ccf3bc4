"""TSTORE in the golden model (docs/design.md D15): the round trip with TLOAD, a worked
example by hand, the two implementations against each other, every fault, and the
assembler's spellings (the Linx LLVM toolchain's included)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilecosim.model.asm import (AsmError, assemble, disassemble, parse_block, parse_line,
                                 records_text)
from tilecosim.model.dtypes import DTYPES, dtype
from tilecosim.model.faults import IllegalParameter, OutOfBounds, TileReleased
from tilecosim.model.layouts import Layout
from tilecosim.model.machine import Machine
from tilecosim.model.tload import TileImage, TLoadLayout
from tilecosim.model.tstore import TStoreParams, tstore, tstore_reference

from ..strategies import legal_tloads


def _footprint(layout: TLoadLayout, vr: int, vc: int, e: int, stride: int) -> np.ndarray:
    """The byte offsets from RegSrc0 of an LB1 x LB0 footprint, written from D15's sentence
    ("rows (ND) or columns (DN) RegSrc1 bytes apart"), not from the model."""
    out = []
    for i in range(vr):
        for j in range(vc):
            start = (j * stride + i * e) if layout.source_dn else (i * stride + j * e)
            out.extend(range(start, start + e))
    return np.unique(np.asarray(out, dtype=np.int64))


def _asm(p, src: str, base_reg="a0", stride_reg="a1") -> str:
    col = p.valid_col if p.col is None else p.col
    regs = f"[{base_reg}" + (f", {stride_reg}]" if p.stride is not None else "]")
    return (f"TSTORE.{p.layout.name} <LB0:{p.valid_col}, LB1:{p.valid_row}, LB2:{col}, "
            f"{p.dtype.name}>, {src}, {regs}")


@settings(max_examples=300)
@given(legal_tloads(max_outputs=1), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_tload_then_tstore_reproduces_the_footprint_and_nothing_else(case, gap, seed):
    """For every layout, element size and footprint: TLOAD, then TSTORE with the same fields
    to another address, copies the footprint's bytes exactly; no other byte changes."""
    p, mem = case
    n = mem.size
    rng = np.random.default_rng(seed)
    memory = np.concatenate([mem, rng.integers(0, 256, n + gap, dtype=np.uint8)])
    dst = n + gap
    e = p.esize
    dense = (p.valid_row if p.layout.source_dn else p.valid_col) * e
    stride = dense if p.stride is None else p.stride
    regs = {"a0": p.base, "a1": stride, "a2": dst + p.base}
    m = Machine(memory, regs)
    m.execute(_asm_tload(p))
    outer, inner = (p.valid_col, p.valid_row) if p.layout.source_dn else (p.valid_row, p.valid_col)
    if outer > 1 and inner and stride < inner * e:        # rows that overlap: refused
        with pytest.raises(IllegalParameter, match="overlap"):
            m.execute(_asm(p, f"{p.outputs[0][0]}#1", "a2"))
        assert np.array_equal(m.memory, memory)
        return
    m.execute(_asm(p, f"{p.outputs[0][0]}#1", "a2"))
    off = _footprint(p.layout, p.valid_row, p.valid_col, e, stride)
    want = memory.copy()
    want[dst + p.base + off] = memory[p.base + off]
    assert np.array_equal(m.memory, want)
    assert m.tiles.live() == []                   # the source was released at commit


def _asm_tload(p) -> str:
    col = p.valid_col if p.col is None else p.col
    regs = "[a0, a1]" if p.stride is not None else "[a0]"
    return (f"TLOAD.{p.layout.name} <LB0:{p.valid_col}, LB1:{p.valid_row}, LB2:{col}, "
            f"{p.dtype.name}, {p.pad.name}>, {regs}, ->{p.outputs[0][0]}<{p.outputs[0][1]}>")


def _zn_tile(rows: int, cols: int) -> TileImage:
    """A ZN tile of b16 elements, element (i, j) = 100 i + j, placed by D4's ZN offset
    ``(i//r0)*C*r0 + j*r0 + i%r0`` with r0 = 16, written out here by hand."""
    data = np.zeros(rows * cols * 2, dtype=np.uint8)
    for i in range(rows):
        for j in range(cols):
            off = ((i // 16) * cols * 16 + j * 16 + i % 16) * 2
            data[off:off + 2] = np.frombuffer(np.uint16(100 * i + j).tobytes(), np.uint8)
    return TileImage("T", data.size, dtype("S16"), Layout.ZN, rows, cols, data,
                     np.ones(data.size, bool))


@pytest.mark.parametrize("impl", [tstore, tstore_reference])
def test_a_worked_example_of_nd2zn(impl):
    """TSTORE.ND2ZN <LB0:3, LB1:2, LB2:16, S16> of a 32 x 16 ZN tile to 10 with stride 40:
    row 0 (0, 1, 2) at bytes 10..15, row 1 (100, 101, 102) at 50..55; nothing else."""
    tile = _zn_tile(32, 16)
    mem = np.full(128, 0xEE, dtype=np.uint8)
    impl(mem, TStoreParams(TLoadLayout.ND2ZN, "S16", valid_col=3, valid_row=2, col=16,
                           base=10, stride=40), tile)
    words = lambda a, k: list(np.frombuffer(mem[a:a + 2 * k].tobytes(), np.uint16))  # noqa: E731
    assert words(10, 3) == [0, 1, 2]
    assert words(50, 3) == [100, 101, 102]
    rest = np.ones(128, bool)
    rest[10:16] = rest[50:56] = False
    assert (mem[rest] == 0xEE).all()


def test_dn2zn_writes_columns_and_nd2nz_reads_the_same_bytes_as_nz():
    """DN memory side: column j of the footprint at base + j*stride, element i at i*esize.
    A ZN tile's element (17, 2) (2nd fractal row) lands at 4 + 2*80 + 17*2."""
    tile = _zn_tile(32, 16)
    mem = np.zeros(512, dtype=np.uint8)
    tstore(mem, TStoreParams(TLoadLayout.DN2ZN, "S16", valid_col=3, valid_row=20, col=16,
                             base=4, stride=80), tile)
    a = 4 + 2 * 80 + 17 * 2
    assert int(np.frombuffer(mem[a:a + 2].tobytes(), np.uint16)[0]) == 1702


@settings(max_examples=300)
@given(legal_tloads(max_outputs=1), st.integers(0, 2**32 - 1))
def test_the_vectorized_model_equals_the_loops(case, seed):
    """Both write the same bytes, each once, or raise the same fault."""
    p, mem = case
    tile_p = dataclasses.replace(p, base=0, stride=None, valid_row=p.valid_row,
                                 valid_col=p.valid_col)
    rng = np.random.default_rng(seed)
    size = p.outputs[0][1]
    e = p.esize
    col = p.valid_col if p.col is None else p.col
    tile = TileImage("T", size, p.dtype, p.layout.dest, size // (col * e), col,
                     rng.integers(0, 256, size, dtype=np.uint8), np.ones(size, bool))
    sp = TStoreParams(tile_p.layout, p.dtype, p.valid_col, p.base, p.valid_row, p.col,
                      p.stride)
    a, b = mem.copy(), mem.copy()
    try:
        wa = tstore(a, sp, tile)
    except IllegalParameter as f:
        with pytest.raises(IllegalParameter) as e:
            tstore_reference(b, sp, tile)
        assert (e.value.field, e.value.value) == (f.field, f.value)
        assert np.array_equal(a, mem) and np.array_equal(b, mem)
        return
    wb = tstore_reference(b, sp, tile)
    assert np.array_equal(a, b)
    assert sorted(wb) == list(wa)                 # each byte once: nothing overlaps


def _machine(prog: str, size: int = 8192, **regs):
    m = Machine(np.arange(size, dtype=np.uint32).astype(np.uint8), {"a0": 0, **regs})
    for line in prog.strip().splitlines():
        m.execute(line)
    return m


LOAD = "TLOAD.NORM <LB0:16, LB1:16, LB2:16, S16>, [a0], ->T<512>"


@pytest.mark.parametrize("store,kind,field", [
    ("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S8>, T#1, [a1]", IllegalParameter, "DataType"),
    ("TSTORE.NORM <LB0:17, LB1:1, LB2:16, S16>, T#1, [a1]", IllegalParameter, "ValidCol"),
    ("TSTORE.NORM <LB0:1, LB1:1, LB2:0, S16>, T#1, [a1]", IllegalParameter, "Col"),
    ("TSTORE.NORM <LB0:3, LB1:1, LB2:3, S16>, T#1, [a1]", IllegalParameter, "Col"),
    ("TSTORE.NORM <LB0:16, LB1:17, LB2:16, S16>, T#1, [a1]", IllegalParameter, "ValidRow"),
    ("TSTORE.ND2NZ <LB0:8, LB1:8, LB2:8, S16>, T#1, [a1]", IllegalParameter, "Col"),
    ("TSTORE.ND2ZN <LB0:8, LB1:8, LB2:32, S16>, T#1, [a1]", IllegalParameter, "Row"),
    ("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#1, [a2]", OutOfBounds, "RegSrc0"),
    ("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#2, [a1]", TileReleased, "source"),
    ("TSTORE.NORM <LB0:16, LB1:16, LB2:16, FP16>, U#1, [a1]", TileReleased, "source"),
])
def test_faults_name_the_field_and_change_nothing(store, kind, field):
    m = _machine(LOAD, a1=4096, a2=8192 - 511)
    before = m.memory.copy()
    with pytest.raises(kind) as e:
        m.execute(store)
    assert e.value.field == field, str(e.value)
    assert np.array_equal(m.memory, before)
    assert [n for n, _ in m.tiles.live()] == ["T#1"]        # not released


def test_a_released_source_faults_and_reuse_keeps_it():
    m = _machine(LOAD, a1=4096)
    m.execute("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#1.reuse, [a1]")
    assert [n for n, _ in m.tiles.live()] == ["T#1"]
    m.execute("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#1, [a1]")
    assert m.tiles.live() == []
    with pytest.raises(TileReleased, match="released"):
        m.execute("TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#1, [a1]")


def test_same_size_types_are_a_bit_copy_and_an_empty_footprint_writes_nothing():
    m = _machine(LOAD, a1=4096)
    m.execute("TSTORE.NORM <LB0:16, LB1:16, LB2:16, FP16>, T#1.reuse, [a1]")
    assert np.array_equal(m.memory[4096:4608], m.memory[0:512])
    before = m.memory.copy()
    step = m.execute("TSTORE.NORM <LB0:0, LB1:16, LB2:16, S16>, T#1.reuse, [a1]")
    assert step.stored.size == 0 and np.array_equal(m.memory, before)


@pytest.mark.parametrize("store,ok", [
    ("TSTORE.NORM <LB0:2, LB1:3, LB2:16, S16>, T#1, [a1, a3]", False),   # 4 B rows, 2 B apart
    ("TSTORE.NORM <LB0:2, LB1:1, LB2:16, S16>, T#1, [a1, a3]", True),    # one row: no overlap
    ("TSTORE.NORM <LB0:1, LB1:3, LB2:16, S16>, T#1, [a1, a3]", True),    # 2 B rows, 2 B apart
    ("TSTORE.DN2ZN <LB0:3, LB1:2, LB2:16, S16>, T#1, [a1, a3]", False),  # 4 B columns
    ("TSTORE.NORM <LB0:0, LB1:3, LB2:16, S16>, T#1, [a1, a3]", True),    # empty
])
def test_rows_that_would_overlap_are_refused(store, ok):
    """Rows (columns) 2 bytes apart: overlapping when a row holds more than 2 bytes."""
    m = _machine("TLOAD.NORM <LB0:16, LB1:32, LB2:16, S16>, [a0], ->T<1KB>", a1=4096, a3=2)
    if ok:
        m.execute(store)
        return
    with pytest.raises(IllegalParameter) as e:
        m.execute(store)
    assert e.value.field == "RegSrc1" and "overlap" in e.value.message


#: the two TSTORE lines of the Linx LLVM toolchain's test (llvm/test/MC/LinxV5/
#: MTC_Tloadstore-asm-operands.s), with our registers and selectors (the toolchain's RegSrc
#: list takes four registers and its selector is ZZ2ZN), and the canonical text each prints
TOOLCHAIN = [
    ("TSTORE.ND2ZN <LB0: a2+12, LB1: 13, LB2: a1, FP32> T#1, [a1, a3], ->d",
     "TSTORE.ND2ZN <LB0:a2+12, LB1:13, LB2:a1, FP32>, T#1, [a1, a3], ->d"),
    ("TSTORE.ND2ZN <LB0: a2+12, LB1: 13, LB2: a1, FP32>, U#1, [a1, a7], d#8, ->d",
     "TSTORE.ND2ZN <LB0:a2+12, LB1:13, LB2:a1, FP32>, U#1, [a1, a7], d#8, ->d"),
    ("TSTORE.NORM <LB0: a2+12, LB1: 13, LB2: a1, FP32> T#1, [a1]",
     "TSTORE.NORM <LB0:a2+12, LB1:13, LB2:a1, FP32>, T#1, [a1]"),
    ("tstore.dn2nz <LB0:32, FP16>, N#16.reuse, [a0], D1, d#2, D3, ->D4",
     "TSTORE.DN2NZ <LB0:32, LB1:1, LB2:32, FP16>, N#16.reuse, [a0], D1, d#2, D3, ->D4"),
]


@pytest.mark.parametrize("line,canonical", TOOLCHAIN)
def test_the_spellings_parse_and_round_trip(line, canonical):
    insn = parse_line(line)
    assert insn.text() == canonical
    assert parse_line(canonical) == insn
    recs = assemble(insn)
    assert disassemble(recs) == insn
    assert disassemble(parse_block(records_text(recs))) == insn


def test_the_block_template():
    """BSTART.TMA TSTORE, B.DATR (the layout), B.DIM x3, B.IOT naming the source, B.IOR,
    B.IOD -- written here by hand."""
    insn = parse_line(TOOLCHAIN[1][0])
    assert records_text(assemble(insn)).splitlines() == [
        "BSTART.TMA TSTORE, FP32", "B.DATR ND2ZN", "B.DIM a2, 12, ->LB0",
        "B.DIM zero, 13, ->LB1", "B.DIM a1, 0, ->LB2", "B.IOT last, U#1", "B.IOR a1, a7",
        "B.IOD d#8, ->d"]


@pytest.mark.parametrize("line,col,reason", [
    ("TSTORE <LB0:1, S8, Zero>, T#1, [a0]", 19, "TSTORE takes no PadValue"),
    ("TSTORE <LB0:1, S8>, [a0]", 20, "expected the source tile register"),
    ("TSTORE <LB0:1, S8>, ACC, [a0]", 20, "not ACC"),
    ("TSTORE <LB0:1, S8>, T#1 [a0]", 24, "expected ','"),
    ("TSTORE <LB0:1, S8>, T#1, [a0], ->", 33, "expected DepDst"),
    ("TSTORE <LB0:1, S8>, T#1, [a0], ->d, D2", 34, "unexpected ','"),
    ("TSTORE <LB0:1, S8>, T#1, [a0], D1, D2, D3, D4", 43, "at most 3 dependencies"),
    ("TSTORE <LB0:1, S8>, T#1, [a0], ->T<512>", 33, "has no destination register"),
])
def test_errors_point_at_the_column(line, col, reason):
    with pytest.raises(AsmError) as e:
        parse_line(line)
    assert reason in e.value.reason and e.value.col == col, str(e.value)


def test_every_type_round_trips_through_the_block():
    for name in DTYPES:
        insn = parse_line(f"TSTORE.NORM <LB0:1, {name}>, T#1, [a0]")
        assert disassemble(assemble(insn)) == insn


def test_null_padded_bytes_stored_are_undefined_and_load_back_undefined():
    """D5 + D15: a TSTORE of a register's Null-padded (undefined) bytes leaves those memory
    bytes undefined (the RTL stores whatever its slot holds); a TLOAD of them gives
    undefined tile bytes; the defined ones stay defined."""
    m = _machine("TLOAD.NORM <LB0:8, LB1:16, LB2:16, S16, Null>, [a0], ->T<512>", a1=4096)
    m.execute("TSTORE.NORM <LB0:16, LB1:2, LB2:16, S16>, T#1, [a1]")
    row = np.r_[np.ones(16, bool), np.zeros(16, bool)]         # 8 loaded, 8 padded elements
    assert np.array_equal(m.defined[4096:4160], np.r_[row, row])
    assert m.defined[:4096].all() and m.defined[4160:].all()
    m.execute("TLOAD.NORM <LB0:32, LB1:1, LB2:32, S16, Zero>, [a1], ->U<256>")
    img = m.tiles.read("U#1")
    assert np.array_equal(img.valid[:64], np.r_[row, row]) and img.valid[64:].all()
