"""The port contract of an operation's engine, derived from its component signature.

A design from elsewhere -- Verilog, SystemVerilog or an Amaranth Component -- that has
exactly these ports runs through every flow in place of the built-in engine (D16,
``--dut``).  Everything here is read from the signature of the built-in engine: the ports
(the names Amaranth's Verilog gives them, ``op__payload``), their directions and widths,
and every payload field with its bit offsets, type and enum values.  The docs page
(docs/contract.md) and the module skeletons of ``tilecosim contract`` are written from it,
so neither can drift from the code.

:func:`derive` makes a :class:`Contract`; :func:`skeleton` writes a module with its ports;
:meth:`Contract.differences` compares the ports a design has with the contract's.
"""

from __future__ import annotations

import enum as py_enum
from dataclasses import dataclass, field

from amaranth.hdl import Shape, ShapeCastable
from amaranth.lib import data, stream
from amaranth.lib.wiring import In

from . import ports as _ports

__all__ = ["Field", "Port", "Contract", "derive", "skeleton", "LANGS",
           "sv_name"]

LANGS = ("verilog", "systemverilog")


@dataclass(frozen=True)
class Field:
    """One field of a port's payload: bits ``[offset + width - 1 : offset]``.

    ``kind`` is ``unsigned``, ``signed`` or ``enum``; ``values`` the enum's (name, value)
    pairs; ``count`` > 1 for an array of ``count`` elements of ``width // count`` bits,
    element k at ``offset + k * width // count``."""
    name: str
    offset: int
    width: int
    kind: str = "unsigned"
    enum: str | None = None
    values: tuple = ()
    count: int = 1

    @property
    def msb(self) -> int:
        return self.offset + self.width - 1

    @property
    def element_width(self) -> int:
        return self.width // self.count


@dataclass(frozen=True)
class Port:
    """A port of the engine: ``direction`` is ``input`` or ``output`` as the engine sees it;
    ``stream`` names its stream and ``role`` is ``valid``, ``ready`` or ``payload`` (both
    None for a plain port); ``fields`` its payload's fields (none for a plain vector)."""
    name: str
    direction: str
    width: int
    stream: str | None = None
    role: str | None = None
    fields: tuple[Field, ...] = ()


@dataclass(frozen=True)
class Contract:
    """The ports of one operation's engine at one beat width (``width`` None: the operation
    has no beat width)."""
    op: str
    width: int | None
    module: str
    ports: tuple[Port, ...]
    streams: tuple[tuple[str, str], ...] = field(default=())   # (name, "input"/"output")

    def port(self, name: str) -> Port:
        return next(p for p in self.ports if p.name == name)

    def differences(self, found: dict) -> list[str]:
        """What differs between the contract and the ports a design has, ``found`` mapping
        each port name to (direction, width): one phrase per missing, extra, wrongly sized
        or wrongly directed port, in the contract's order (empty: the ports agree)."""
        out = []
        for p in self.ports:
            if p.name not in found:
                out.append(f"missing {p.direction} {p.name} [{p.width}]")
                continue
            direction, width = found[p.name]
            if direction != p.direction:
                out.append(f"{p.name} is an {direction}, the contract's is an {p.direction}")
            elif width != p.width:
                out.append(f"{p.name} is {width} bits wide, the contract's is {p.width}")
        known = {p.name for p in self.ports}
        out += [f"extra {d} {n} [{w}]" for n, (d, w) in found.items() if n not in known]
        return out


def _enum_of(shape):
    """The enum class of a field's shape, or None."""
    return shape if isinstance(shape, type) and issubclass(shape, py_enum.Enum) else None


def _fields(layout, prefix: str = "", base: int = 0) -> list[Field]:
    """The fields of a payload ``layout``: struct members (nested ones as ``a.b``), arrays
    as one field of ``count`` elements, enums with their values."""
    out = []
    for name, f in layout:
        shape, offset = f.shape, base + f.offset
        full = f"{prefix}{name}"
        if isinstance(shape, data.StructLayout):
            out += _fields(shape, full + ".", offset)
            continue
        if isinstance(shape, data.ArrayLayout):
            elem = shape.elem_shape
            e = _enum_of(elem)
            out.append(Field(full, offset, shape.size, "enum" if e else _sign(elem),
                             e.__name__ if e else None, _values(e), shape.length))
            continue
        e = _enum_of(shape)
        out.append(Field(full, offset, f.width, "enum" if e else _sign(shape),
                         e.__name__ if e else None, _values(e)))
    return out


def _sign(shape) -> str:
    s = shape.as_shape() if isinstance(shape, ShapeCastable) else Shape.cast(shape)
    return "signed" if s.signed else "unsigned"


def _values(e) -> tuple:
    return tuple((m.name, m.value) for m in e) if e else ()


def derive(component, op: str, module: str, width: int | None = None) -> Contract:
    """The contract of ``component`` (the built-in engine, never elaborated): ``clk`` and
    ``rst``, then its signature's ports in order, each payload with its fields."""
    out = [Port("clk", "input", 1), Port("rst", "input", 1)]
    names = set(_ports.streams(component))
    members = component.signature.members
    for p in _ports.ports(component):
        direction = "input" if p.is_input else "output"
        top = p.path[0]
        if top in names:
            role = p.path[-1]
            fields = ()
            if role == "payload":
                shape = members[top].signature.members["payload"].shape
                if isinstance(shape, data.Layout):
                    fields = tuple(_fields(shape))
            out.append(Port(p.name, direction, p.width, top, role, fields))
            continue
        shape = members[top].shape if len(p.path) == 1 else None
        fields = tuple(_fields(shape)) if isinstance(shape, data.Layout) else ()
        out.append(Port(p.name, direction, p.width, fields=fields))
    streams = tuple((s, "input" if members[s].flow == In else "output")
                    for s in _ports.streams(component)
                    if isinstance(members[s].signature, stream.Signature))
    return Contract(op, width, module, tuple(out), streams)


# --- skeletons -------------------------------------------------------------------------------

#: SystemVerilog keywords that payload fields are named after (``dist``, ``repeat``): a
#: field of that name is ``<name>_`` in a SystemVerilog struct
SV_KEYWORDS = frozenset("""
alias always always_comb always_ff always_latch and assert assign assume automatic before begin
bind bins binsof bit break buf bufif0 bufif1 byte case casex casez cell chandle checker class
clocking cmos config const constraint context continue cover covergroup coverpoint cross
deassign default defparam design disable dist do edge else end endcase endchecker endclass
endclocking endconfig endfunction endgenerate endgroup endinterface endmodule endpackage
endprimitive endprogram endproperty endspecify endsequence endtable endtask enum event
eventually expect export extends extern final first_match for force foreach forever fork
forkjoin function generate genvar global highz0 highz1 if iff ifnone ignore_bins
illegal_bins implements implies import incdir include initial inout input inside instance int
integer interconnect interface intersect join join_any join_none large let liblist library
local localparam logic longint macromodule matches medium modport module nand negedge
nettype new nexttime nmos nor noshowcancelled not notif0 notif1 null or output package packed
parameter pmos posedge primitive priority program property protected pull0 pull1 pulldown
pullup pulsestyle_ondetect pulsestyle_onevent pure rand randc randcase randsequence rcmos
real realtime ref reg reject_on release repeat restrict return rnmos rpmos rtran rtranif0
rtranif1 s_always s_eventually s_nexttime s_until s_until_with scalared sequence shortint
shortreal showcancelled signed small soft solve specify specparam static string strong
strong0 strong1 struct super supply0 supply1 sync_accept_on sync_reject_on table tagged task
this throughout time timeprecision timeunit tran tranif0 tranif1 tri tri0 tri1 triand trior
trireg type typedef union unique unique0 unsigned until until_with untyped use uwire var
vectored virtual void wait wait_order wand weak weak0 weak1 while wildcard wire with within
wor xnor xor""".split())


def sv_name(name: str) -> str:
    """A field's name as a (System)Verilog identifier: ``a.b`` -> ``a_b``, a keyword
    gets a trailing underscore (``repeat`` -> ``repeat_``)."""
    name = name.replace(".", "_")
    return name + "_" if name in SV_KEYWORDS else name


def v_name(port: Port, f: Field) -> str:
    """The Verilog skeleton's wire of field ``f`` of ``port``: ``<stream>_<field>``."""
    return f"{port.stream or port.name}_{f.name.replace('.', '_')}"


def _range(width: int) -> str:
    return f"[{width - 1}:0] " if width > 1 else ""


def _field_note(f: Field) -> str:
    what = f"{f.enum}: " + ", ".join(f"{n}={v}" for n, v in f.values) if f.values else f.kind
    if f.count > 1:
        what = f"{f.count} x {f.element_width} bits, element k at [{f.offset} + " \
               f"{f.element_width}*k]; " + what
    return what


def _header(c: Contract, lang: str) -> list[str]:
    at = f", W = {c.width}" if c.width else ""
    return [f"// {c.module}: a design for tilecosim's {c.op} operation{at}, with the ports of",
            "// its port contract (docs/contract.md: handshakes, reset, ordering, faults).",
            f"// Written by `tilecosim contract {c.op}"
            f"{f' --width {c.width}' if c.width else ''} --lang {lang}`.",
            "// tilecosim refuses a design whose ports differ from these in name, direction or",
            "// width.  The tie-offs at the end are placeholders for the design.",
            "// verilator lint_off UNUSEDSIGNAL",
            "// verilator lint_off UNUSEDPARAM"]


def _port_lines(c: Contract, kind, payload_type) -> list[str]:
    lines = []
    current = None
    for k, p in enumerate(c.ports):
        if p.stream != current and p.stream is not None:
            d = dict(c.streams).get(p.stream, "")
            lines.append(f"    // {p.stream}: a stream {'into' if d == 'input' else 'out of'} "
                         f"the design (valid/ready)")
        current = p.stream
        typ = payload_type(p) if p.role == "payload" and p.fields else None
        decl = f"{p.direction:<6} {typ or kind + ' ' + _range(p.width)}".rstrip()
        note = {"clk": "rising edge", "rst": "synchronous, active high"}.get(p.name, "")
        if p.role == "payload" and p.fields:
            note = f"{p.width} bits, fields below"
        comma = "," if k + 1 < len(c.ports) else ""
        lines.append(f"    {decl} {p.name}{comma}" + (f"  // {note}" if note else ""))
    return lines


def _verilog(c: Contract) -> str:
    out = _header(c, "verilog")
    out.append(f"module {c.module} (")
    out += _port_lines(c, "wire", lambda p: None)
    out.append(");")
    for p in c.ports:
        if not p.fields:
            continue
        out.append("")
        out.append(f"    // {p.name}: {p.width} bits")
        for f in p.fields:
            name = v_name(p, f)
            if p.direction == "input":
                out.append(f"    wire {_range(f.width)}{name} = {p.name}[{f.msb}:{f.offset}];"
                           f"  // {_field_note(f)}")
            else:
                out.append(f"    wire {_range(f.width)}{name};  // {_field_note(f)}")
    out.append("")
    out.append("    // placeholders: replace with the design")
    for p in c.ports:
        if p.direction != "output":
            continue
        if p.fields:
            for f in p.fields:
                out.append(f"    assign {v_name(p, f)} = {f.width}'d0;")
            out.append(f"    assign {p.name} = {_concat(p)};")
        else:
            out.append(f"    assign {p.name} = {p.width}'d0;")
    out.append("endmodule")
    return "\n".join(out) + "\n"


def _concat(p: Port) -> str:
    """The payload ``p`` from its field wires, most significant first (gaps as zeros)."""
    parts, at = [], 0
    for f in sorted(p.fields, key=lambda f: f.offset):
        if f.offset > at:
            parts.append(f"{f.offset - at}'d0")
        parts.append(v_name(p, f))
        at = f.offset + f.width
    if at < p.width:
        parts.append(f"{p.width - at}'d0")
    return "{" + ", ".join(reversed(parts)) + "}"


def _sv_type(f: Field) -> str:
    if f.count > 1:
        return f"logic [{f.count - 1}:0][{f.element_width - 1}:0]"
    signed = " signed" if f.kind == "signed" else ""
    return f"logic{signed} {_range(f.width)}".rstrip()


def _systemverilog(c: Contract) -> str:
    pkg = f"{c.module}_pkg"
    out = _header(c, "systemverilog")
    out.insert(-2, "// verilator lint_off DECLFILENAME")      # the package shares the file
    out.append(f"package {pkg};")
    enums = {}
    for p in c.ports:
        for f in p.fields:
            if f.values and f.enum not in enums:
                enums[f.enum] = f
    for name, f in enums.items():
        out.append(f"    // {name}: the codes of the field(s) of this type")
        for n, v in f.values:
            out.append(f"    localparam logic [{f.element_width - 1}:0] {name}_{n}"
                       f" = {f.element_width}'d{v};")
    for p in c.ports:
        if not p.fields:
            continue
        out.append(f"    // {p.name}: {p.width} bits; the first member is the most significant")
        out.append("    typedef struct packed {")
        at = p.width
        for f in sorted(p.fields, key=lambda f: -f.offset):
            if f.msb + 1 < at:
                out.append(f"        logic [{at - f.msb - 2}:0] unused_{at - 1};")
            out.append(f"        {_sv_type(f)} {sv_name(f.name)};  // [{f.msb}:{f.offset}] "
                       f"{_field_note(f)}")
            at = f.offset
        if at > 0:
            out.append(f"        logic [{at - 1}:0] unused_0;")
        out.append(f"    }} {p.stream or p.name}_t;")
    out.append("endpackage")
    out.append("")
    # the package is imported in the header, not named on each port: Icarus 11 cannot
    # elaborate a port of type pkg::name
    out.append(f"module {c.module} import {pkg}::*; (")
    out += _port_lines(c, "logic", lambda p: f"{p.stream or p.name}_t")
    out.append(");")
    out.append("    // placeholders: replace with the design")
    for p in c.ports:
        if p.direction == "output":
            out.append(f"    assign {p.name} = '0;")
    out.append("endmodule")
    return "\n".join(out) + "\n"


def skeleton(c: Contract, lang: str = "verilog") -> str:
    """A module with exactly the contract's ports, a comment per field, and its outputs
    tied to zero: Verilog-2005 (a wire per payload field) or SystemVerilog (a package with
    a packed struct per payload and the enum codes)."""
    if lang not in LANGS:
        raise ValueError(f"lang={lang!r}: choose one of {', '.join(LANGS)}")
    return _verilog(c) if lang == "verilog" else _systemverilog(c)
