"""Port lists of a Component, derived from its signature (never typed by hand).

Amaranth's Verilog back end names a port by joining the member path with ``__``
(``instr__payload``, ``req__ready``, ``mem_size``); these helpers walk
``component.signature.members`` the same way, so a renamed or added port reaches the
benches, the traces and the wave groups without an edit anywhere else.
"""

from dataclasses import dataclass

from amaranth.hdl import Shape
from amaranth.lib import stream
from amaranth.lib.wiring import In

__all__ = ["Port", "probe", "ports", "inputs", "streams", "wave_groups", "traces"]


def probe(make):
    """``make()``, an instance of a design made only to read its signature: it is never
    elaborated, so it is marked used (Amaranth would warn that it was created but never
    used)."""
    component = make()
    component._MustUse__used = True
    return component


@dataclass(frozen=True)
class Port:
    name: str           # the Verilog port name
    path: tuple         # the member path in the signature
    is_input: bool      # driven by the bench
    width: int


def ports(component) -> list[Port]:
    """Every port of ``component`` in signature order."""
    out = []
    for path, member in component.signature.members.flatten():
        if member.is_port:
            out.append(Port("__".join(map(str, path)), path, member.flow == In,
                            Shape.cast(member.shape).width))
    return out


def inputs(component) -> tuple[str, ...]:
    """The ports the bench drives (Verilog inputs start as X on the 4-state simulators)."""
    return tuple(p.name for p in ports(component) if p.is_input)


def streams(component) -> list[str]:
    """The names of the ``amaranth.lib.stream`` members, in signature order."""
    return [name for name, member in component.signature.members.items()
            if member.is_signature and isinstance(member.signature, stream.Signature)]


def wave_groups(component) -> list[tuple[str, list[str]]]:
    """(group, port names) for a waveform viewer: one group per stream (valid, ready,
    payload), then one group of the remaining plain ports."""
    names = streams(component)
    every = ports(component)
    groups = [(s, [p.name for p in every if p.path[0] == s
                   and p.path[-1] in ("valid", "ready", "payload")]) for s in names]
    rest = [p.name for p in every if p.path[0] not in names]
    if rest:
        groups.append(("ports", rest))
    return groups


def traces(component) -> list:
    """The signals shown at the top of a VCD of the run: the handshakes (valid and ready of
    every stream), then every other port."""
    names = streams(component)
    out = []
    for s in names:
        st = getattr(component, s)
        out += [st.valid, st.ready]
    for path, _, value in component.signature.flatten(component):
        if path[0] not in names:                 # plain ports, nested ones (a harness's) too
            out.append(value)
    return out
