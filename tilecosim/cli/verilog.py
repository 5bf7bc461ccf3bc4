"""``tilecosim verilog``: the Verilog of every top of the registry, optionally linted."""

from __future__ import annotations

from tilecosim.flows.verilog import WAIVERS, lint, write_all
from tilecosim.model.dtypes import PROFILES

from .common import EXIT_MISMATCH, EXIT_OK, FMT, UsageError, make_dir


def add_parsers(sub) -> dict:
    v = sub.add_parser("verilog", help="write the Verilog of the HDL engines",
                       formatter_class=FMT, description="""\
Write the Verilog that Amaranth generates for each engine top (no source attributes,
stable port names: <port>__payload, <port>__valid, <port>__ready, clk, rst).

With --lint, also run `verilator --lint-only -Wall` on each file with the waivers of
the built-in waiver file (generator idioms, each commented); any other warning fails
(exit 1).

examples:
  tilecosim verilog --out build/verilog
  tilecosim verilog --lint
""")
    v.add_argument("--out", metavar="DIR", default="build/verilog",
                   help="output directory (default build/verilog)")
    v.add_argument("--lint", action="store_true",
                   help="lint every file with Verilator -Wall and the waiver file")
    v.add_argument("--profile", choices=PROFILES, default="finite",
                   help="pad values for Max/Min built into the TLOAD engine's pad ROM: largest "
                        "finite (default) or +/-inf")
    return {"verilog": cmd_verilog}


def cmd_verilog(args) -> int:
    out = make_dir("--out", args.out)
    dirty = 0
    for path, info in write_all(out, profile=args.profile):
        print(f"wrote {path}  ({info})")
        if args.lint:
            try:
                problems = lint(path, path.stem)
            except RuntimeError as e:
                raise UsageError(f"--lint: {e}") from None
            dirty += bool(problems)
            print(f"  lint: {'clean' if not problems else f'{len(problems)} warnings or errors'} "
                  f"(verilator -Wall, waivers {WAIVERS.name})")
            for line in problems[:20]:
                print(f"    {line}")
    return EXIT_MISMATCH if dirty else EXIT_OK
