"""Verilog generation of the engine tops (``tilecosim verilog``)."""

from pathlib import Path

from amaranth.back import verilog

from .l1l0_engine import L1L0Engine
from .load_align_unit import LoadAlignUnit
from .store_align_unit import StoreAlignUnit
from .tload_engine import TLoadEngine
from .transpose import SquareTranspose

__all__ = ["TOPS", "convert", "write_all"]

#: file stem -> (constructor, description)
TOPS = {
    "tload_engine": (lambda profile: TLoadEngine(width=32, profile=profile), "TLOAD engine, W = 32"),
    "tload_engine_w64": (lambda profile: TLoadEngine(width=64, profile=profile), "TLOAD engine, W = 64"),
    "square_transpose": (lambda profile: SquareTranspose(), "transpose unit"),
    "l1l0_engine": (lambda profile: L1L0Engine(), "L1 -> L0 engine (LoadDataWithTranspose)"),
    "load_align_unit": (lambda profile: LoadAlignUnit(), "LoadAlign unit, VL = 256"),
    "store_align_unit": (lambda profile: StoreAlignUnit(), "StoreAlign unit, VL = 256"),
}


def convert(stem: str, profile: str = "finite") -> str:
    make, _ = TOPS[stem]
    return verilog.convert(make(profile), name=stem, emit_src=False)


def write_all(out: Path, profile: str = "finite"):
    for stem, (_, what) in TOPS.items():
        path = Path(out) / f"{stem}.v"
        text = convert(stem, profile)
        path.write_text(text)
        yield path, f"{what}, {len(text.splitlines())} lines"
