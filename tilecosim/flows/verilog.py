"""Verilog generation of every operation's tops (``tilecosim verilog``), from the registry."""

import re
import subprocess
from pathlib import Path

from amaranth.back import verilog

from tilecosim import ops
from tilecosim.cleanup import write_whole
from tilecosim.sim.toolchain import require, verilator_env

__all__ = ["WAIVERS", "convert", "write_all", "lint"]

#: Verilator configuration file with the commented lint waivers
WAIVERS = Path(__file__).resolve().parent / "lint_waivers.vlt"


def convert(stem: str, profile: str = "finite") -> str:
    return verilog.convert(ops.top(stem).make(profile), name=stem, emit_src=False)


def write_all(out: Path, profile: str = "finite"):
    for top in ops.tops():
        path = Path(out) / f"{top.name}.v"
        text = convert(top.name, profile)
        write_whole(path, text)
        yield path, f"{top.what}, {len(text.splitlines())} lines"


def lint(path: Path, top: str) -> list[str]:
    """``verilator --lint-only -Wall`` on one generated file with :data:`WAIVERS`; returns
    the warning and error lines (empty: clean).  Raises RuntimeError when Verilator is
    missing."""
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
