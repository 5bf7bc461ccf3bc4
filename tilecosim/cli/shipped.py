"""The example programs and designs that ship inside the package (``tilecosim.examples``,
the repository's ``examples/``): their catalog, the file behind a name, and the first
sentence that describes each.  ``tilecosim examples`` lists and copies them; every command
that reads a program or a design takes one as ``example:NAME`` (:data:`PREFIX`)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

__all__ = ["PREFIX", "catalog", "lookup", "summary"]

#: the prefix that names a shipped example in place of a file
PREFIX = "example:"

#: what ships: the programs and the designs from elsewhere (D16)
PATTERNS = ("*.s", "designs/*.sv", "designs/*.v", "designs/*.toml")


def catalog() -> list[tuple[str, Path]]:
    """(name, path) of every shipped example, programs first, by name."""
    root = Path(str(importlib.resources.files("tilecosim.examples")))
    found = []
    for pattern in PATTERNS:
        found += sorted(p for p in root.glob(pattern) if p.is_file())
    return [(p.relative_to(root).as_posix(), p) for p in found]


def lookup(name: str) -> Path:
    """The file of the example ``name`` (``kernel.s``, ``designs/load_align_unit.sv``);
    KeyError when none has that name."""
    for n, path in catalog():
        if n == name:
            return path
    raise KeyError(name)


def summary(path: Path) -> str:
    """The first sentence of an example's opening comment."""
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip().startswith((";", "//", "#")):
            break
        words += line.strip().lstrip(";/#").split()
        ends = [k for k, w in enumerate(words)
                if w.endswith(".") and not w.endswith((".sv.", ".v.", ".s."))]
        if ends:
            return " ".join(words[:ends[0] + 1])
    return " ".join(words)
