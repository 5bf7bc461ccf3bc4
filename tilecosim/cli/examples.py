"""``tilecosim examples``: the example programs and designs that ship inside the package
(:mod:`tilecosim.cli.shipped`), listed or copied out."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tilecosim.version import stamp

from .common import EXIT_OK, FMT, UsageError, make_dir, write_file
from .shipped import PREFIX, catalog, summary

__all__ = ["add_parsers"]

EXAMPLES_HELP = f"""\
The example programs (assembly for `tilecosim run`) and designs from elsewhere (Verilog and
SystemVerilog for --dut, with their declared subsets) that ship with tilecosim. Without
--out, list them with the first sentence of each; with --out DIR, copy them into DIR
(keeping designs/), refusing to overwrite a different file of the same name.

Any command that reads a program or a design takes an example by the name {PREFIX}NAME,
wherever it runs:

examples:
  tilecosim examples
  tilecosim run {PREFIX}seed_tiles.s --reg a0=0 --reg a1=512 --reg a2=1024
  tilecosim load-align --dist DIST_US_B16 --dtype b16 --addr 64 --backend icarus \\
      --dut {PREFIX}designs/load_align_unit.sv
  tilecosim examples --out my-examples
"""


def add_parsers(sub) -> dict:
    p = sub.add_parser("examples", help="list the example programs and designs, or copy "
                                        "them out", description=EXAMPLES_HELP,
                       formatter_class=FMT)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="copy every example into DIR (designs into DIR/designs)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    return {"examples": cmd_examples}


def cmd_examples(args) -> int:
    items = catalog()
    written = []
    if args.out is not None:
        out = Path(args.out)
        clash = [n for n, src in items if (out / n).exists()
                 and (not (out / n).is_file() or (out / n).read_bytes() != src.read_bytes())]
        if clash:
            raise UsageError(f"--out {args.out!r}: {clash[0]} is there and differs from the "
                             f"example: nothing copied (choose another folder)")
        make_dir("--out", args.out)
        for name, src in items:
            target = out / name
            if not target.exists():
                make_dir("--out", str(target.parent))
                write_file("--out", str(target), src.read_bytes())
            written.append(str(target))
    if args.json:
        print(json.dumps(stamp({"examples": [{"name": n, "example": PREFIX + n,
                                              "summary": summary(p)} for n, p in items],
                                "out": args.out, "written": written})))
        return EXIT_OK
    if args.out is not None:
        print(f"copied {len(items)} examples to {args.out}:")
        for name, _ in items:
            print(f"  {Path(args.out) / name}")
        return EXIT_OK
    for name, path in items:
        print(name)
        print(textwrap.fill(summary(path), 96, initial_indent="    ",
                            subsequent_indent="    "))
    print(f"\nuse one as {PREFIX}NAME (tilecosim run {PREFIX}seed_tiles.s ...), or copy them "
          f"out with --out DIR")
    return EXIT_OK
