"""What the LoadAlign and StoreAlign units share: mode enums, op addressing, alignment.

The distribution of every mode is a fixed byte permutation once the UB access starts at
the effective address, so each unit is an address/alignment stage plus a ``Switch`` of
static wirings.  The tables here are the seed's (D11, D12), written for the HDL.
"""

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import data, enum

from tilecosim.model import load_align as _model

from tilecosim.hdl.tload.types import FaultCode

__all__ = ["LoadDist", "StoreDist", "Addressing", "AlignOp", "load_geometry", "store_geometry",
           "address_stage", "check_vl"]


class LoadDist(enum.Enum, shape=5):
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


class StoreDist(enum.Enum, shape=5):
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


# the model's numbering (D12) is the one on the ports
assert {d.name: d.value for d in LoadDist} == {d.name: int(d) for d in _model.LoadDist}
assert {d.name: d.value for d in StoreDist} == {d.name: int(d) for d in _model.StoreDist}


class Addressing(enum.Enum, shape=2):
    PLAIN = 0
    POST_UPDATE = 1
    ADDR_REG = 2


def width_of(name: str) -> int | None:
    tail = name.rsplit("_B", 1)
    return int(tail[1]) // 8 if len(tail) == 2 and tail[1].isdigit() else None


def check_vl(vl: int) -> None:
    if vl < 64 or vl & (vl - 1):
        raise ValueError(f"vl={vl}: VL must be a power of two of at least 64 bytes")


def load_geometry(name: str, vl: int) -> tuple[int, int]:
    """(bytes read, alignment) of a LoadDist (seed 003 table 3 and 6)."""
    half, quarter = min(32, vl // 2), min(32, vl // 4)
    w = width_of(name)
    if name == "DIST_NORM":
        return vl, 32
    if name.startswith("DIST_BRC"):
        return w, w
    if name.startswith(("DIST_US", "DIST_UNPACK_")):
        return vl // 2, half
    if name.startswith("DIST_UNPACK4"):
        return vl // 4, quarter
    if name.startswith(("DIST_DS", "DIST_DINTLV")):
        return 2 * vl, 32
    if name == "DIST_BLK":
        return 32, 32
    return (vl // 16, vl // 16) if w == 2 else (vl // 8, vl // 8)      # E2B


def store_geometry(name: str, t_bytes: int, vl: int) -> tuple[int, int]:
    """(bytes written, alignment) of a StoreDist for elements of ``t_bytes``."""
    w = width_of(name) or t_bytes
    if name.startswith("DIST_NORM"):
        return vl, 32
    if name.startswith("DIST_FIRST_ELEMENT"):
        return w, w
    if name.startswith("DIST_PACK4"):
        return vl // 4, min(32, vl // 4)
    if name.startswith("DIST_PACK"):
        return vl // 2, min(32, vl // 2)
    return 2 * vl, 32


#: One LoadAlign / StoreAlign request.  ``t`` is log2 of sizeof(T); ``value`` the
#: PostUpdate stride or AddrReg offset in elements; ``reg_trait`` 2 = RegTraitNumTwo.
AlignOp = data.StructLayout({
    "dist": 5, "t": 2, "addr": 32, "mode": Addressing, "value": signed(32), "reg_trait": 2,
})


def address_stage(m: Module, op, ub_size: int, nbytes, align, illegal, name: str):
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
    fault = Signal(FaultCode, name=f"{name}_fault")
    with m.If(illegal):
        m.d.comb += fault.eq(FaultCode.IllegalParameter)
    with m.Elif(align_bad):
        m.d.comb += fault.eq(FaultCode.Alignment)
    with m.Elif(oob):
        m.d.comb += fault.eq(FaultCode.OutOfBounds)
    return ea, nxt, fault

