"""Bad input never escapes as a traceback: random argument vectors, assembly text, output
paths (directories, unwritable places, odd suffixes and names), numbers (negative, huge,
malformed, with leading zeros, 64-bit operands that wrap) and input files (empty, folders,
devices, /proc files), in-process.

Every outcome is an exit status of the contract (0, 2, 3) or a typed error, never another
exception, and no run leaves a file in the temporary folder or the working folder (each runs
in empty ones of its own).  `make test` runs a small budget per target; `make fuzz` sets
TILECOSIM_FUZZ_EXAMPLES=10000.
"""

import os
import shutil
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import given, settings, strategies as st

from . import in_process
from tilecosim.model.asm import AsmError, parse_tload

EXAMPLES = int(os.environ.get("TILECOSIM_FUZZ_EXAMPLES", "150"))

ASM = st.sampled_from([
    "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>",
    "TLOAD.ND2NZ <LB0:a0, LB1:a1, LB2:a2, S8, Zero>, [a3, a4], ->T<a5>, U<a5>",
    "TLOAD.DN2ZN <LB0:a0, LB1:a1, BF16, Max>, [a3], ->T<1KB>",
    "TLOAD <LB0:a0, E2M1x2>, [a3, a4], ->ACC<256>",
    "TLOAD.ND2ZN <LB0:a0 LB1:a1>, [a3], ->T<1KB>",
    # numbers with leading zeros, and the Linx toolchain's spellings
    "TLOAD.NORM <LB0:016, LB1:a0+010, LB2:0032, S16, Zero>, [a2], D01, ->T<0512>",
    "TLOAD.DN2NZ <LB0:a0, LB1:a1, FP32, Max> [a3, a4], d#04, ->T<01KB>, ->d",
    # 64-bit operands: a stride register over one row, offsets that wrap past 2**64
    "TLOAD.NORM <LB0:16, FP16>, [a0, a1], ->T<512>",
    "TLOAD.NORM <LB0:a0+16, LB1:a1-1, LB2:a2+0010, S8, Zero>, [a3, a4], ->T<a5>",
    "TLOAD.ND2NZ <LB0:16, LB1:a1, FP16>, [a0+32, a4], ->T<512>, U<512>",
])
#: register values: anything, and the edges of the signed and unsigned 64-bit ranges, where
#: operands wrap (a1 = -1 is 2**64 - 1; a0+16 with a0 = 2**64 - 16 is 0)
VALUES = st.one_of(st.integers(-2**70, 2**70),
                   st.sampled_from([0, 1, 16, 32, 256, 2**64 - 1, 2**64 - 16, 2**63, 2**63 - 1,
                                    -1, -16, -2**63, 2**32, "0010", "016", "0x10"]),
                   st.integers(2**63 - 300, 2**63 + 300), st.integers(2**64 - 300, 2**64 - 1),
                   st.integers(-300, -1))
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
    _no_traceback(argv)


NUM = st.one_of(st.integers(-5, 300), st.integers(-2**70, 2**70),
                st.sampled_from(["x", "0x10", "-0", "65536", "1e3", "0010", " 7", "0x", "--1",
                                 "1_000", "\u0661", "9" * 5000]))

#: output paths: templates in which {d} is a scratch folder holding a directory d.npz and a
#: regular file 'file'
OUT_PATHS = st.one_of(
    st.sampled_from(["{d}/ok.npz", "{d}/ok.bin", "{d}/ok.svg", "{d}/ok.png", "{d}/ok.vcd",
                     "{d}/ok.fst", "{d}/d.npz", "{d}", "{d}/", "{d}/file/x.npz", "{d}/no/x.npz",
                     "/proc/x.npz", "/proc/x.bin", "/proc/x.vcd", "/dev/null", "/", "",
                     " ", "{d}/x.txt", "{d}/X.NPZ", "{d}/x.npz.", "{d}/a b.npz", "{d}/-.npz",
                     "{d}/\u00e9\u4e2d.npz", "{d}/" + "x" * 300 + ".npz", "{d}/x\x00.npz",
                     "{d}/.npz", "{d}/loop/x.npz"]),
    st.text(max_size=24).map(lambda t: "{d}/" + t))


def _scratch(tmp_path_factory):
    d = tmp_path_factory.getbasetemp() / "out_fuzz"
    if not d.exists():
        d.mkdir()
        (d / "d.npz").mkdir()
        (d / "file").write_text("a regular file")
        (d / "loop").symlink_to(d / "loop")
    return d


def _path(template, tmp_path_factory):
    return template.replace("{d}", str(_scratch(tmp_path_factory)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["tload", "load-data-with-transpose", "load-align", "draw", "vcd", "waves",
                        "draw-architecture", "mutation"]), OUT_PATHS)
def test_output_paths_never_raise(tmp_path_factory, cmd, template):
    """Every command that writes a file, with every kind of output path: exit 0 (and the
    file exists under exactly that name) or a one-line usage error (exit 2)."""
    path = _path(template, tmp_path_factory)
    argv = {
        "tload": ["tload", "TLOAD.NORM <LB0:16, LB1:16, FP16>, [a0], ->T<512>", "--reg", "a0=0",
                  "--out", path],
        "load-data-with-transpose": ["load-data-with-transpose", "--dtype", "int8",
                                     "--repeat-times", "1", "--dst-bytes", "1024",
                                     "--src-bytes", "4096", "--out", path],
        "load-align": ["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0",
                       "--ub-bytes", "4096", "--out", path],
        "draw": ["draw", "ZZ", "--rows", "4", "--cols", "4", "--out", path],
        "draw-architecture": ["draw", "architecture", "--out", path],
        # the waveform checks come before any simulation: a bad path never starts one, and
        # a good one with the golden backend is a usage error too
        "vcd": ["tload", "TLOAD.NORM <LB0:16, FP16>, [a0], ->T<512>", "--reg", "a0=0",
                "--vcd", path],
        "waves": ["tload", "TLOAD.NORM <LB0:16, FP16>, [a0], ->T<512>", "--reg", "a0=0",
                  "--backend", "golden", "--waves", path],
        "mutation": ["mutation", "--list", "--json", path],
    }[cmd]
    code, err = _no_traceback(argv)
    if code == 0 and cmd not in ("mutation",):
        assert os.path.isfile(path), (argv, "reported success without writing the file")
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


NUMBERS = st.one_of(st.integers(-2**70, 2**70).map(str),
                    st.sampled_from(["-1", "0", "1", "-0", "0x", "1e3", "0010", "2", "32", "64",
                                     "256", "257", str(2**64 - 1), str(2**64), "0.5", "nan",
                                     "", " ", "0b101", "x"]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["--mem-seed", "--seed", "--latency", "--stall",
                                           "--width", "--mem-size", "--storage"]),
                          NUMBERS), max_size=4),
       st.lists(REG, max_size=2))
def test_tload_numbers_never_raise(tmp_path_factory, opts, regs):
    """Seeds, latency, stall probability, width, memory size and register values: negative,
    huge or malformed ones are a one-line usage error (the golden backend keeps it fast;
    the HDL options are parsed and checked all the same)."""
    argv = ["tload", "TLOAD.NORM <LB0:a0, LB1:4, FP16>, [a1], ->T<512>"]
    argv += [x for k, v in opts for x in (k, v)]
    argv += ["--mem-size", "65536"]     # argparse checks every --mem-size; the last one wins
    argv += [x for r in regs for x in ("--reg", r)]
    code, err = _no_traceback(argv)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


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


def _no_traceback(argv, keep=()):
    """Run ``argv`` in an empty working folder with an empty temporary folder: an exit
    status of the contract, no traceback, and afterwards both folders empty again (but for
    the files ``keep`` names, relative to the working folder, when asked for)."""
    base = Path(tempfile.mkdtemp(prefix="fuzz-"))
    work, tmp = base / "work", base / "tmp"
    work.mkdir()
    tmp.mkdir()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with mock.patch.dict(os.environ, TMPDIR=str(tmp)), \
                mock.patch.object(tempfile, "tempdir", str(tmp)):
            code, _, err = in_process(argv)
        left = sorted(str(p.relative_to(work)) for p in work.rglob("*"))
        temp = sorted(p.name for p in tmp.iterdir())
    finally:
        os.chdir(cwd)
        shutil.rmtree(base, ignore_errors=True)
    assert code in (0, 2, 3), (argv, err)
    assert "Traceback" not in err
    assert temp == [], (argv, "left in the temporary folder", temp)
    assert [x for x in left if x not in keep] == [], (argv, "left in the working folder", left)
    return code, err


#: input files: empty, a folder, devices, /proc files, a missing one, a loop of links, bytes
#: that are not UTF-8, and good ones; {d} is a scratch folder made by :func:`_inputs`
INPUTS = st.sampled_from(["{d}/empty", "{d}", "/dev/zero", "/dev/null", "/dev/urandom",
                          "/proc/self/mem", "/proc/self/maps", "/proc/cpuinfo", "/sys/kernel",
                          "{d}/missing", "{d}/loop", "{d}/junk", "{d}/small", "{d}/good.s",
                          "{d}/ramp", "", "{d}/empty/x", "/etc/shadow-not-there"])


def _inputs(tmp_path_factory):
    d = tmp_path_factory.getbasetemp() / "in_fuzz"
    if not d.exists():
        d.mkdir()
        (d / "empty").write_bytes(b"")
        (d / "loop").symlink_to(d / "loop")
        (d / "junk").write_bytes(bytes([0xff, 0xfe, 0, 1, 0x80]) * 50)
        (d / "small").write_bytes(b"\x01\x02\x03")
        (d / "good.s").write_text("TLOAD <LB0:16, S8>, [a0], ->T<256>\n")
        (d / "ramp").write_bytes(bytes(range(256)) * 64)
    return d


#: the size option beside each file option (both at once are refused)
SIZE_OF = {"--mem": "--mem-size", "--mem-run": "--mem-size", "--src": "--src-bytes",
           "--ub": "--ub-bytes", "PROGRAM": None}


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(list(SIZE_OF)), INPUTS, st.booleans(), st.booleans())
def test_input_files_never_raise(tmp_path_factory, opt, template, json, size):
    """Every option that reads a file, and a program file, with every kind of file: a
    result, a fault, or one line naming the option (never an endless read of a device); a
    malformed program gets the assembler's line and its caret."""
    d = _inputs(tmp_path_factory)
    path = template.replace("{d}", str(d))
    argv = {
        "--mem": ["tload", "TLOAD.NORM <LB0:16, FP16>, [a0], ->T<512>", "--reg", "a0=0",
                  "--mem", path],
        "--mem-run": ["run", str(d / "good.s"), "--reg", "a0=0", "--mem", path],
        "--src": ["load-data-with-transpose", "--dtype", "int8", "--repeat-times", "1",
                  "--dst-bytes", "1024", "--src", path],
        "--ub": ["load-align", "--dist", "NORM", "--dtype", "b8", "--addr", "0", "--ub", path],
        "PROGRAM": ["run", path, "--reg", "a0=0"],
    }[opt]
    argv += ["--json"] if json else []
    argv += [SIZE_OF[opt], "64"] if size and SIZE_OF[opt] else []
    code, err = _no_traceback(argv)
    if code == 2:
        lines = err.strip().splitlines()
        assert lines[0].startswith(f"tilecosim {argv[0]}: error: "), err
        assert len(lines) == 1 or ("column" in lines[0] and len(lines) == 3), err


# --- the assembler on its own: arbitrary text and token soup --------------------------------

TOKENS = st.sampled_from([
    "TLOAD", "TLOAD.NORM", "TLOAD.ND2NZ", "TLOAD.DN2ZN", "TLOAD.nd2zn", "TLOAD.XX", "<", ">",
    "<<", ",", ", ", "[", "]", "[a0]", "[a0, a1]", "->", "->T<2KB>", "T<256>", "U<a5>",
    "ACC<1KB>", "S<0x100>", "LB0:", "LB1:", "LB2:", "LB0:16", "LB1:a0+3", "LB2:a1-2", "LB3:4",
    "FP16", "S8", "E2M1x2", "FP128", "Zero", "Max", "Min", "Null", "D1", "D9", "a0", "x31",
    "zero", "t7", "0x", "0x10", "-1", "99999999999999999999", "1KB", "2kb", "KB", " ", ":", "+",
    "-", "\t", "#", ";", "\u00e9",
    # leading zeros, underscores, other bases and malformed numbers in every field
    "0", "00", "016", "0512", "LB0:016", "LB1:a1+010", "LB2:a0-007", "T<0512>", "U<01KB>",
    "T<0x_>", "1_000", "1__0", "0b101", "0o17", "0x_", "08", "0_8", "\u0661\u0666",
    # the toolchain's dependencies
    "d", "d#", "d#4", "d#04", "->d", "D#1", "d#0x"])


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
                     "", "TLOAD <LB0:300, S8>, [a0], ->T<256>", "garbage here",
                     "TLOAD <LB0:0128, LB1:02, U8> [a0], d#01, ->T<0256>, ->d",
                     "TADD T#01, T#002.reuse, ->U", "TSUB T#016, T#0x1, ->T", "TADD T#0x, T#1, ->U"]),
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
