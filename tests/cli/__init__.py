"""Tests of the command line; :func:`in_process` runs it as a user would, in this process."""

import contextlib
import io


def in_process(argv) -> tuple[int, str, str]:
    """``tilecosim ARGV`` through :func:`tilecosim.cli.main`: (exit status, stdout, stderr);
    argparse's exits included."""
    from tilecosim.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()
