"""The port contracts of the registry's operations as one docs page (docs/contract.md).

Each operation's section is written from :meth:`~tilecosim.ops.base.Operation.contract` --
the ports, directions, widths and every payload field with its bit offsets, derived from the
built-in engine's signature -- and from its ``contract_notes``; the rules every contract
shares are :data:`COMMON`.  ``tilecosim contract --doc`` prints the page, and a test holds
docs/contract.md equal to it.
"""

from __future__ import annotations

from tilecosim import ops
from tilecosim.sim.contract import Contract, Port
from tilecosim.sim.protocol import RULES

__all__ = ["contract_ops", "page", "section", "COMMON"]

COMMON = """\
# Port contracts: verify your own design

A design from elsewhere -- Verilog or SystemVerilog files on Icarus and Verilator, or an
Amaranth `wiring.Component` on all three simulators -- runs through every flow in place of
the built-in engine when it has the ports of its operation's contract (D16):

    tilecosim contract load-align --lang systemverilog > load_align_unit.sv
    tilecosim regress --ops load-align --dut load_align_unit.sv --backend verilator

Every port table below is written from the built-in engine's component signature
(`tilecosim contract --doc` prints this page; a test holds the page equal to it), so the
contract and the reference implementation cannot drift. The built-in engines are the
reference implementation of their contract.

## Rules every contract shares

**Names and widths.** The ports are the names Amaranth's Verilog back end gives the
signature's members: a stream `op` is `op__valid`, `op__ready` and `op__payload`. Every
payload is one flat vector; a field's bits are `[msb:lsb]` of it (little-endian: the
first field of a struct is the least significant). `tilecosim contract OP` writes a module
with exactly these ports: Verilog with a wire per field, or SystemVerilog with a packed
struct per payload. A design whose ports differ in name, direction or width is refused
before anything is simulated, with one line naming each difference (exit 2).

**Clock and reset.** One clock, `clk`; the design samples on its rising edge. `rst` is
synchronous and active high. On Icarus and Verilator the benches hold `rst` high for the
first two cycles with every input at 0; Amaranth's simulator starts every register at its
reset value without a pulse. After reset no `valid` the design drives may be high until it
has something to send. An X or Z on an output the bench reads fails the run.

**Streams (valid/ready).** A beat moves at a rising edge where `valid` and `ready` are
both high. Once the sender raises `valid`, it keeps `valid` high and the payload unchanged
until the beat moves. `valid` may not wait for `ready`; `ready` may depend on `valid`. The
benches keep to this on the streams they drive, and show every stream's beats in the
waveform groups. Every stream the design drives meets back-pressure (`ready` low at random,
from the run's stall seed), `done` included: in `regress`, every other batch of scenarios
runs with 20 % idle and back-pressure on every port.

**Protocol checks.** The benches check these rules on every stream the design drives, in
every cycle, whatever data lands (D17): the Python-driven bench in its stream drivers, the
batch harnesses of `regress` with a monitor in their gateware. A broken rule is a failure
of its own class, `PROTOCOL` (JSON `kind` `"protocol"`), that names the stream, the cycle
(counted from the run's first cycle), the rule, a waveform and a reproduce line:

{rules}

A memory access is a beat of a request or write stream (`req` and `write` of TLOAD, `rd`
and `wr` of LoadDataWithTranspose, StoreAlign's UB writes); LoadAlign's UB reads are not
checked (the unit may read UB in the cycle it takes an op, before its checks are known). An
instruction "moves data" when the model says it does not fault and moves at least one
byte (a LoadDataWithTranspose of repeatTimes 0 moves none: it must not touch L1 or L0). The
Python-driven bench lets a beat move in the cycle its instruction is taken by counting the
instruction next in line as taken; the batch harness is exact.

**Ordering.** One completion (or result) per instruction, in the order the instructions
were accepted. The responses of a memory port come in the order of its requests.

**What the design is free to choose.** Any latency and any throughput; any back-pressure
on its inputs (`ready` low as long as it likes); its own pipelining and the number of
instructions in flight; the order of its memory reads and writes (results are compared,
not schedules). No check assumes the built-in engine's cycle counts: the reports give the
design's cycles, and its efficiency against the fill bound, as figures.

**What it must never do.** Write outside the destination (the run fails at the write);
read outside the source buffer; write anything, or read memory, for a faulting
instruction; send more completions than instructions; stop making progress (a watchdog
ends the run, reports a hang and writes its waveform: for a design from elsewhere it
allows 100 times the built-in engine's cycles plus 10,000).

**A declared subset.** A design may implement part of a contract: some layouts, element
sizes, pads, numbers of outputs, modes, widths, or no fault checks. It declares the part in
a TOML file beside it, `<first file's stem>.supports.toml`, or names one with
`--dut-supports FILE`: each key one of its operation's capabilities below, with the values
it implements (a key left out: all of them; `faults = false`: it checks no fault). `regress`
then draws only scenarios inside the subset and reports the coverage bins no such scenario
can hit as not applicable, apart from the uncovered ones.
`examples/designs/tload_engine_bytewise.supports.toml` is one:

    # what tload_engine_bytewise.v implements of the tload contract
    layouts = ["NORM"]                  # NORM, ND2NZ, ND2ZN, DN2NZ, DN2ZN
    pads = ["Zero", "Null"]
    outputs = [1]                       # 1..8
    widths = [32]                       # 32, 64, 128
    faults = false                      # it checks no fault: only legal scenarios are drawn

**Reset in mid-instruction.** `regress`'s batch harnesses reset the design only before the
first run. The TLOAD bench of the test suite also resets the engine in the middle of an
instruction (its notes below), and the tile-system bench resets the system for two cycles
between programs; after a reset the design must behave as if nothing came before.

**Faults.** A faulting instruction completes with its D8 code (docs/design.md D8) in the
order the model checks the rules, and changes nothing:

| code | fault |
|---:|---|
{faults}
"""


def contract_ops() -> list:
    """The operations with a port contract, in the registry's order."""
    return [op for op in ops.REGISTRY if op.contract_module is not None]


def _width(values: dict) -> str:
    """A width or offset over the beat widths: one number, or ``a x W`` when linear."""
    vals = list(values.values())
    if len(set(vals)) == 1:
        return str(vals[0])
    ws = list(values)
    slope = (vals[1] - vals[0]) / (ws[1] - ws[0])
    base = vals[0] - slope * ws[0]
    if slope.is_integer() and all(v == slope * w + base for w, v in values.items()):
        a, b = int(slope), int(base)
        term = "W" if a == 1 else f"{a}W"
        return term + (f" + {b}" if b > 0 else f" - {-b}" if b < 0 else "")
    return " / ".join(map(str, vals))


def _type(f) -> str:
    what = f.enum or f.kind
    if f.count > 1:
        what = f"{f.count} x {what}"
    return what


def _values(f) -> str:
    return ", ".join(f"{n} = {v}" for n, v in f.values)


def _port_rows(at: dict[int | None, Contract]) -> list[str]:
    first = next(iter(at.values()))
    rows = ["| port | direction | bits | what |", "|---|---|---:|---|"]
    for p in first.ports:
        widths = {w: c.port(p.name).width for w, c in at.items()}
        what = {"clk": "clock (rising edge)", "rst": "synchronous reset, active high"}.get(
            p.name, "a plain vector (notes above)")
        if p.stream:
            what = f"stream `{p.stream}`: {p.role}"
        rows.append(f"| `{p.name}` | {p.direction} | {_width(widths)} | {what} |")
    return rows


def _field_rows(at: dict, p: Port) -> list[str]:
    rows = [f"`{p.name}` ({_width({w: c.port(p.name).width for w, c in at.items()})} bits):",
            "", "| field | bits | lsb | type | values |", "|---|---:|---:|---|---|"]
    for f in p.fields:
        width = _width({w: c.port(p.name).fields[[g.name for g in c.port(p.name).fields]
                                                   .index(f.name)].width
                        for w, c in at.items()})
        lsb = _width({w: next(g for g in c.port(p.name).fields if g.name == f.name).offset
                      for w, c in at.items()})
        rows.append(f"| `{f.name}` | {width} | {lsb} | {_type(f)} | {_values(f)} |")
    return rows


def _fault_rows(op) -> list[str]:
    """The operation's fault table, in the model's checking order (its ``fault_rules``)."""
    if not op.fault_rules:
        return []
    rows = [f"Faults, in the order the model checks them: the first rule broken is the "
            f"completion's code, and the instruction changes nothing. `regress` runs with "
            f"{op.regress_sizes}; the edge bins it draws first (D17) sit on both sides of "
            f"the bounds, and `tilecosim {op.name} --json` gives the model's verdict on any "
            f"one instruction.", "",
            "| # | fault | faults when | checked when the count is 0 |", "|---:|---|---|---|"]
    for k, r in enumerate(op.fault_rules, 1):
        rows.append(f"| {k} | {r.fault} | {r.when} | {r.at_zero} |")
    return rows + [""]


def section(op) -> str:
    """The docs section of ``op``'s contract, at every beat width it is built at."""
    widths = op.widths or (None,)
    at = {w: (op.at_width(w) if w else op).contract() for w in widths}
    first = next(iter(at.values()))
    head = f"## {op.seed_name}: `tilecosim contract {op.name}`"
    out = [head, "",
           f"Module `{first.module}` (the default of `--dut-top` is the first file's stem). "
           + (f"Beat width W = {', '.join(map(str, widths))} bytes (`--width`); the widths "
              f"below are in bytes of W where they depend on it." if widths != (None,) else
              "It has no beat width: it is the same at every `--width`."), ""]
    out += op.contract_notes.rstrip().splitlines() + [""]
    out += ["Capabilities a design may declare a subset of (`--dut-supports`):", ""]
    out += [f"- `{k}`: " + (", ".join(f"`{v}`" for v in vals) if k != "faults" else
                            "`true` (it checks the faults) or `false`")
            for k, vals in op.capabilities.items()] + [""]
    out += _fault_rows(op)
    out += _port_rows(at) + [""]
    for p in first.ports:
        if p.fields:
            out += _field_rows(at, p) + [""]
    return "\n".join(out)


def page() -> str:
    """docs/contract.md."""
    # the fault codes are the payload enum's own (every contract's completion carries them)
    fault = next(f for op in contract_ops() for p in op.contract().ports for f in p.fields
                 if f.enum == "FaultCode")
    text = COMMON.replace("{faults}", "\n".join(f"| {v} | {n} |" for n, v in fault.values))
    text = text.replace("{rules}", "\n".join(f"{int(r)}. {what[0].upper()}{what[1:]}."
                                              for r, what in RULES.items()))
    return text + "\n" + "\n".join(section(op) for op in contract_ops())
