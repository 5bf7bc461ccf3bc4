"""Verilog generation of every operation's tops (``tilecosim verilog``), from the registry."""

import functools
import hashlib
import re
import subprocess
from pathlib import Path

from tilecosim import ops
from tilecosim.cleanup import write_whole
from tilecosim.sim.runner import to_verilog
from tilecosim.sim.toolchain import require, verilator_env

__all__ = ["WAIVERS", "convert", "write_all", "lint"]

#: Verilator configuration file with the commented lint waivers
WAIVERS = Path(__file__).resolve().parent / "lint_waivers.vlt"


@functools.cache
def _ops_digest() -> str:
    """SHA-1 of the registry's sources (:mod:`tilecosim.ops`), which give each top its
    parameters; with the gateware's (:func:`tilecosim.sim.runner.to_verilog`) it keys a
    top's cached conversion."""
    h = hashlib.sha1()
    root = Path(ops.__file__).resolve().parent
    for path in sorted(root.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def convert(stem: str, profile: str = "finite") -> str:
    """The Verilog of the top ``stem``, converted once per gateware and registry sources and
    kept in the build cache (``tilecosim verilog`` again, or on another checkout of the same
    sources, takes seconds)."""
    return to_verilog(lambda: ops.top(stem).make(profile), stem,
                      key=f"verilog/{profile}/{_ops_digest()}")


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
