"""Verilog generation of the engine tops (``tilecosim verilog``)."""

from pathlib import Path

from amaranth.back import verilog

from tilecosim.hdl.l1l0.engine import L1L0Engine
from tilecosim.hdl.align.load import LoadAlignUnit
from tilecosim.hdl.align.store import StoreAlignUnit
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.transpose import SquareTranspose

__all__ = ["TOPS", "WAIVERS", "convert", "write_all", "lint"]

#: Verilator configuration file with the commented lint waivers
WAIVERS = Path(__file__).resolve().parent / "lint_waivers.vlt"

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


def lint(path: Path, top: str) -> list[str]:
    """``verilator --lint-only -Wall`` on one generated file with :data:`WAIVERS`; returns
    the warning and error lines (empty: clean).  Raises RuntimeError when Verilator is
    missing."""
    import re
    import subprocess
    from tilecosim.sim.toolchain import require, verilator_env
    reason = require("verilator")
    if reason:
        raise RuntimeError(reason)
    out = subprocess.run(["verilator", "--lint-only", "-Wall", "--top-module", top,
                          str(WAIVERS), str(path)], capture_output=True, text=True,
                         env=verilator_env(), timeout=600)
    lines = [ln for ln in (out.stdout + out.stderr).splitlines()
             if re.match(r"%(Warning|Error)", ln)]
    if out.returncode and not lines:
        lines = [f"verilator exited with {out.returncode}: {(out.stderr or out.stdout).strip()}"]
    return lines
