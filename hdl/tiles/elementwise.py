"""The elementwise ALU of TADD/TSUB: W bytes of each source in, W bytes of result out.

Integer arithmetic only, lane by lane, wrapping (two's complement, so signed and unsigned
types share it): lanes of 64, 32, 16 and 8 bits, and the 4-bit pairs per nibble.

Combinational: one beat per cycle, no latency.
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import check_width

__all__ = ["ElementwiseALU", "LaneWidth", "lane_width_of"]


class LaneWidth(enum.Enum, shape=3):
    """The lane of a data type: the low 3 bits of the D9 code of S64..S4x2 and U64..U4x2."""
    B64 = 0
    B32 = 1
    B16 = 2
    B8 = 3
    B4 = 4


LANE_BITS = {LaneWidth.B64: 64, LaneWidth.B32: 32, LaneWidth.B16: 16, LaneWidth.B8: 8,
             LaneWidth.B4: 4}


def lane_width_of(dtype_code):
    """(integer type?, its LaneWidth) of a D9 data-type code signal: S64..S4x2 are 16..20,
    U64..U4x2 24..28."""
    low = dtype_code[:3]
    is_int = (dtype_code[3:5] == 0b10) | (dtype_code[3:5] == 0b11)
    return is_int & (low <= 4), low


class ElementwiseALU(wiring.Component):
    """``y = a + b`` or ``a - b`` (``sub``) per lane of ``lane`` bits (see module doc).

    Parameters
    ----------
    width : int
        Bytes of each operand and of the result per cycle (32, 64 or 128)."""

    def __init__(self, width: int = 32):
        check_width(width)
        self.width = width
        super().__init__({
            "a": In(8 * width),
            "b": In(8 * width),
            "sub": In(1),
            "lane": In(LaneWidth),
            "y": Out(8 * width),
        })

    def elaborate(self, platform):
        m = Module()
        bits = 8 * self.width
        with m.Switch(self.lane):
            for lane, n in LANE_BITS.items():
                with m.Case(lane):
                    out = []
                    for k in range(bits // n):
                        a = self.a[k * n:(k + 1) * n]
                        b = self.b[k * n:(k + 1) * n]
                        s = Signal(n, name=f"lane{n}_{k}")
                        with m.If(self.sub):
                            m.d.comb += s.eq(a - b)
                        with m.Else():
                            m.d.comb += s.eq(a + b)
                        out.append(s)
                    m.d.comb += self.y.eq(Cat(out))
        return m
