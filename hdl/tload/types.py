"""Shared enums and payload layouts of the TLOAD engine's ports.

Names and numeric codes follow the seeds and docs/design.md: layouts NORM..DN2ZN 0..4 and pads
Zero/Max/Min/Null 0..3 (D9).  The fault codes and the completion payload every engine
shares are in :mod:`tilecosim.hdl.common`.
"""

from amaranth import Cat
from amaranth.lib import data, enum

from tilecosim.model import dtypes as _dtypes, tload as _tload

__all__ = ["TLoadLayout", "PadValue", "TileQueue", "TLoadInstr", "MemRequest", "TileWrite",
           "MAX_OUTPUTS"]

MAX_OUTPUTS = 8


class TLoadLayout(enum.Enum, shape=3):
    """A TLOAD's layout selector on the ports: the Linx TMA format numbers (D9), with the
    model's properties of each layout."""
    NORM = 0
    ND2NZ = 1
    ND2ZN = 2
    DN2NZ = 3
    DN2ZN = 4

    # what the model says of the layout (one definition of each property)
    @property
    def source_dn(self) -> bool:
        """The source block is DN (column-major): DN2NZ, DN2ZN."""
        return _tload.TLoadLayout[self.name].source_dn

    @property
    def transposing(self) -> bool:
        """Needs an element transpose, through the transpose unit: ND2ZN and DN2NZ (the
        others move contiguous runs)."""
        return _tload.TLoadLayout[self.name].transposing

    @property
    def nz_tile(self) -> bool:
        """The destination is NZ (fractals of 16 rows): ND2NZ, DN2NZ."""
        return _tload.TLoadLayout[self.name].dest.name == "NZ"

    @property
    def zn_tile(self) -> bool:
        """The destination is ZN (fractals of 16 columns): ND2ZN, DN2ZN."""
        return _tload.TLoadLayout[self.name].dest.name == "ZN"

    @classmethod
    def where(cls, value, prop: str):
        """1 when the layout signal ``value`` is a layout whose property ``prop`` holds."""
        return Cat(value == member for member in cls if getattr(member, prop)).any()


class PadValue(enum.Enum, shape=2):
    """The pad selector: the B.DATR field's numbers (D9); values per type in D5."""
    Zero = 0
    Max = 1
    Min = 2
    Null = 3


# the model's numbering (D9) is the one on the ports
assert {x.name: x.value for x in TLoadLayout} == {x.name: int(x) for x in _tload.TLoadLayout}
assert {x.name: x.value for x in PadValue} == {x.name: int(x) for x in _dtypes.PadValue}


class TileQueue(enum.Enum, shape=3):
    """The queue a tile register belongs to; TLOAD may write T, U, M and N only (D7)."""
    T = 0
    U = 1
    M = 2
    N = 3
    ACC = 4
    S = 5


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

def MemRequest(width: int = 32) -> data.StructLayout:
    """A read request of 1..``width`` bytes."""
    return data.StructLayout({"addr": 64, "len": width.bit_length()})


def TileWrite(width: int) -> data.StructLayout:
    return data.StructLayout({"tile": 3, "offset": 18, "data": 8 * width, "be": width})


