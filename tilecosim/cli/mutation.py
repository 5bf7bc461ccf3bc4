"""``tilecosim mutation``: single-point faults in the gateware, each run against the
comparison suite (:mod:`tilecosim.flows.mutation`); needs the repository's tests."""

from __future__ import annotations

from tilecosim.flows.mutation import ROOT, run_all, select

from .common import EXIT_OK, FMT, UsageError, check_writable, int_arg


def add_parsers(sub) -> dict:
    p = sub.add_parser("mutation", help="mutation testing of the gateware against the suite",
                       formatter_class=FMT, description="""\
Apply each single-point mutant (an address off by one, a wrong pad, a dropped ready, ...;
with --generated N also a seeded sample of mutants generated from the gateware's AST) to a
copy of the gateware and run the golden-vs-HDL tests of its operation, then every
gateware test; a mutant is killed when a test fails.  Prints one line per mutant and a JSON
summary; exit 1 when a mutant survives.  Running mutants needs a source checkout (the
mutants meet the repository's test suite); --list works anywhere.

examples:
  tilecosim mutation --list
  tilecosim mutation --only addr-norm,keep-mask --json mutation.json
  tilecosim mutation --generated 60 --seed 1 --generated-only --list
  tilecosim mutation --tier test
  tilecosim mutation --tier regress --only ldt-src-frac-gap
""")
    p.add_argument("--only", metavar="ID[,ID...]", help="run only these mutants")
    p.add_argument("--jobs", type=int_arg("--jobs", 1, 256), default=2, metavar="J",
                   help="pytest-xdist workers, or regress --jobs (default 2)")
    p.add_argument("--json", metavar="FILE", help="also write the outcome as JSON")
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument("--generated", type=int_arg("--generated", 0, 100000), default=0,
                   metavar="N", help="also run N mutants generated from the gateware's AST "
                   "(operator swaps, constants +-1, dropped m.If conditions, swapped Mux "
                   "arms, slice bounds off by one; default 0)")
    p.add_argument("--seed", type=int_arg("--seed", 0, 2**32 - 1), default=1, metavar="S",
                   help="the seed that draws the generated mutants (default 1)")
    p.add_argument("--generated-only", action="store_true",
                   help="leave out the hand-written mutants")
    p.add_argument("--tier", choices=("test", "check", "regress"), default="check",
                   help="what a mutant meets: 'test' the fast tier of tests (not marked "
                   "slow), 'check' all of them, as CI, 'regress' no test but tilecosim "
                   "regress alone on its engine's operations (Amaranth, the default count, "
                   "seeds 1, 2, 3), what a design from elsewhere meets (default check)")
    return {"mutation": cmd_mutation}


def cmd_mutation(args) -> int:
    only = [s.strip() for s in args.only.split(",") if s.strip()] if args.only else None
    if args.only is not None and not only:
        raise UsageError(f"--only {args.only!r}: give mutant ids (see --list)")
    try:
        if args.generated_only and not args.generated:
            raise ValueError("--generated-only: give --generated N as well")
        todo = select(only, args.generated, args.seed, hand_written=not args.generated_only)
    except ValueError as e:
        raise UsageError(str(e)) from None
    check_writable("--json", args.json, (".json",))
    if args.list:
        for m in todo:
            print(f"{m.id:20} hdl/{m.file:24} {m.what}")
        return EXIT_OK
    if not (ROOT / "tests" / "hdl").is_dir():
        raise UsageError("running mutants needs a source checkout: the mutants meet the "
                         "repository's tests, and this tilecosim is installed without them "
                         "(--list works anywhere)")
    return run_all(todo, args.jobs, args.json, args.tier)
