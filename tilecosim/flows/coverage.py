"""Functional coverage bins of the regression (``tilecosim regress``).

A bin is a string ``op.point:value``.  Datapath bins count only scenarios the golden
model accepts (a faulting operation moves no data); fault bins count faulting ones.

TLOAD (148 bins)
  ``tload.shape:LAYOUT/ESIZE/PAD`` -- layout x element size (b4x2, b8, b16, b32, b64) x pad
  ``tload.outputs:LAYOUT/N``       -- 1, 2 or 3..8 output tiles
  ``tload.region:LAYOUT/R``        -- valid region: full, rows (fewer valid rows than the
                                      source block), cols (fewer valid columns), both
  ``tload.source:LAYOUT/S``        -- dense (no RegSrc1) or strided
  ``tload.fault:KIND``             -- IllegalInstruction, IllegalParameter, OutOfBounds
LoadDataWithTranspose (74 bins)
  ``ldt.form:DTYPE/V/ADDRMODE``    -- data type x V1/V2 (int4b has no V2) x addrMode 0/1
  ``ldt.gaps:DTYPE/G``             -- dstGap, dstFracGap, srcFracGap all zero, or not
  ``ldt.repeat:DTYPE/R``           -- repeatTimes 0 (V1), 1, many
  ``ldt.fault:KIND``               -- IllegalParameter, Alignment, OutOfBounds, ParameterRange
LoadAlign (114 bins)
  ``la.mode:DIST/T``               -- every legal distribution mode x data type
  ``la.addressing:DIST/A``         -- mode x plain, post_update, addr_reg
  ``la.trait:T``                   -- RegTraitNumTwo with b32 and b64
  ``la.fault:KIND``                -- IllegalParameter, Alignment, OutOfBounds

The fault kinds are those each single operation can raise (TileAllocation and TileReleased
belong to the tile register file, not to an engine).
"""

from tilecosim.model.dtypes import PadValue
from tilecosim.model.faults import Fault, FaultKind
from tilecosim.model.load_align import WIDTHS, LoadDist
from tilecosim.model.load_data import LDT_DTYPES, V2_DTYPES
from tilecosim.model.tload import TLoadLayout

__all__ = ["OPS", "all_bins", "esize_name", "tload_bins", "ldt_bins", "la_bins"]

OPS = ("tload", "load-data-with-transpose", "load-align")

TLOAD_ESIZES = ("b4x2", "b8", "b16", "b32", "b64")
TLOAD_FAULTS = ("IllegalInstruction", "IllegalParameter", "OutOfBounds")
LDT_FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds", "ParameterRange")
LA_FAULTS = ("IllegalParameter", "Alignment", "OutOfBounds")
ADDRESSING = ("plain", "post_update", "addr_reg")


def esize_name(dtype) -> str:
    return "b4x2" if dtype.name.endswith("x2") else f"b{8 * dtype.esize}"


def _outputs(n: int) -> str:
    return str(n) if n <= 2 else "3..8"


def la_legal(dist: LoadDist, t: str) -> bool:
    return t != "b64" or dist is LoadDist.DIST_NORM


def all_bins(op: str) -> list[str]:
    """Every bin of ``op``, in a stable order."""
    out = []
    if op == "tload":
        for lay in TLoadLayout:
            out += [f"tload.shape:{lay.name}/{e}/{p.name}" for e in TLOAD_ESIZES for p in PadValue]
            out += [f"tload.outputs:{lay.name}/{n}" for n in ("1", "2", "3..8")]
            out += [f"tload.region:{lay.name}/{r}" for r in ("full", "rows", "cols", "both")]
            out += [f"tload.source:{lay.name}/{s}" for s in ("dense", "strided")]
        out += [f"tload.fault:{k}" for k in TLOAD_FAULTS]
    elif op == "load-data-with-transpose":
        for dt in LDT_DTYPES:
            versions = ("V1", "V2") if dt in V2_DTYPES else ("V1",)
            out += [f"ldt.form:{dt}/{v}/{a}" for v in versions for a in (0, 1)]
            out += [f"ldt.gaps:{dt}/{g}" for g in ("zero", "nonzero")]
            out += [f"ldt.repeat:{dt}/{r}" for r in ("0", "1", "many")]
        out += [f"ldt.fault:{k}" for k in LDT_FAULTS]
    elif op == "load-align":
        for d in LoadDist:
            out += [f"la.mode:{d.name}/{t}" for t in WIDTHS if la_legal(d, t)]
            out += [f"la.addressing:{d.name}/{a}" for a in ADDRESSING]
        out += ["la.trait:b32", "la.trait:b64"]
        out += [f"la.fault:{k}" for k in LA_FAULTS]
    else:
        raise ValueError(f"op={op!r}: one of {', '.join(OPS)}")
    return out


def tload_bins(p, fault: Fault | None, plan=None) -> list[str]:
    if fault is not None:
        return [f"tload.fault:{FaultKind(fault.code).name}"]
    lay = p.layout.name
    col = p.valid_col if p.col is None else p.col
    row = plan.row
    rows = p.valid_row < row
    cols = p.valid_col < col
    region = "both" if rows and cols else "rows" if rows else "cols" if cols else "full"
    return [f"tload.shape:{lay}/{esize_name(p.dtype)}/{p.pad.name}",
            f"tload.outputs:{lay}/{_outputs(len(p.outputs))}",
            f"tload.region:{lay}/{region}",
            f"tload.source:{lay}/{'dense' if p.stride is None else 'strided'}"]


def ldt_bins(p, fault: Fault | None) -> list[str]:
    if fault is not None:
        return [f"ldt.fault:{FaultKind(fault.code).name}"]
    v2 = p.version == 2
    gaps = p.dstGap or p.dstFracGap or (p.srcFracGap if v2 else 0)
    r = p.repeatTimes
    return [f"ldt.form:{p.dtype}/{'V2' if v2 else 'V1'}/{int(bool(p.addrMode))}",
            f"ldt.gaps:{p.dtype}/{'nonzero' if gaps else 'zero'}",
            f"ldt.repeat:{p.dtype}/{'0' if r == 0 else '1' if r == 1 else 'many'}"]


def la_bins(case, fault: Fault | None) -> list[str]:
    if fault is not None:
        return [f"la.fault:{FaultKind(fault.code).name}"]
    out = [f"la.mode:{case.dist}/{case.t}", f"la.addressing:{case.dist}/{case.how.kind}"]
    if case.reg_trait == 2:
        out.append(f"la.trait:{case.t}")
    return out
