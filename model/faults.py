"""Architectural faults (docs/design.md D8).

One table, shared by the golden model and the HDL: the HDL reports the numeric
``code`` of a fault on its fault port and the test bench compares it with the
code of the fault the model raised.  Code 0 means "no fault".

Every fault names the offending field and its value, so a message reads like
``IllegalParameter: ValidCol=130 exceeds Col=128``.
"""

from __future__ import annotations

import enum

__all__ = [
    "FaultKind", "Fault", "IllegalInstruction", "IllegalParameter",
    "TileAllocation", "TileReleased", "Alignment", "OutOfBounds",
    "ParameterRange", "FAULT_TABLE", "fault_class", "fault_label", "completion_label",
]


class FaultKind(enum.IntEnum):
    """Fault codes as they appear on the HDL fault ports (0 = no fault)."""
    NONE = 0
    IllegalInstruction = 1
    IllegalParameter = 2
    TileAllocation = 3
    TileReleased = 4
    Alignment = 5
    OutOfBounds = 6
    ParameterRange = 7


#: name -> (code, what it means).  The message of each raised fault adds the
#: field and the value that caused it.
FAULT_TABLE = {
    "IllegalInstruction": (1, "the instruction cannot be executed as written "
                              "(e.g. TLOAD to ACC, a register index outside 1..16)"),
    "IllegalParameter":   (2, "a parameter breaks a rule of the operation "
                              "(e.g. ValidCol > Col, Row not a whole number, NZ shape rule)"),
    "TileAllocation":     (3, "an allocation would push a live register out of its queue's "
                              "16 names (Q#16 live; a full queue is one case)"),
    "TileReleased":       (4, "a source tile register was read after it was released"),
    "Alignment":          (5, "an address, stride or offset is not aligned as the operation requires"),
    "OutOfBounds":        (6, "an access falls outside the memory or buffer"),
    "ParameterRange":     (7, "a parameter is outside the range its field can hold"),
}


class Fault(Exception):
    """Base class of all architectural faults.

    ``field`` and ``value`` name what went wrong; ``rule`` says why.  A faulting
    instruction changes no architectural state.
    """
    kind: FaultKind = FaultKind.NONE

    def __init__(self, field: str, value, rule: str):
        self.field = field
        self.value = value
        self.rule = rule
        super().__init__(self.message)

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def code(self) -> int:
        return int(self.kind)

    @property
    def message(self) -> str:
        return f"{self.field}={_fmt(self.value)}: {self.rule}"

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"

    def to_json(self) -> dict:
        return {"name": self.name, "code": self.code, "message": self.message}


def _fmt(value) -> str:
    if isinstance(value, str):
        return value
    return repr(value) if not isinstance(value, int) else str(value)


class IllegalInstruction(Fault):
    kind = FaultKind.IllegalInstruction


class IllegalParameter(Fault):
    kind = FaultKind.IllegalParameter


class TileAllocation(Fault):
    kind = FaultKind.TileAllocation


class TileReleased(Fault):
    kind = FaultKind.TileReleased


class Alignment(Fault):
    kind = FaultKind.Alignment


class OutOfBounds(Fault):
    kind = FaultKind.OutOfBounds


class ParameterRange(Fault):
    kind = FaultKind.ParameterRange


_CLASSES = {cls.kind: cls for cls in (IllegalInstruction, IllegalParameter, TileAllocation,
                                      TileReleased, Alignment, OutOfBounds, ParameterRange)}


def fault_class(kind: FaultKind | int | str) -> type[Fault]:
    """The exception class of a fault kind, given as enum, code or name."""
    if isinstance(kind, str):
        kind = FaultKind[kind]
    return _CLASSES[FaultKind(kind)]


def completion_label(code) -> str:
    """What a design's completion said, as messages write it: ``fault OutOfBounds (6)``, or
    ``no completion`` when there was none (``None``)."""
    return "no completion" if code is None else f"fault {fault_label(code)}"


def fault_label(code) -> str:
    """A fault code as messages write it: ``OutOfBounds (6)``, ``NONE (0)`` for no fault,
    ``code 12 (no fault has it)`` for a code outside the table."""
    code = int(code or 0)
    try:
        return f"{FaultKind(code).name} ({code})"
    except ValueError:
        return f"code {code} (no fault has it)"
