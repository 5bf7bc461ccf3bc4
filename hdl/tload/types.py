"""Shared enums and payload layouts of the TLOAD engine's ports.

Names and numeric codes follow the seeds and DESIGN.md: layouts NORM..DN2ZN 0..4
and pads Zero/Max/Min/Null 0..3 (D9), fault codes of D8 (0 = none).
"""

from amaranth.lib import data, enum

from tilecosim.model import dtypes as _dtypes, tload as _tload
from tilecosim.model.faults import FaultKind

__all__ = ["TLoadLayout", "PadValue", "TileQueue", "FaultCode", "TLoadInstr", "MemRequest",
           "TileWrite", "Completion", "MAX_OUTPUTS"]

MAX_OUTPUTS = 8


class TLoadLayout(enum.Enum, shape=3):
    NORM = 0
    ND2NZ = 1
    ND2ZN = 2
    DN2NZ = 3
    DN2ZN = 4


class PadValue(enum.Enum, shape=2):
    Zero = 0
    Max = 1
    Min = 2
    Null = 3


# the model's numbering (D9) is the one on the ports
assert {x.name: x.value for x in TLoadLayout} == {x.name: int(x) for x in _tload.TLoadLayout}
assert {x.name: x.value for x in PadValue} == {x.name: int(x) for x in _dtypes.PadValue}


class TileQueue(enum.Enum, shape=3):
    T = 0
    U = 1
    M = 2
    N = 3
    ACC = 4
    S = 5


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

#: A decoded TLOAD as the issue stage hands it over: every operand already a number.
TLoadInstr = data.StructLayout({
    "layout": TLoadLayout,
    "dtype": 5,                                   # D9 data-type code
    "pad": PadValue,
    "valid_col": 64,
    "valid_row": 64,
    "col": 64,
    "base": 64,
    "stride": 64,
    "stride_given": 1,                            # 0: RegSrc1 omitted (dense, D2)
    "n": 4,                                       # number of outputs
    "queues": data.ArrayLayout(TileQueue, MAX_OUTPUTS),
    "sizes": data.ArrayLayout(64, MAX_OUTPUTS),
})

MemRequest = data.StructLayout({"addr": 64, "len": 6})       # len: 1..32 bytes


def TileWrite(width: int) -> data.StructLayout:
    return data.StructLayout({"tile": 3, "offset": 18, "data": 8 * width, "be": width})


Completion = data.StructLayout({"fault": FaultCode})
