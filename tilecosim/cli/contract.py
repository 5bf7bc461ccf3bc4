"""``tilecosim contract``: the port contract of an operation's engine (D16), as a module
skeleton to start a design from, or as the docs page."""

from __future__ import annotations

import sys

from tilecosim import ops
from tilecosim.flows.contract import contract_ops, page
from tilecosim.sim.contract import LANGS, skeleton

from .common import EXIT_OK, FMT, UsageError, check_writable, write_file


def add_parsers(sub) -> dict:
    names = [op.name for op in contract_ops()]
    p = sub.add_parser("contract", help="the port contract of an engine, as a module skeleton",
                       formatter_class=FMT, description=f"""\
Print a Verilog or SystemVerilog module with exactly the ports of OP's port contract at
beat width W, a comment per payload field, and its outputs tied to zero: the start of a
design that `--dut` runs through every flow in place of the built-in engine.  The
contract (ports, fields and their bits, handshakes, reset, ordering, faults) is derived
from the built-in engine's signature; --doc prints it in full.

operations: {', '.join(names)}

examples:
  tilecosim contract load-align --lang systemverilog --out load_align_unit.sv
  tilecosim contract tload --width 64
  tilecosim contract --doc
""")
    p.add_argument("op", nargs="?", metavar="OP", help="the operation: " + ", ".join(names))
    p.add_argument("--width", type=int, choices=(32, 64, 128), default=32,
                   help="beat width W in bytes (default 32; the align units have none)")
    p.add_argument("--lang", choices=LANGS, default="verilog",
                   help="verilog (a wire per field; default) or systemverilog (a packed "
                        "struct per payload)")
    p.add_argument("--module", metavar="NAME",
                   help="the module's name (default the contract's, e.g. load_align_unit)")
    p.add_argument("--out", metavar="FILE", help="write the skeleton here instead of stdout")
    p.add_argument("--doc", action="store_true",
                   help="print the contract page of every operation (Markdown) instead")
    return {"contract": cmd_contract}


def cmd_contract(args) -> int:
    names = [op.name for op in contract_ops()]
    if args.doc:
        if args.op or args.out or args.module:
            raise UsageError("--doc prints the page of every operation: give no OP, --out "
                             "or --module with it")
        sys.stdout.write(page())
        return EXIT_OK
    if args.op is None:
        raise UsageError(f"name an operation: one of {', '.join(names)} (or --doc)")
    if args.op not in names:
        raise UsageError(f"OP {args.op!r}: operations with a port contract are "
                         f"{', '.join(names)}")
    if args.module is not None and not (args.module.isidentifier() and args.module.isascii()):
        raise UsageError(f"--module {args.module!r}: not a Verilog module name")
    suffix = (".v", ".sv", ".vh", ".svh")
    check_writable("--out", args.out, suffix, "a Verilog or SystemVerilog source")
    op = ops.get(args.op)
    if op.widths:
        op = op.at_width(args.width)
    contract = op.contract()
    if args.module:
        contract = type(contract)(**{**contract.__dict__, "module": args.module})
    text = skeleton(contract, args.lang)
    if args.out:
        write_file("--out", args.out, lambda f: f.write(text.encode()))
        print(f"wrote {args.out}  (module {contract.module}, {len(contract.ports)} ports)")
    else:
        sys.stdout.write(text)
    return EXIT_OK
