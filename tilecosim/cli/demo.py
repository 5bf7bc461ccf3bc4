"""``make demo`` / ``tilecosim demo``: a short showcase of the golden model.

Every step is a real ``tilecosim`` command, printed before its output, so the
demo doubles as a tour of the command line.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import signal
import sys
import tempfile
from pathlib import Path

from .common import FMT

SEED_PROGRAM = """\
; seed 002's tile-register example, with whole TLOADs written out
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a0], ->T<512>   ; T#1, later T#3
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a1], ->T<512>   ; later T#2
TLOAD.NORM <LB0:16, LB1:16, FP16>, [a2], ->T<512>   ; T#1
TADD T#2.reuse, T#3, ->U     ; keeps T#2, releases T#3
TSUB T#2, T#1, ->U           ; T#2 may be read again
TADD T#3, T#1, ->U           ; T#3 was released: TileReleased
"""

STEPS = [
    ("The seed's first assembly example: NORM, FP16, Null padding (Col = 128 -> Row = 8).",
     ["tload", "TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>",
      "--reg", "a0=6", "--reg", "a1=118", "--reg", "a2=0"]),
    ("Its block template (seed's second example, ND2NZ with Zero padding).",
     ["asm", "TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>",
      "--reg", "a0=8", "--reg", "a1=118", "--reg", "a2=0"]),
    ("ND2NZ, S8, Zero padding: 20x24 loaded into a 32x32 NZ tile (fractals of 16x32).",
     ["tload", "TLOAD.ND2NZ <LB0:24, LB1:20, LB2:32, S8, Zero>, [a0], ->T<1KB>",
      "--reg", "a0=0", "--storage", "40"]),
    ("DN2ZN, FP32, Max padding, two outputs: the DN source splits into row bands of 16.",
     ["tload", "TLOAD.DN2ZN <LB0:12, LB1:24, LB2:16, FP32, Max>, [a0], ->T<1KB>, U<1KB>",
      "--reg", "a0=0", "--storage", "10"]),
    ("ND2ZN, BF16, Min padding, strided source (RegSrc1 = 64 B per row).",
     ["tload", "TLOAD.ND2ZN <LB0:10, LB1:14, LB2:16, BF16, Min>, [a0, a1], ->T<512>",
      "--reg", "a0=0", "--reg", "a1=64"]),
    ("The same ND2NZ TLOAD on the Amaranth HDL engine, compared with the golden model, with "
     "random back-pressure on every port.",
     ["tload", "TLOAD.ND2NZ <LB0:24, LB1:20, LB2:32, S8, Zero>, [a0], ->T<1KB>",
      "--reg", "a0=0", "--backend", "amaranth", "--stall", "0.2"]),
    ("A faulting TLOAD: ValidCol > Col is an illegal parameter (exit status 3).",
     ["tload", "TLOAD.NORM <LB0:40, LB2:32, FP16>, [a0], ->T<512>", "--reg", "a0=0"]),
]


def add_parsers(sub) -> dict:
    sub.add_parser("demo", help="a short showcase of TLOAD layouts, padding and tile registers",
                   formatter_class=FMT, description="""\
A short showcase (a few seconds): the seed's TLOAD examples on the golden model (layouts,
padding, several outputs, a strided source), one TLOAD on the Amaranth HDL engine with
random back-pressure, a faulting TLOAD, LoadDataWithTranspose and LoadAlign on their
built-in ramps, and the seed's tile-register program.  Every step is a real tilecosim
command, printed before its output, so the demo is also a tour of the command line.
Exit 0 when every step behaved as expected (two of them fault on purpose: exit 3).""")
    return {"demo": None}            # run by the command line's main, which it calls back


def _run(main, argv) -> tuple[int, str]:
    print("$ tilecosim " + " ".join(shlex.quote(a) for a in argv))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        raise KeyboardInterrupt                     # a signal stopped the step: stop the demo
    sys.stdout.write(out.getvalue())
    for line in err.getvalue().splitlines():        # a fault's line repeats the printout's
        if re.sub(r"^line \d+: ", "", line) not in out.getvalue():
            print("stderr: " + line)
    print(f"[exit {code}]\n")
    return code, err.getvalue()


def run_demo(main) -> int:
    """Every step through ``main`` (the command line's), so the demo runs what users type."""
    expected = [0, 0, 0, 0, 0, 0, 3]
    got, errs = [], []
    for title, argv in STEPS:
        print(f"## {title}")
        code, err = _run(main, argv)
        got.append(code)
        errs.append(err)
    print("## LoadDataWithTranspose, half: three 16x16 squares transposed into L0A "
          "(seed 001, repeatTimes 3, srcStride 1, dstGap 0); L1 is the built-in ramp, in which "
          "element k holds k.")
    code, err = _run(main, ["load-data-with-transpose", "--dtype", "half", "--repeat-times", "3",
                            "--src-stride", "1", "--dst-bytes", "2048"])
    got.append(code)
    expected.append(0)
    print("## LoadAlign DIST_UNPACK_B16: 64 b16 elements, each followed by a zero element.")
    code, err = _run(main, ["load-align", "--dist", "DIST_UNPACK_B16", "--dtype", "b16",
                            "--addr", "0"])
    got.append(code)
    expected.append(0)
    errs += ["", ""]
    print("## The seed's tile-register example: T#2.reuse survives the TADD, T#3 does not.")
    expected.append(3)
    with tempfile.TemporaryDirectory() as d:
        prog = Path(d) / "seed_tiles.s"
        prog.write_text(SEED_PROGRAM)
        print(prog.read_text())
        code, err = _run(main, ["run", str(prog), "--reg", "a0=0", "--reg", "a1=512",
                                "--reg", "a2=1024"])
        got.append(code)
        errs.append(err)
    if got != expected or "line 7: TileReleased" not in errs[-1] \
            or "IllegalParameter" not in errs[len(STEPS) - 1]:
        print(f"demo: unexpected outcome: exit statuses {got} (expected {expected})")
        return 1
    print("demo: all steps behaved as expected")
    return 0

