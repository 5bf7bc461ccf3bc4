"""What the engines share: the line and fractal sizes, the D8 fault codes, the completion
payload and the checks of their parameters.

A *line* is the 32 bytes the datapaths move per cycle (a fractal row of 16-bit elements);
a *fractal* is the 512-byte block of the layouts (16 lines).
"""

from amaranth import Signal
from amaranth.lib import data, enum

from tilecosim.model.faults import FaultKind

__all__ = ["LINE_BYTES", "FRACTAL_BYTES", "FaultCode", "Completion", "first_fault",
           "check_choice", "check_at_least", "check_width", "WIDTHS", "check_vector_length"]

LINE_BYTES = 32
FRACTAL_BYTES = 512


class FaultCode(enum.Enum, shape=3):
    """D8 fault codes; equal to ``model.faults.FaultKind`` (checked at import)."""
    NONE = 0
    IllegalInstruction = 1
    IllegalParameter = 2
    TileAllocation = 3
    TileReleased = 4
    Alignment = 5
    OutOfBounds = 6
    ParameterRange = 7


assert {f.name: f.value for f in FaultCode} == {k.name: int(k) for k in FaultKind}

#: one completion per instruction, in order
Completion = data.StructLayout({"fault": FaultCode})


def first_fault(m, checks, name: str | None = None):
    """The D8 code of the first broken rule: ``checks`` is [(condition, FaultCode), ...] in
    the model's order; NONE when no condition holds."""
    fault = Signal(FaultCode, name=name)
    for k, (broken, code) in enumerate(checks):
        with (m.If if k == 0 else m.Elif)(broken):
            m.d.comb += fault.eq(code)
    return fault


def check_choice(name: str, value, choices) -> None:
    """ValueError naming ``name`` and ``value`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}={value!r}: choose one of {', '.join(map(repr, choices))}")


#: the beat widths W of the engines' memory and tile ports (D14)
WIDTHS = (32, 64, 128)


def check_width(width: int) -> None:
    """ValueError naming ``width`` unless it is one of :data:`WIDTHS`."""
    check_choice("width", width, WIDTHS)


def check_at_least(name: str, value: int, low: int, what: str) -> None:
    """ValueError naming ``name`` and ``value`` unless ``value >= low``."""
    if not isinstance(value, int) or value < low:
        raise ValueError(f"{name}={value!r}: need at least {low} {what}")


def check_vector_length(vl: int) -> None:
    """VL of the vector units: a power of two of at least 64 bytes."""
    if not isinstance(vl, int) or vl < 64 or vl & (vl - 1):
        raise ValueError(f"vl={vl!r}: VL must be a power of two of at least 64 bytes")
