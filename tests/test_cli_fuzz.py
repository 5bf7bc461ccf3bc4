"""Bad input never escapes as a traceback: random argument vectors, in-process.

Every outcome is an exit status of the contract (0, 2, 3), never an exception.
A larger budget belongs to `make fuzz` (issue 7); this one runs in `make test`.
"""

import contextlib
import io

from hypothesis import given, settings, strategies as st

from hdl.cli import main

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
                         ["--backend", "icarus"], ["--full"], ["--lcfr", "x"]])


@settings(max_examples=150, deadline=None)
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
