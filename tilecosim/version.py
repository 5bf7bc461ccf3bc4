"""The version of this tilecosim: the installed distribution's, and where it runs from a git
checkout, that checkout's description (``git describe --always --dirty``), so that a report
names the exact gateware and model it checked.  Every JSON report carries both
(:func:`stamp`)."""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
from pathlib import Path

__all__ = ["version", "git_description", "stamp", "line"]


@functools.cache
def version() -> str:
    try:
        return importlib.metadata.version("tilecosim")
    except importlib.metadata.PackageNotFoundError:     # run from a source tree, not installed
        return "unknown"


@functools.cache
def git_description() -> str | None:
    """``git describe --always --dirty`` of the checkout this package runs from; None when
    it is not in one (an installed wheel) or git is missing."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def stamp(obj: dict) -> dict:
    """``obj`` with ``version`` and ``git`` (None outside a checkout) added."""
    return {"version": version(), "git": git_description()} | obj


def line() -> str:
    """``tilecosim 0.1.0 (git 1a2b3c4-dirty)``, as ``--version`` prints it."""
    g = git_description()
    return f"tilecosim {version()}" + (f" (git {g})" if g else "")
