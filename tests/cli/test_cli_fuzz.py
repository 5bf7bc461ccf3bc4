"""Bad input never escapes as a traceback: random argument vectors and assembly text,
in-process.

Every outcome is an exit status of the contract (0, 2, 3) or a typed error, never another
exception.  `make test` runs a small budget per target; `make fuzz` sets
TILECOSIM_FUZZ_EXAMPLES=10000.
"""

import contextlib
import io
import os

from hypothesis import given, settings, strategies as st

from tilecosim.cli import main
from tilecosim.model.asm import AsmError, parse_tload

EXAMPLES = int(os.environ.get("TILECOSIM_FUZZ_EXAMPLES", "150"))

ASM = st.sampled_from([
    "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>",
    "TLOAD.ND2NZ <LB0:a0, LB1:a1, LB2:a2, S8, Zero>, [a3, a4], ->T<a5>, U<a5>",
    "TLOAD.DN2ZN <LB0:a0, LB1:a1, BF16, Max>, [a3], ->T<1KB>",
    "TLOAD <LB0:a0, E2M1x2>, [a3, a4], ->ACC<256>",
    "TLOAD.ND2ZN <LB0:a0 LB1:a1>, [a3], ->T<1KB>",
])
VALUES = st.one_of(st.integers(-2**70, 2**70), st.sampled_from([0, 1, 16, 32, 256, 2**64 - 1]))
REG = st.builds(lambda n, v: f"{n}={v}", st.sampled_from(["a0", "a1", "a2", "a3", "a4", "a5"]),
                VALUES)
EXTRA = st.sampled_from([[], ["--json"], ["--profile", "ieee-inf"], ["--model", "reference"],
                         ["--mem-size", "4096"], ["--lcfr", "512:4096"], ["--storage", "7"],
                         ["--backend", "icarus", "--vcd", "x.vcd"], ["--full"], ["--lcfr", "x"]])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["tload", "asm"]), ASM, st.lists(REG, max_size=6), EXTRA)
def test_tload_and_asm_never_raise(cmd, asm, regs, extra):
    argv = [cmd, asm] + [x for r in regs for x in ("--reg", r)]
    if cmd == "tload":
        argv += extra
        if "--model" in extra:                       # keep the reference loops short
            argv += ["--lcfr", "256:4096"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:                      # argparse usage errors
            code = e.code
    assert code in (0, 2, 3), err.getvalue()
    assert "Traceback" not in err.getvalue()


NUM = st.one_of(st.integers(-5, 300), st.sampled_from(["x", "0x10", "-0", "65536", "1e3"]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["int4b", "int8", "half", "float", "uint32", "bad"]), st.booleans(),
       st.lists(st.tuples(st.sampled_from(["--repeat-times", "--start-index", "--src-stride",
                                           "--dst-gap", "--dst-frac-gap", "--addr-mode",
                                           "--src-frac-gap", "--dst-bytes"]), NUM), max_size=5),
       st.sampled_from([[], ["--dst", "L0B"], ["--dst", "L0A"], ["--json"], ["--model", "reference"]]))
def test_load_data_with_transpose_never_raises(tmp_path_factory, dtype, v2, opts, extra):
    src = tmp_path_factory.getbasetemp() / "l1_fuzz.bin"
    if not src.exists():
        src.write_bytes(bytes(range(256)) * 32)
    argv = ["load-data-with-transpose", "--dtype", dtype, "--src", str(src)]
    argv += ["--v2"] if v2 else []
    argv += [x for k, v in opts for x in (k, str(v))] + extra
    if "--repeat-times" not in argv:
        argv += ["--repeat-times", "1"]
    if "--dst-bytes" not in argv:
        argv += ["--dst-bytes", "8192"]
    _no_traceback(argv)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["DIST_NORM", "us_b16", "DIST_DINTLV_B32", "BLK", "E2B_B32", "nope"]),
       st.sampled_from(["b8", "b16", "b32", "b64", "b4"]), NUM,
       st.sampled_from([[], ["--post-update", "64"], ["--addr-reg", "8"], ["--post-update", "3"],
                        ["--vl", "128"], ["--vl", "100"], ["--reg-trait", "2"], ["--json"]]))
def test_load_align_never_raises(tmp_path_factory, dist, dtype, addr, extra):
    ub = tmp_path_factory.getbasetemp() / "ub_fuzz.bin"
    if not ub.exists():
        ub.write_bytes(bytes(range(256)) * 16)
    _no_traceback(["load-align", "--dist", dist, "--dtype", dtype, "--ub", str(ub),
                   "--addr", str(addr)] + extra)


def _no_traceback(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    assert code in (0, 2, 3), (argv, err.getvalue())
    assert "Traceback" not in err.getvalue()


# --- the assembler on its own: arbitrary text and token soup --------------------------------

TOKENS = st.sampled_from([
    "TLOAD", "TLOAD.NORM", "TLOAD.ND2NZ", "TLOAD.DN2ZN", "TLOAD.nd2zn", "TLOAD.XX", "<", ">",
    "<<", ",", ", ", "[", "]", "[a0]", "[a0, a1]", "->", "->T<2KB>", "T<256>", "U<a5>",
    "ACC<1KB>", "S<0x100>", "LB0:", "LB1:", "LB2:", "LB0:16", "LB1:a0+3", "LB2:a1-2", "LB3:4",
    "FP16", "S8", "E2M1x2", "FP128", "Zero", "Max", "Min", "Null", "D1", "D9", "a0", "x31",
    "zero", "t7", "0x", "0x10", "-1", "99999999999999999999", "1KB", "2kb", "KB", " ", ":", "+",
    "-", "\t", "#", ";", "\u00e9"])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.one_of(st.text(max_size=120), st.lists(TOKENS, max_size=30).map("".join),
                 st.lists(TOKENS, max_size=30).map(" ".join)))
def test_the_assembler_raises_only_its_own_error(text):
    try:
        insn = parse_tload(text)
    except AsmError as e:
        assert str(e) and "\n" not in str(e).strip().splitlines()[0]
        return
    assert parse_tload(insn.text()).text() == insn.text()      # what parses, round-trips


# --- a program for `tilecosim run`, the verilog and regress options --------------------------

LINES = st.one_of(
    st.sampled_from(["TLOAD <LB0:16, S8>, [a0], ->T<256>", "TLOAD.ND2NZ <LB0:a1, LB1:16, FP16>, "
                     "[a0], ->T<1KB>", "TLOAD <LB0:8, FP32>, [a0], D1, ->U<256>", "# comment",
                     "", "TLOAD <LB0:300, S8>, [a0], ->T<256>", "garbage here"]),
    st.text(max_size=40))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(LINES, max_size=6), st.lists(REG, max_size=3))
def test_run_never_raises(tmp_path_factory, lines, regs):
    prog = tmp_path_factory.mktemp("prog") / "p.s"
    prog.write_text("\n".join(lines), encoding="utf-8")
    _no_traceback(["run", str(prog)] + [x for r in regs for x in ("--reg", r)])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.sampled_from(["--count", "--seed", "--jobs", "--ops", "--backend", "--out",
                                 "0", "-3", "x", "tload,", "bogus", "golden", "", "/dev/null/x",
                                 "1e9", "0x10"]), max_size=6))
def test_regress_options_never_raise(args):
    """Only option handling: a final --count 0 keeps every vector from starting a run."""
    _no_traceback(["regress"] + args + ["--count", "0"])


@settings(max_examples=min(EXAMPLES, 200), deadline=None)
@given(st.sampled_from(["/dev/null/x", "/proc/self/nope/dir", "/dev/null"]), st.booleans())
def test_verilog_bad_output_directory(out, lint):
    _no_traceback(["verilog", "--out", out] + (["--lint"] if lint else []))
