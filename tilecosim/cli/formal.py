"""``tilecosim formal``: the formal proofs of the gateware (:mod:`tilecosim.flows.formal`)."""

from __future__ import annotations

from tilecosim.flows.formal import ToolMissing, run_all, select, tools

from .common import EXIT_OK, FMT, UsageError, check_writable, int_arg, make_dir


def add_parsers(sub) -> dict:
    p = sub.add_parser("formal", help="prove properties of the gateware with SymbiYosys",
                       formatter_class=FMT, description="""\
Prove the gateware's properties with SymbiYosys (yowasp-sby) and the yices solver, all from
PyPI: each proof is an Amaranth harness of Assert/Assume/Cover around an unmodified unit,
checked by k-induction (holds for every depth) or by bounded model checking to a depth, and
then run in cover mode, where each Cover must be reached (the proof is not vacuous).

Prints one line per proof and a JSON summary; exit 1 when a proof fails or a cover is not
reached, with the failed property, the counterexample as a VCD file and the command that
reproduces it.  Work files go to --out/<proof>/ (check/ and cover/ are SymbiYosys's).

examples:
  tilecosim formal --list
  tilecosim formal --quick
  tilecosim formal --only transpose-64-b16,completion-order
""")
    p.add_argument("--only", metavar="NAME[,NAME...]", help="run only these proofs")
    p.add_argument("--quick", action="store_true",
                   help="only the proofs that take a minute or less (the full test suite runs "
                        "them)")
    p.add_argument("--list", action="store_true", help="list the proofs and stop")
    p.add_argument("--jobs", type=int_arg("--jobs", 1, 256), default=2, metavar="J",
                   help="proofs run at once (default 2)")
    p.add_argument("--out", metavar="DIR", default="build/formal",
                   help="work directory (default build/formal)")
    p.add_argument("--json", metavar="FILE", help="also write the outcome as JSON")
    return {"formal": cmd_formal}


def cmd_formal(args) -> int:
    only = [s.strip() for s in args.only.split(",") if s.strip()] if args.only else None
    if args.only is not None and not only:
        raise UsageError(f"--only {args.only!r}: give proof names (see --list)")
    try:
        todo = select(only, args.quick)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.list:
        for p in todo:
            how = "k-induction" if p.mode == "prove" else f"bmc {p.depth}"
            quick = "quick" if p.quick else ""
            print(f"{p.name:22} {p.unit:44} {how:12} {quick:5} {p.what}")
        return EXIT_OK
    check_writable("--json", args.json, (".json",))
    try:
        tools()                                  # before anything is created
    except ToolMissing as e:
        raise UsageError(str(e)) from None
    return run_all(todo, make_dir("--out", args.out), args.jobs, args.json)
