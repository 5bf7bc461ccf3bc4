"""The ``tilecosim`` command line: one module per subcommand group, assembled here.

Exit status (the contract scripts rely on):
  0  done
  1  an HDL backend disagreed with the golden model
  2  usage error (bad option, malformed assembly, unset register, unreadable file)
  3  the instruction faulted (the fault's name and message are also on stderr)
  130, 143  stopped by SIGINT or SIGTERM (:mod:`tilecosim.cleanup`)

With ``--json`` the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import warnings

from tilecosim.cleanup import PENDING, private_tmp, stoppable, stopping
from tilecosim.model.asm import AsmError, RegisterError
from tilecosim.version import line

from .common import EXIT_OK, EXIT_USAGE, FMT, Parser, UsageError

__all__ = ["main", "build_parser"]

TOP_HELP = """\
tilecosim: tile datapaths of an AI accelerator, as a numpy golden model and as
Amaranth HDL checked against it.

examples:
  tilecosim tload 'TLOAD.NORM <LB0:100, LB1:a0, LB2:a1+10, FP16>, [a2], ->T<2KB>' \\
      --reg a0=8 --reg a1=118 --reg a2=0
  tilecosim asm 'TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>'
  tilecosim run example:seed_tiles.s --reg a0=0 --reg a1=512 --reg a2=1024
  tilecosim load-data-with-transpose --dtype int8 --repeat-times 3 --src-stride 1 \\
      --dst-gap 1 --dst-bytes 4096
  tilecosim load-align --dist DIST_US_B16 --dtype b16 --addr 64
  tilecosim store-align --dist DIST_PACK_B32 --dtype b32 --addr 64
  tilecosim contract load-align --lang systemverilog
  tilecosim examples
  tilecosim demo

Every command has --help; `tilecosim examples` lists the example programs and designs,
which any command takes by the name example:NAME.

exit status: 0 done, 1 HDL/golden mismatch (verilog --lint: a warning), 2 usage error, 3 the instruction faulted,
130 or 143 stopped by SIGINT or SIGTERM (nothing partial kept)
"""


#: every subcommand and the module (``tilecosim.cli.GROUP``) that defines it, in the order of
#: ``tilecosim --help``; a command imports its own group alone, so that a golden-model
#: command does not wait for the simulators' imports (tests/cli/test_cli.py holds this table
#: to the commands the groups define)
COMMANDS = {"tload": "tload", "asm": "tload", "run": "tload",
            "load-data-with-transpose": "load_data_with_transpose", "load-align": "load_align",
            "store-align": "store_align", "regress": "regress", "contract": "contract",
            "draw": "draw", "bench": "bench", "verilog": "verilog", "mutation": "mutation",
            "formal": "formal", "examples": "examples", "demo": "demo"}


def _group(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def _groups_for(argv: list[str] | None) -> list[str]:
    """The groups ``argv`` needs: the named command's alone, or all of them when no known
    command comes first (``--help``, ``--version``, a misspelt command: the top parser
    then lists every command)."""
    every = list(dict.fromkeys(COMMANDS.values()))
    if not argv or argv[0] not in COMMANDS:
        return every
    return [COMMANDS[argv[0]]]


def build_parser(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, dict]:
    """The parser and the command of every subcommand ``argv`` may name (all of them when
    ``argv`` is not given)."""
    top = Parser(prog="tilecosim", description=TOP_HELP, formatter_class=FMT)
    top.add_argument("--version", action="version", version=line(),
                     help="print the version (and the git description of a checkout) and exit")
    sub = top.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    commands = {}
    for group in _groups_for(argv):
        commands.update(_group(group).add_parsers(sub))
    return top, commands


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, commands = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:                            # the subcommand's error, pointing to its own help
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.cmd].error(f"unrecognized arguments: {' '.join(extra)}")
    # regress stops its own worker processes, and reports what it ran before the signal
    with stoppable(stop_processes=args.cmd != "regress") as caught:
        try:
            with private_tmp():
                return _run(args, commands)
        except KeyboardInterrupt:                    # _run has removed what it was creating
            warnings.simplefilter("ignore")          # e.g. Amaranth's unused elaboratables
            sig = caught[0] if caught else signal.SIGINT
            print(f"tilecosim {args.cmd}: stopped by {signal.Signals(sig).name}; the "
                  f"processes it started are stopped, no partial output is kept",
                  file=sys.stderr)
            return 128 + sig


def _run(args, commands) -> int:
    """The command; what it was creating is removed when it is refused (a usage error) or
    stopped (KeyboardInterrupt), and kept when it returns (:mod:`tilecosim.cleanup`), also
    with exit 2 from a regress that stopped part-way and reported what it checked."""
    done = False
    try:
        code = (_group("demo").run_demo(main) if args.cmd == "demo"
                else commands[args.cmd](args))
        if stopping() and args.cmd != "regress":     # regress reports a stopped run itself
            raise KeyboardInterrupt  # the signal's went astray (cleanup.stoppable): stop now
        done = True
        return code
    except (AsmError, UsageError, RegisterError) as e:
        print(f"tilecosim {args.cmd}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        done = True
        return EXIT_OK
    finally:
        if done:
            PENDING.keep()
        else:
            PENDING.undo()


if __name__ == "__main__":
    sys.exit(main())
