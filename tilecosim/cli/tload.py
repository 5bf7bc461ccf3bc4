"""The golden-model commands of TLOAD: ``tload`` (one TLOAD, on the model or an HDL
backend), ``asm`` (its block template) and ``run`` (a program on the Machine)."""

from __future__ import annotations

import sys

import numpy as np

from tilecosim import ops
from tilecosim.model.asm import (RegisterError, TLoadInsn, parse_program, parse_tload,
                                 parse_transfer, records_text)
from tilecosim.model.display import format_tile
from tilecosim.model.faults import Fault
from tilecosim.model.machine import Machine
from tilecosim.model.tload import LCFR, plan
from tilecosim.model.vector import ARITH
from tilecosim.sim.benches.program import (DEFAULT_LCFR as RTL_LCFR, ProgramConfig, golden_steps,
                                           run_program)
from tilecosim.sim.benches.tload import SimConfig, SimResult, run_and_compare

from .common import (BACKENDS, EXIT_FAULT, EXIT_OK, FMT, UsageError, add_dut_options,
                     add_hdl_options, add_machine, design_of,
                     add_regs, backend_errors, check_memory_args, check_waves, check_writable,
                     emit_json, example_path, exit_status, int_arg, memory_of, parse_regs,
                     quote_argv, read_file,
                     report_fault, result_json, seed_arg, usage_from, wave_lines,
                     with_mismatch_waves, write_npz)

#: the largest register slot of the RTL tile system the CLI builds (64 slots of it)
RTL_MAX_SLOT = 16384

TLOAD_HELP = """\
Run one TLOAD (seed syntax) and print the output tiles.

examples:
  tilecosim tload 'TLOAD.ND2NZ <LB0:20, LB1:10, LB2:32, FP16, Zero>, [a0], ->T<1KB>' --reg a0=0
  tilecosim tload 'TLOAD.DN2ZN <LB0:40, LB1:24, LB2:64, S8, Max>, [a0], ->T<2KB>, U<2KB>' \\
      --reg a0=0x100 --mem-seed 7 --out tiles.npz --json

memory: --mem FILE gives the raw bytes of global memory (address 0 = first byte),
--mem-seed N random bytes from a seed; without either, global memory is a ramp: the
element at address k*esize holds the value k (wrapping).  A read
outside memory is an OutOfBounds fault.

printout: loaded elements as numbers, padded ones as '*' (the header gives the pad
value), elements left undefined by Null padding as '.'.  --out writes tile0.. (uint8 images in their layout) and
valid0.. (bool per byte, False only for undefined bytes).
"""


def add_parsers(sub) -> dict:
    t = sub.add_parser("tload", help="run one TLOAD and print, save or compare its tiles",
                       description=TLOAD_HELP, formatter_class=FMT)
    t.add_argument("asm", metavar="ASM", help="the TLOAD in the seed's assembly syntax")
    add_regs(t)
    add_machine(t)
    t.add_argument("--backend", choices=BACKENDS, default="golden",
                   help="golden (numpy model), or the HDL engine compared with the model on "
                        "amaranth (its simulator), icarus or verilator (through cocotb)")
    t.add_argument("--mem-seed", type=seed_arg("--mem-seed"), default=None, metavar="N",
                   help="global memory of --mem-size random bytes from seed N (instead of the ramp)")
    add_hdl_options(t)
    add_dut_options(t)
    t.add_argument("--model", choices=("fast", "reference"), default="fast",
                   help="golden implementation: vectorized (default) or the seed's loops")
    t.add_argument("--out", metavar="FILE.npz", help="write tile0.. and valid0.. arrays")
    t.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    t.add_argument("--full", action="store_true", help="print whole matrices (no eliding)")
    t.add_argument("--storage", type=int_arg("--storage", 0), default=0, metavar="N",
                   help="also list the (row,col) of the first N elements in storage order")

    a = sub.add_parser("asm", help="assemble a TLOAD or TSTORE: block template and decoded "
                                   "fields", formatter_class=FMT, description="""\
Assemble one TLOAD or TSTORE into its block template (BSTART.TMA, B.DATR, B.DIM, B.IOT,
B.IOR, B.IOD) and print the decoded fields; with --reg, also the evaluated values.

examples:
  tilecosim asm 'TLOAD.ND2NZ <LB0:100, LB1:a0, LB2:a1+10, FP16, Zero>, [a2, a0], ->T<2KB>' \\
      --reg a0=8 --reg a1=118 --reg a2=0
  tilecosim asm 'TSTORE.ND2ZN <LB0:20, LB1:10, LB2:32, FP16> T#1.reuse, [a0, a1], ->d'
""")
    a.add_argument("asm", metavar="ASM", help="the TLOAD or TSTORE in assembly syntax")
    add_regs(a)
    a.add_argument("--json", action="store_true", help="print one JSON object as the last line")

    r = sub.add_parser("run", help="run a program of TLOAD/TSTORE/TADD/TSUB lines on the "
                                   "machine or on the RTL tile system",
                       formatter_class=FMT, description="""\
Run a program (one instruction per line; ';' or '#' comments) on the golden machine:
global memory, scalar registers and the tile register file.  Prints each step and the
live tile registers at the end.  A fault stops the program (exit 3); the faulting
instruction changes nothing.  A TSTORE writes its footprint to global memory; --out saves
the final memory and live registers.

With --backend amaranth, icarus or verilator the program also runs on the RTL tile system
(TileRegisterFile + TLOAD engine + TSTORE engine + integer TADD/TSUB), its instructions
entering as block records, and after every instruction the RTL is compared with the
machine: the fault (name and code), the live registers of every queue by relative name,
every defined byte of every live tile, and global memory.  A mismatch names the line, the register, the row, column and byte (exit
1).  The RTL has integer arithmetic only: the machine then runs with --arith integer
(floating-point TADD/TSUB are IllegalInstruction in both), and its registers are slots of
the LCFR maximum (default --lcfr 256:4096 on the RTL, at most 16384).

example program (the seed's tile-register example):
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a0], ->T<512>
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a1], ->T<512>
  TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a2], ->T<512>
  TADD T#2.reuse, T#3, ->U
  TSUB T#2, T#1, ->U
run it (the program reads a0, a1 and a2: give each a value with --reg):
  tilecosim run example:seed_tiles.s --reg a0=0 --reg a1=512 --reg a2=1024
  tilecosim run example:seed_tiles_int.s --reg a0=0 --reg a1=512 --reg a2=1024 \\
      --backend verilator --json
""")
    r.add_argument("program", metavar="PROGRAM",
                   help="program file, example:NAME (tilecosim examples), or - for standard "
                        "input")
    add_regs(r)
    add_machine(r, lcfr_default=None)
    r.add_argument("--mem-seed", type=seed_arg("--mem-seed"), default=None, metavar="N",
                   help="global memory of --mem-size random bytes from seed N (instead of the ramp)")
    r.add_argument("--backend", choices=BACKENDS, default="golden",
                   help="golden (the machine alone, default), or the RTL tile system compared "
                        "with it after every instruction on amaranth, icarus or verilator")
    r.add_argument("--arith", choices=ARITH, default=None,
                   help="TADD/TSUB arithmetic of the machine: full (integer and floating "
                        "point; the default on golden) or integer (the RTL's; the default, "
                        "and the only choice, with an HDL backend)")
    add_hdl_options(r, transpose=False)
    r.add_argument("--out", metavar="FILE.npz",
                   help="write the final state: 'memory' (global memory, uint8) and "
                        "'memory.valid' (its defined bytes: a TSTORE of Null-padded tile "
                        "bytes leaves undefined ones), and for each live register its image "
                        "under its name ('T#1') and its defined bytes under the name and "
                        "'.valid' ('T#1.valid')")
    r.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    r.add_argument("--full", action="store_true", help="print whole matrices")

    return {"tload": cmd_tload, "asm": cmd_asm, "run": cmd_run}


def cmd_tload(args) -> int:
    check_waves(args)
    args.design = design_of(args, ops.get("tload").at_width(args.width), args.backend)
    if not args.design.builtin and args.profile != "finite":
        raise UsageError(f"--profile {args.profile}: the tload contract's Max/Min pad values "
                         f"are the largest finite ones (D5); a design from elsewhere runs "
                         f"with --profile finite")
    check_writable("--out", args.out, (".npz",), "a NumPy archive of tile0.., valid0..")
    regs = parse_regs(args.reg)
    insn = parse_tload(args.asm)
    machine = Machine(memory_of(args, insn.dtype), regs, args.profile, args.lcfr, impl=args.model)
    params = insn.resolve(regs)
    fault, step = None, None
    try:
        step = machine.execute(insn)
    except Fault as f:
        fault = f
    hdl = (with_mismatch_waves(args, "tload", lambda: _run_hdl(args, params, machine.memory))
           if args.backend != "golden" else None)
    extra = {"insn": insn.text()}
    if hdl:
        extra.update(hdl["json"])
    if fault is not None:
        return report_fault(args, fault, result_json("tload", args.backend, [], [], fault,
                                                     **extra), hdl, f"{insn.text()}\n")
    if args.out:
        arrays = {}
        for k, img in enumerate(step.tiles):
            arrays[f"tile{k}"] = np.asarray(img.data, dtype=np.uint8)
            arrays[f"valid{k}"] = np.asarray(img.valid, dtype=bool)
        write_npz("--out", args.out, arrays)
    if args.json:
        emit_json(result_json("tload", args.backend, step.tiles, step.names, **extra))
    else:
        print(insn.text())
        for k, (img, name) in enumerate(zip(step.tiles, step.names)):
            print(format_tile(img, f"{name} (DstTile{k})", step.params.pad, full=args.full,
                              storage=args.storage))
        if hdl:
            print(hdl["summary"])
        if args.out:
            print(f"wrote {args.out}: " + ", ".join(f"tile{k}/valid{k}" for k in range(len(step.tiles))))
    return exit_status(hdl)

def _run_hdl(args, params, memory) -> dict:
    """Run the TLOAD on the HDL engine (Amaranth's simulator, or Icarus/Verilator through
    cocotb) and compare it with the golden model."""
    p_ok = 1 - args.stall
    try:
        cfg = SimConfig(width=args.width, latency=args.latency, seed=args.seed, p_req_ready=p_ok,
                        p_resp_valid=p_ok, p_write_ready=p_ok, p_instr_valid=p_ok,
                        profile=args.profile, lcfr=(args.lcfr.min_size, args.lcfr.max_size),
                        transpose=args.transpose, vcd=args.vcd, backend=args.backend,
                        waves=args.waves, design=args.design)
        res, code, mism, problems = run_and_compare(params, memory, cfg)
    except AssertionError as e:                  # the bench caught the engine misbehaving
        res, code, mism, problems = _bench_failed(params, memory, cfg, e)
    except backend_errors() as e:
        raise usage_from(args, e) from None
    total = sum(s for _, s in params.outputs) if code is None else 0
    ideal = total // args.width if total else None
    match = not mism and not problems
    lines = [f"{args.backend} (W={args.width}): " + ("match" if match else "MISMATCH")]
    lines += wave_lines(args, "tload_engine")
    if res.cycles is not None and ideal:
        lines[0] += (f", {res.cycles} cycles, ideal {ideal}, efficiency {ideal / res.cycles:.3f}, "
                     f"first write {res.first_write_cycle - res.accept_cycles[0]} cycles after accept")
    lines += [f"  {p}" for p in problems] + [f"  {mm}" for mm in mism]
    if not match:
        lines.append("  reproduce: " + " ".join(quote_argv(sys.argv)))
    return {"match": match, "summary": "\n".join(lines),
            "json": {"cycles": res.cycles, "ideal_cycles": ideal, "match": match,
                     "hdl_fault": res.faults[0] if res.faults else None,
                     "mismatches": [str(x) for x in mism] + problems}}

def _bench_failed(params, memory, cfg, e):
    """A bench process raised (e.g. a request outside memory): a mismatch, with the model's
    fault code."""
    code = None
    try:
        plan(params, memory.size, LCFR(*cfg.lcfr))
    except Fault as f:
        code = f.code
    return SimResult(), code, [], [str(e)]

def cmd_asm(args) -> int:
    regs = parse_regs(args.reg)
    insn = parse_transfer(args.asm)
    records = insn.records()
    values, unset = None, None
    try:
        values = insn.resolve(regs).to_json()
    except RegisterError as e:
        unset = str(e)
    if args.json:
        emit_json({"insn": insn.text(), "block": [r.text() for r in records],
                   "fields": insn.fields(), "values": values})
        return EXIT_OK
    print(insn.text())
    print("\nblock template:")
    print("\n".join("  " + line for line in records_text(records).splitlines()))
    print("\ndecoded fields:")
    for k, v in insn.fields().items():
        print(f"  {k:9} {v}")
    if values:
        print("\nvalues:")
        for k, v in values.items():
            print(f"  {k:9} {v}")
    elif unset:
        print(f"\nvalues: not evaluated, {unset}.\n  (The block template and the fields above "
              f"do not need register values.)")
    return EXIT_OK

#: the longest program file read, in bytes
MAX_PROGRAM = 16 << 20


def cmd_run(args) -> int:
    check_waves(args)
    hdl = args.backend != "golden"
    arith = args.arith or ("integer" if hdl else "full")
    if hdl and arith != "integer":
        raise UsageError(f"--arith {arith}: the RTL tile system has integer arithmetic only "
                         f"(--arith integer, the default with --backend {args.backend})")
    lcfr = args.lcfr or (LCFR(*RTL_LCFR) if hdl else LCFR())
    if hdl and lcfr.max_size > RTL_MAX_SLOT:
        raise UsageError(f"--lcfr {lcfr.min_size}:{lcfr.max_size}: the RTL keeps 64 registers "
                         f"of MAX bytes each; MAX at most {RTL_MAX_SLOT} on the simulators")
    check_writable("--out", args.out, (".npz",), "a NumPy archive of memory and the live "
                   "registers")
    regs = parse_regs(args.reg)
    check_memory_args(args)                  # before standard input is read
    if args.program == "-":
        data = sys.stdin.buffer.read(MAX_PROGRAM + 1) if hasattr(sys.stdin, "buffer") \
            else sys.stdin.read(MAX_PROGRAM + 1).encode()
        if len(data) > MAX_PROGRAM:
            raise UsageError(f"PROGRAM '-': more than {MAX_PROGRAM} bytes on standard input")
    else:
        data = read_file("PROGRAM", example_path("PROGRAM", args.program), MAX_PROGRAM,
                         "an assembly file (TLOAD, TSTORE, TADD, TSUB lines)").tobytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"PROGRAM {args.program!r}: not UTF-8 text (byte {e.start}: "
                         f"{data[e.start]:#04x})") from None
    program = parse_program(text)
    first = next((i for _, i in program if isinstance(i, TLoadInsn)), None)
    memory = memory_of(args, first.dtype if first else "U8")
    machines = []
    steps = golden_steps(program, regs, memory, args.profile,
                         (lcfr.min_size, lcfr.max_size), arith, records=hdl,
                         machine_out=machines)
    fault = steps[-1].fault if steps else None
    result = (with_mismatch_waves(args, "run", lambda: _run_program_hdl(args, steps, memory, lcfr))
              if hdl else None)
    if args.out:
        _write_state(args.out, machines[0])
    if args.json:
        emit_json({"op": "run", "backend": args.backend,
                   "cycles": result["cycles"] if result else None,
                   "match": result["match"] if result else None,
                   "fault": fault, "arith": arith,
                   "steps": [{"line": s.line, "insn": s.text, "names": s.names,
                              "stored_bytes": None if s.stored is None else len(s.stored[0]),
                              "fault": s.fault} for s in steps],
                   "out": args.out,
                   "mismatches": result["problems"] if result else [],
                   "waveform": result["waveform"] if result else None})
    else:
        for s in steps:
            if s.fault:
                print(f"line {s.line}: {s.text}\n  fault: {s.fault['name']}: "
                      f"{s.fault['message']}\n  (nothing changed; program stopped)")
            elif s.stored is not None:
                print(f"line {s.line}: {s.text}  ->  {_stored_text(s.stored[0])}")
            else:
                print(f"line {s.line}: {s.text}  ->  {', '.join(s.names)}")
        _print_live(steps[-1].live if steps else [], args.full)
        if result:
            print(result["summary"])
        if args.out:
            print(f"wrote {args.out}: memory and {len(steps[-1].live) if steps else 0} live "
                  f"register(s)")
    if fault:
        print(f"line {steps[-1].line}: {fault['name']}: {fault['message']}", file=sys.stderr)
    return exit_status(result, EXIT_FAULT if fault else EXIT_OK)


def _stored_text(addrs) -> str:
    """``wrote 320 bytes in 0x800..0x9ff`` (or ``wrote nothing``)."""
    if not len(addrs):
        return "wrote nothing (an empty footprint)"
    return f"wrote {len(addrs)} bytes in {int(addrs[0]):#x}..{int(addrs[-1]):#x}"


def _write_state(path: str, machine) -> None:
    """--out of ``run``: the final global memory and every live register (the state after
    the last instruction that completed; a faulting one changed nothing)."""
    arrays = {"memory": machine.memory, "memory.valid": machine.defined}
    for name, img in machine.tiles.live():
        arrays[name] = np.asarray(img.data, dtype=np.uint8)
        arrays[f"{name}.valid"] = np.asarray(img.valid, dtype=bool)
    write_npz("--out", path, arrays)


def _run_program_hdl(args, steps, memory, lcfr) -> dict:
    """The program on the RTL tile system, compared with the machine after every
    instruction."""
    ok = 1 - args.stall
    cfg = ProgramConfig(width=args.width, latency=args.latency, seed=args.seed,
                        p_req_ready=ok, p_resp_valid=ok, p_record_valid=ok,
                        profile=args.profile, lcfr=(lcfr.min_size, lcfr.max_size),
                        backend=args.backend, vcd=args.vcd, waves=args.waves)
    try:
        res, problems = run_program(steps, memory, cfg)
    except AssertionError as e:                   # the bench caught the design misbehaving
        res, problems = None, [str(e)]
    except backend_errors() as e:
        raise usage_from(args, e) from None
    match = not problems
    cycles = res.cycles if res else None
    head = f"{args.backend} (W={args.width}): " + ("match" if match else "MISMATCH")
    if res:
        head += (f", {res.cycles} cycles" if res.cycles is not None else ", no tile written")
        head += (f"; checked after each of {len(res.faults)} instructions (fault, live "
                 f"registers, every defined byte, global memory)")
    lines = [head] + wave_lines(args, "tile_system")
    lines += [f"  {p}" for p in problems[:40]]
    if len(problems) > 40:
        lines.append(f"  ... {len(problems) - 40} more")
    if not match:
        lines.append("  reproduce: " + " ".join(quote_argv(sys.argv)))
    return {"match": match, "cycles": cycles, "problems": problems,
            "summary": "\n".join(lines)}


def _print_live(live, full):
    print(f"\nlive tile registers ({len(live)}):")
    for name, img in live:
        print(format_tile(img, name, full=full))
