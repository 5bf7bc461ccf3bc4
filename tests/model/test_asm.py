"""Assembler and disassembler (seed 000 syntax, D9 block template)."""

import pytest
from hypothesis import given, settings, strategies as st

from tilecosim.model.asm import (AsmError, Operand, RegisterError, TLoadInsn, assemble,
                       disassemble, parse_block, parse_line, parse_tload, records_text)
from tilecosim.model.dtypes import DTYPES, PadValue
from tilecosim.model.tload import TLoadLayout

SEED_1 = "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>         # 通过立即数设置输出Tile的大小"
SEED_2 = "TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2, a0], ->T<a1>     # 通过寄存器设置输出Tile的大小"


def test_seed_example_1():
    insn = parse_tload(SEED_1)
    assert insn.layout is TLoadLayout.NORM and insn.dtype.name == "FP16"
    assert insn.pad is PadValue.Null                  # default
    assert (insn.valid_col, insn.valid_row, insn.col) == (Operand("zero", 100), Operand("a0"),
                                                          Operand("a1", 10))
    assert insn.base == "a2" and insn.stride is None and insn.dsts == (("T", 2048),)
    assert records_text(assemble(insn)) == "\n".join([
        "BSTART.TMA TLOAD, FP16",
        "B.DATR NORM, Null",
        "B.DIM zero, 100, ->LB0",
        "B.DIM a0, 0, ->LB1",
        "B.DIM a1, 10, ->LB2",
        "B.IOT last, ->T<2KB>",
        "B.IOR a2"])
    p = insn.resolve({"a0": 8, "a1": 118, "a2": 0x1000})
    assert (p.valid_col, p.valid_row, p.col, p.base, p.outputs) == (100, 8, 128, 0x1000, (("T", 2048),))


def test_seed_example_2():
    insn = parse_tload(SEED_2)
    assert insn.layout is TLoadLayout.ND2NZ and insn.stride == "a0" and insn.dsts == (("T", "a1"),)
    assert records_text(assemble(insn)).splitlines()[-2:] == ["B.IOT last, ->T<a1>", "B.IOR a2, a0"]
    assert insn.resolve({"a0": 8, "a1": 4096, "a2": 0}).outputs == (("T", 4096),)


def test_d9_template_with_pad_outputs_and_dependencies():
    text = "TLOAD.DN2ZN <LB2:64, LB0:40, S8, Max>, [a2, a3], D1, D2, ->T<1KB>, U<1024>, M<0x400>, D7"
    insn = parse_tload(text)
    assert [r.text() for r in assemble(insn)] == [
        "BSTART.TMA TLOAD, S8", "B.DATR DN2ZN, Max", "B.DIM zero, 40, ->LB0",
        "B.DIM zero, 1, ->LB1", "B.DIM zero, 64, ->LB2", "B.IOT ->T<1KB>", "B.IOT ->U<1KB>",
        "B.IOT last, ->M<1KB>", "B.IOR a2, a3", "B.IOD D1, D2, ->D7"]
    assert insn.text() == ("TLOAD.DN2ZN <LB0:40, LB1:1, LB2:64, S8, Max>, [a2, a3], D1, D2, "
                           "->T<1KB>, U<1KB>, M<1KB>, D7")


def test_defaults_layout_norm_col_validcol():
    insn = parse_tload("TLOAD <LB0:a4-2, U8>, [s1], ->N<256>")
    assert insn.layout is TLoadLayout.NORM and insn.col == insn.valid_col == Operand("a4", -2)
    assert insn.resolve({"a4": 10, "s1": 0}).col == 8


def test_unset_register_is_named():
    with pytest.raises(RegisterError, match="register a0 has no value"):
        parse_tload(SEED_1).resolve({"a1": 1, "a2": 0})


@pytest.mark.parametrize("line,col,reason", [
    ("TLOAD.ND2NZ <LB0:100 LB1:a0, FP16>, [a2], ->T<2KB>", 21, "expected ','"),
    ("TLOAD.XX <LB0:1, FP16>, [a2], ->T<2KB>", 6, "unknown layout 'XX'"),
    ("TLOAD <LB1:1, FP16>, [a2], ->T<2KB>", 18, "LB0 (ValidCol) is required"),
    ("TLOAD <LB0:1>, [a2], ->T<2KB>", 12, "a DataType is required"),
    ("TLOAD <LB0:1, LB0:2, S8>, [a2], ->T<2KB>", 14, "LB0 given twice"),
    ("TLOAD <LB0:1, FP8>, [a2], ->T<2KB>", 14, "FP8 is ambiguous"),
    ("TLOAD <LB0:1, S8>, [b2], ->T<2KB>", 20, "expected a scalar register for RegSrc0"),
    ("TLOAD <LB0:1, S8>, [a2], ->T<2QB>", 30, "unknown size unit 'QB'"),
    ("TLOAD <LB0:1, S8>, [a2], ->X<2KB>", 27, "expected a destination queue"),
    ("TLOAD <LB0:1, S8>, [a2], ->T<1KB>, T<1KB>, T<1KB>, T<1KB>, T<1KB>, T<1KB>, T<1KB>, T<1KB>, T<1KB>",
     91, "at most 8 destinations"),
    ("TLOAD <LB0:1, S8>, [a2], D1, D2, D3, D4, ->T<1KB>", 37, "at most 3 dependencies"),
    ("TLOAD <LB0:1, S8>, [a2], ->T<1KB> junk", 34, "unexpected 'junk'"),
    ("TLOAD <LB0:1, S8>, [a2], ->T<1KB>, $", 35, "unexpected character '$'"),
    ("TADD T#1, T#17, ->U", 12, "relative index 17 is outside 1..16"),
    ("TSUB T#1, T#2.keep, ->U", 14, "expected 'reuse'"),
    ("MOVE a0, a1", 0, "unknown instruction 'MOVE'"),
    # malformed numbers name the field
    ("TLOAD <LB0:0x, S8>, [a2], ->T<1KB>", 11, "malformed number '0x' for LB0 (ValidCol)"),
    ("TLOAD <LB0:1, LB1:1__0, S8>, [a2], ->T<1KB>", 18, "malformed number '1__0' for LB1"),
    ("TLOAD <LB0:1, S8>, [a2], ->T<0x_KB>", 29, "malformed number '0x_' for DstTile0"),
    ("TLOAD <LB0:1, LB2:a1+01_, S8>, [a2], ->T<1KB>", 21, "malformed number '01_' for LB2"),
    ("TADD T#0x, T#2, ->U", 7, "malformed number '0x' for the first source's relative index"),
    ("TLOAD <LB0:1, S8>, [a2], d#0x, ->T<1KB>", 27, "malformed number '0x' for the dependency"),
    # the toolchain's dependency spellings, where they fit
    ("TLOAD <LB0:1, S8>, [a2], d, ->T<1KB>", 25, "expected a dependency (D<n> or d#<n>)"),
    ("TLOAD <LB0:1, S8>, [a2], ->d", 27, "expected a destination (DstTile0"),
])
def test_errors_quote_the_line_and_point_at_the_column(line, col, reason):
    with pytest.raises(AsmError) as e:
        parse_line(line)
    err = e.value
    assert reason in err.reason
    assert err.col == col, str(err)
    lines = str(err).splitlines()
    assert lines[1] == "  " + line and lines[2] == "  " + " " * col + "^"


def test_comments_and_tile_refs():
    assert parse_line("   ; only a comment") is None
    assert parse_line("# also a comment") is None
    e = parse_line("TADD T#2.reuse, T#3, ->U ; keep T#2")
    assert e.text() == "TADD T#2.reuse, T#3, ->U"


#: TLOADs as the Linx LLVM toolchain writes them (llvm/test/MC/LinxV5/
#: MTC_Tloadstore-asm-operands.s: no comma after '>', dependencies d#N, DepDst ->d), with
#: the canonical text each must print, written by hand from D9's canonical form
TOOLCHAIN_FORMS = [
    ("TLOAD.NORM <LB0: a2+12, LB1: 13, LB2: a1, FP32, Max> [a1, a7], ->T<64KB>",
     "TLOAD.NORM <LB0:a2+12, LB1:13, LB2:a1, FP32, Max>, [a1, a7], ->T<64KB>"),
    ("TLOAD.ND2ZN <LB0: a2+12, LB1: 13, LB2: a1, FP32, Zero> [a1], d#4, ->T<64KB>",
     "TLOAD.ND2ZN <LB0:a2+12, LB1:13, LB2:a1, FP32, Zero>, [a1], d#4, ->T<64KB>"),
    ("TLOAD.NORM <LB0:16, FP16> [a0, a1], d#8, ->T<512>, ->d",
     "TLOAD.NORM <LB0:16, LB1:1, LB2:16, FP16, Null>, [a0, a1], d#8, ->T<512>, d"),
    ("TLOAD.NORM <LB0:16, FP16>, [a0], D1, d#2, ->T<512>, U<512>, d#3",
     "TLOAD.NORM <LB0:16, LB1:1, LB2:16, FP16, Null>, [a0], D1, d#2, ->T<512>, U<512>, d#3"),
]


@pytest.mark.parametrize("line,canonical", TOOLCHAIN_FORMS)
def test_the_toolchains_spellings(line, canonical):
    insn = parse_tload(line)
    assert insn.text() == canonical
    assert parse_tload(canonical) == insn
    assert disassemble(assemble(insn)) == insn


def test_the_toolchains_block_dependencies():
    """``B.IOD d#8, ->d`` and the toolchain's printout of a DepDst alone, ``B.IOD , ->d``."""
    insn = parse_tload(TOOLCHAIN_FORMS[2][0])
    assert assemble(insn)[-1].text() == "B.IOD d#8, ->d"
    head = "BSTART.TMA TLOAD, FP16\nB.DATR NORM, Null\nB.DIM zero, 16, ->LB0\n" \
           "B.IOT last, ->T<512>\nB.IOR a0\n"
    assert disassemble(head + "B.IOD , ->d").dep_dst == "d"
    assert disassemble(head + "B.IOD , ->d").dep_srcs == ()


@pytest.mark.parametrize("zeros,plain", [
    ("TLOAD <LB0:016, LB1:a1+010, LB2:0032, S8>, [a2], D07, ->T<0512>, U<01KB>",
     "TLOAD <LB0:16, LB1:a1+10, LB2:32, S8>, [a2], D07, ->T<512>, U<1KB>"),
    ("TLOAD <LB0:a0-007, S8>, [a2], d#004, ->T<0x0200>", "TLOAD <LB0:a0-7, S8>, [a2], d#4, ->T<512>"),
    ("TLOAD <LB0:1_024, S8>, [a2], ->T<0b1_0000_0000>", "TLOAD <LB0:1024, S8>, [a2], ->T<256>"),
    ("TADD T#01, U#016.reuse, ->M", "TADD T#1, U#16.reuse, ->M"),
])
def test_numbers_with_leading_zeros_are_decimal(zeros, plain):
    """Leading zeros are decimal, as --reg values are (docs/cli.md), not octal and not an
    error: LB fields, offsets, sizes, register indices and d#N."""
    assert parse_line(zeros) == parse_line(plain)


def test_block_numbers_with_leading_zeros():
    text = ("BSTART.TMA TLOAD, S8\nB.DATR NORM, Null\nB.DIM zero, 016, ->LB0\n"
            "B.IOT last, ->T<0512>\nB.IOT ->U<01KB>\nB.IOR a0")
    insn = disassemble(text)
    assert insn.valid_col == Operand("zero", 16) and insn.dsts == (("T", 512), ("U", 1024))
    with pytest.raises(AsmError, match="B.IOT size '0x_' is not a size"):
        disassemble(text.replace("0512", "0x_"))


def test_disassembler_rejects_malformed_templates():
    with pytest.raises(AsmError, match="BSTART.TMA"):
        disassemble("B.DATR NORM, Null")
    with pytest.raises(AsmError, match="B.DIM"):
        disassemble("BSTART.TMA TLOAD, S8\nB.DATR NORM, Null\nB.DIM q, 1, ->LB0")


# --- round trip --------------------------------------------------------------------------

regs = st.sampled_from(["a0", "a1", "a7", "t3", "s11", "x5", "sp"])
operands = st.one_of(st.builds(Operand, st.just("zero"), st.integers(0, 1 << 20)),
                     st.builds(Operand, regs, st.integers(-64, 64)))
sizes = st.one_of(st.sampled_from([256, 512, 1024, 2048, 4096, 262144, 768, 100]), regs)
insns = st.builds(
    TLoadInsn,
    layout=st.sampled_from(list(TLoadLayout)),
    dtype=st.sampled_from(list(DTYPES.values())),
    valid_col=operands, valid_row=operands, col=operands,
    pad=st.sampled_from(list(PadValue)),
    base=regs, stride=st.one_of(st.none(), regs),
    dsts=st.lists(st.tuples(st.sampled_from(["T", "U", "M", "N", "ACC"]), sizes),
                  min_size=1, max_size=8).map(tuple),
    dep_srcs=st.lists(st.one_of(st.integers(0, 99).map(lambda k: f"D{k}"),
                                st.integers(0, 99).map(lambda k: f"d#{k}")),
                      max_size=3).map(tuple),
    dep_dst=st.one_of(st.none(), st.just("d"), st.integers(0, 99).map(lambda k: f"D{k}"),
                      st.integers(0, 99).map(lambda k: f"d#{k}")))


@settings(max_examples=300)
@given(insns)
def test_round_trip_text_and_block(insn):
    assert parse_tload(insn.text()) == insn
    records = assemble(insn)
    assert disassemble(records) == insn
    assert disassemble(records_text(records)) == insn
    assert parse_block(records_text(records)) == records


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("TLOAD.NDZ2<>LB0:1,a2[]->TU#FP16 ZeroMax8KBx")), max_size=60))
def test_garbage_never_escapes_as_anything_but_asm_error(text):
    try:
        parse_line(text)
    except AsmError as e:
        assert 0 <= e.col <= len(text)
