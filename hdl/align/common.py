"""What the LoadAlign and StoreAlign units share: mode enums, op addressing, alignment.

The distribution of every mode is a fixed byte permutation once the UB access starts at
the effective address, so each unit is an address/alignment stage plus a ``Switch`` of
static wirings.  The modes' numbering, their families and widths, and the bytes each moves
(with its alignment) are the model's tables (D11, D12); the wirings are the units' own.
"""

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In

from tilecosim.hdl.common import FaultCode, check_vector_length, first_fault
from tilecosim.model import load_align as _model

__all__ = ["LoadDist", "StoreDist", "Addressing", "AlignOp", "AlignUnit", "address_stage"]


class _ModeProperties:
    """What the model says of a mode: its family and element width."""

    @property
    def model_mode(self):
        """The model's member of the same name (``_model.LoadDist`` or ``_model.StoreDist``)."""
        return getattr(_model, type(self).__name__)[self.name]

    @property
    def family(self) -> str:
        """``BRC``, ``US``, ``UNPACK4``, ``FIRST_ELEMENT``, ... (the name without its width)."""
        return self.model_mode.family

    @property
    def width(self) -> int | None:
        """Element bytes the mode names (None when it names none)."""
        return self.model_mode.width

    @property
    def dual(self) -> bool:
        """Two registers: DINTLV loads, INTLV stores."""
        return self.model_mode.dual


class LoadDist(_ModeProperties, enum.Enum, shape=5):
    """The LoadAlign distribution mode on the ``dist`` field of an op: the Ascend C
    ``LoadDist`` numbers (D12), asserted equal to the model's below."""
    DIST_NORM = 0
    DIST_BRC_B8 = 1
    DIST_BRC_B16 = 2
    DIST_BRC_B32 = 3
    DIST_US_B8 = 6
    DIST_US_B16 = 7
    DIST_DS_B8 = 8
    DIST_DS_B16 = 9
    DIST_DINTLV_B8 = 11
    DIST_DINTLV_B16 = 12
    DIST_UNPACK_B8 = 13
    DIST_UNPACK_B16 = 14
    DIST_BLK = 15
    DIST_E2B_B16 = 16
    DIST_E2B_B32 = 17
    DIST_UNPACK_B32 = 18
    DIST_DINTLV_B32 = 19
    DIST_UNPACK4_B8 = 20

    def geometry(self, vl: int) -> tuple[int, int]:
        """(bytes read, alignment) at vector length ``vl`` (seed 003 tables 3 and 6)."""
        return _model.load_align_geometry(self.model_mode, vl)


class StoreDist(_ModeProperties, enum.Enum, shape=5):
    """The StoreAlign distribution mode: the Ascend C ``StoreDist`` numbers (D12)."""
    DIST_NORM_B8 = 0
    DIST_NORM_B16 = 1
    DIST_NORM_B32 = 2
    DIST_FIRST_ELEMENT_B8 = 3
    DIST_FIRST_ELEMENT_B16 = 4
    DIST_FIRST_ELEMENT_B32 = 5
    DIST_PACK_B16 = 6
    DIST_PACK_B32 = 7
    DIST_INTLV_B8 = 8
    DIST_INTLV_B16 = 9
    DIST_PACK_B64 = 10
    DIST_INTLV_B32 = 11
    DIST_PACK4_B32 = 12
    DIST_NORM = 16

    def geometry(self, t_bytes: int, vl: int) -> tuple[int, int]:
        """(bytes written, alignment) for elements of ``t_bytes`` at vector length ``vl``."""
        return _model.store_align_geometry(self.model_mode, f"b{8 * t_bytes}", vl)


# the model's numbering (D12) is the one on the ports
assert {d.name: d.value for d in LoadDist} == {d.name: int(d) for d in _model.LoadDist}
assert {d.name: d.value for d in StoreDist} == {d.name: int(d) for d in _model.StoreDist}


class Addressing(enum.Enum, shape=2):
    """How an op's address is formed: as given, then ``addr += stride`` (PostUpdate), or
    ``addr + offset`` (AddrReg); stride and offset count elements (D11)."""
    PLAIN = 0
    POST_UPDATE = 1
    ADDR_REG = 2


class AlignUnit(wiring.Component):
    """What both align units take, checked before the ports (``ports(vl)``) are made.

    Parameters
    ----------
    vl : int
        The vector length in bytes: a power of two of at least 64 (256 on the hardware).

    The bytes of UB are the ``ub_size`` input (constant during a run; an access past them
    faults OutOfBounds), as the TLOAD and L1 -> L0 engines take their memory sizes: the
    port contract (D16) is the signature, and a design from elsewhere learns the size
    there."""

    def __init__(self, vl: int = 256):
        check_vector_length(vl)
        self.vl = vl
        super().__init__({"ub_size": In(32), **self.ports(vl)})

    def ports(self, vl: int) -> dict:
        raise NotImplementedError


#: One LoadAlign / StoreAlign request.  ``t`` is log2 of sizeof(T); ``value`` the
#: PostUpdate stride or AddrReg offset in elements; ``reg_trait`` 2 = RegTraitNumTwo.
AlignOp = data.StructLayout({
    "dist": 5, "t": 2, "addr": 32, "mode": Addressing, "value": signed(32), "reg_trait": 2,
})


def address_stage(m: Module, op, ub_size, nbytes, align, illegal, name: str):
    """Effective address, next address and the fault of ``op``.

    ``nbytes`` and ``align`` are the mode's (signals), ``illegal`` its IllegalParameter
    condition; returns (ea, next_addr, fault) with the faults in the model's order:
    IllegalParameter, then Alignment (stride/offset, base, effective address), then the UB
    range (OutOfBounds).
    """
    size = Signal(4, name=f"{name}_size")
    m.d.comb += size.eq(1 << op.t)
    value = op.value
    scaled = Signal(signed(40), name=f"{name}_scaled")
    m.d.comb += scaled.eq(value * size)
    addr = op.addr
    is_reg = op.mode == Addressing.ADDR_REG
    is_post = op.mode == Addressing.POST_UPDATE
    ea = Signal(signed(42), name=f"{name}_ea")
    m.d.comb += ea.eq(Mux(is_reg, addr + scaled, addr))
    nxt = Signal(signed(42), name=f"{name}_next")
    m.d.comb += nxt.eq(Mux(is_post, addr + scaled, addr))
    mask = align - 1
    align_bad = (((is_reg | is_post) & ((scaled & mask) != 0)) | ((addr & mask) != 0)
                 | ((ea & mask) != 0))
    oob = (ea < 0) | (ea + nbytes > ub_size)
    fault = first_fault(m, [(illegal, FaultCode.IllegalParameter),
                            (align_bad, FaultCode.Alignment),
                            (oob, FaultCode.OutOfBounds)], name=f"{name}_fault")
    return ea, nxt, fault

