"""Mutants generated from the gateware's Python AST: beside the hand-written list of
:mod:`.mutation`, written by the same hands as the tests, a seeded sample of mechanical
single-point changes with no idea of what the tests check.

The candidates are every site, in the functions that build hardware (``elaborate`` and the
helpers that add statements to a module), of one of these changes:

* ``cmp``: a comparison swapped (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``);
* ``arith``: an operator swapped (``+`` <-> ``-``, ``<<`` <-> ``>>``, ``&`` <-> ``|``,
  ``*`` -> ``+``);
* ``const``: an integer constant + 1 or - 1 (not in a ``Signal``'s shape: a width that
  only widens or narrows a value that fits is no bug);
* ``if``: the condition of an ``m.If`` / ``m.Elif`` dropped (always taken);
* ``mux``: the two arms of a ``Mux`` swapped;
* ``slice``: a bound of a slice ``x[a:b]`` off by one.

A mutant is named by its file, line, column and change, so the same seed and the same
source give the same mutants.  Each is applied as a text edit at its site; it runs with the
same runner as the hand-written ones.  A survivor that cannot be killed is listed in
:data:`EQUIVALENT` with the argument why.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

__all__ = ["Site", "candidates", "sample", "EQUIVALENT"]

CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
            ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
ARITH_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.LShift: ast.RShift,
              ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
              ast.Mult: ast.Add}

#: generated mutants argued equivalent: id -> why no test can tell them from the original
EQUIVALENT: dict[str, str] = {
    "g:tload/decode.py:195:41:const+1":
        "range(MAX_LOG_SIZE + 2) in the size search adds the candidate p = 19 (p has 5 bits, "
        "so it fits); a tile is at most 2**18 bytes, so p = 19 fails p <= log2_size and the "
        "instruction faults IllegalParameter, as it does when no candidate matches; the other "
        "decoded fields of a faulting instruction are never used (it makes no run)",
    "g:align/load.py:125:41:slice-hi+1":
        "ub_addr.eq(ea[:33]): ub_addr is 32 bits wide, so the 33rd bit is dropped by the "
        "assignment and the port carries ea[:32] as before",
    "g:l1l0/engine.py:190:53:slice-hi+1":
        "cur.src_stride[:17]: a srcStride above 16 bits faults (ParameterRange) before the "
        "instruction starts, so bit 16 of a running instruction's stride is 0",
    "g:tiles/system.py:203:60:const+1":
        "words_bits = ... + 2: the width of the TADD beat counter, one bit wider; it counts "
        "to at most LCFR / W beats either way, so every value and comparison is the same",
    "g:l1l0/engine.py:287:43:slice-hi+1":
        "wr.payload.addr.eq(waddr[:33]): the addr field is 32 bits wide, so the assignment "
        "drops the 33rd bit and the L0 write address is waddr[:32] as before",
}


class Site:
    """One change: replace the source text ``old`` at byte ``start`` of ``file`` by
    ``new``."""

    def __init__(self, file: str, line: int, col: int, kind: str, start: int, old: str,
                 new: str):
        self.file, self.line, self.col, self.kind = file, line, col, kind
        self.start, self.old, self.new = start, old, new

    @property
    def id(self) -> str:
        return f"g:{self.file}:{self.line}:{self.col}:{self.kind}"

    @property
    def what(self) -> str:
        return f"{self.kind}: {self.old!r} -> {self.new!r}"[:120]


def _builds_hardware(fn: ast.FunctionDef, text: str) -> bool:
    if fn.name == "__init__":
        return False                      # parameter checks, not hardware
    body = ast.get_source_segment(text, fn) or ""
    return fn.name == "elaborate" or "m.d." in body or "m.If(" in body


def _offsets(text: str) -> list[int]:
    """The byte offset of each line's start (ast columns are UTF-8 byte offsets)."""
    out, pos = [0], 0
    for line in text.encode().splitlines(keepends=True):
        pos += len(line)
        out.append(pos)
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, file: str, text: str):
        self.file, self.text = file, text
        self.raw = text.encode()
        self.lines = _offsets(text)
        self.sites: list[Site] = []
        self.widths: set[int] = set()      # ids of Signal(width) constants

    def _site(self, node, kind, new):
        start = self.lines[node.lineno - 1] + node.col_offset
        end = self.lines[node.end_lineno - 1] + node.end_col_offset
        old = self.raw[start:end].decode()
        if old != new:
            self.sites.append(Site(self.file, node.lineno, node.col_offset, kind, start, old,
                                   new))

    def visit_Compare(self, node):
        if len(node.ops) == 1 and type(node.ops[0]) in CMP_SWAP:
            # only the operator changes: the operands' text is kept as written
            lt = self._seg(node.left)
            rt = self._seg(node.comparators[0])
            between = self.raw[self._end(node.left):self._start(node.comparators[0])].decode()
            op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                  ast.NotEq: "!="}
            old_op = op[type(node.ops[0])]
            new_op = op[CMP_SWAP[type(node.ops[0])]]
            if between.count(old_op) == 1 and (old_op != "<" or "<=" not in between) \
                    and (old_op != ">" or ">=" not in between):
                self._site(node, "cmp", self._span(node, node.left) + lt
                           + between.replace(old_op, new_op) + rt
                           + self._tail(node.comparators[0], node))
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if type(node.op) in ARITH_SWAP:
            op = {ast.Add: "+", ast.Sub: "-", ast.LShift: "<<", ast.RShift: ">>",
                  ast.BitAnd: "&", ast.BitOr: "|", ast.Mult: "*"}
            between = self.raw[self._end(node.left):self._start(node.right)].decode()
            old_op, new_op = op[type(node.op)], op[ARITH_SWAP[type(node.op)]]
            if between.count(old_op) == 1 and "#" not in between:
                self._site(node, "arith", self._span(node, node.left) + self._seg(node.left)
                           + between.replace(old_op, new_op) + self._seg(node.right)
                           + self._tail(node.right, node))
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        if name == "Signal" and node.args:          # Signal(4), Signal(signed(40)), ...
            self.widths.update(id(n) for n in ast.walk(node.args[0])
                               if isinstance(n, ast.Constant))
        if (name in ("If", "Elif") and isinstance(f, ast.Attribute) and node.args
                and isinstance(f.value, ast.Name) and f.value.id == "m"):
            self._site(node.args[0], "if", "1")
        if name == "Mux" and len(node.args) == 3:
            a, b = node.args[1], node.args[2]
            self._site(node, "mux", self.raw[self._start(node):self._start(a)].decode()
                       + self._seg(b) + self.raw[self._end(a):self._start(b)].decode()
                       + self._seg(a) + self.raw[self._end(b):self._end(node)].decode())
        self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if type(v) is int and id(node) not in self.widths:
            self._site(node, "const+1", str(v + 1))
            if v > 0:
                self._site(node, "const-1", str(v - 1))

    def visit_Slice(self, node):
        for bound, label in ((node.lower, "lo"), (node.upper, "hi")):
            if bound is not None:
                self._site(bound, f"slice-{label}+1", f"({self._seg(bound)}) + 1")
        self.generic_visit(node)

    def visit_keyword(self, node):
        if node.arg not in ("name", "src_loc_at"):
            self.generic_visit(node)

    def visit_JoinedStr(self, node):
        return                            # names only

    def _start(self, node):
        return self.lines[node.lineno - 1] + node.col_offset

    def _end(self, node):
        return self.lines[node.end_lineno - 1] + node.end_col_offset

    def _span(self, outer, inner):
        """The text of ``outer`` before ``inner`` starts (an opening parenthesis)."""
        return self.raw[self._start(outer):self._start(inner)].decode()

    def _tail(self, inner, outer):
        """The text of ``outer`` after ``inner`` ends (a closing parenthesis)."""
        return self.raw[self._end(inner):self._end(outer)].decode()

    def _seg(self, node):
        return self.raw[self._start(node):self._end(node)].decode()


def candidates(hdl_dir: Path) -> list[Site]:
    """Every site of every change in the hardware-building functions of ``hdl_dir``, in a
    fixed order (file, position, kind)."""
    out = []
    for path in sorted(hdl_dir.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        rel = path.relative_to(hdl_dir).as_posix()
        text = path.read_text()
        tree = ast.parse(text)
        finder = _Finder(rel, text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _builds_hardware(node, text):
                for stmt in node.body:
                    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                        finder.visit(stmt)              # docstrings are not code
        seen = set()
        for s in finder.sites:                          # nested functions are walked twice
            if (s.start, s.kind) not in seen:
                seen.add((s.start, s.kind))
                out.append(s)
    return sorted(out, key=lambda s: (s.file, s.start, s.kind))


def sample(hdl_dir: Path, count: int, seed: int) -> list[Site]:
    """``count`` sites drawn from :func:`candidates` with ``seed`` (all of them when there
    are fewer), in candidate order."""
    sites = candidates(hdl_dir)
    if count >= len(sites):
        return sites
    picked = sorted(random.Random(seed).sample(range(len(sites)), count))
    return [sites[k] for k in picked]


def apply_site(site: Site, hdl_dir: Path) -> None:
    """Apply ``site`` to the copy of the gateware in ``hdl_dir``; RuntimeError when the text
    at its position is not what it was (the source changed)."""
    path = hdl_dir / site.file
    raw = path.read_bytes()
    old = site.old.encode()
    if raw[site.start:site.start + len(old)] != old:
        raise RuntimeError(f"mutant {site.id}: hdl/{site.file} changed at line {site.line}")
    path.write_bytes(raw[:site.start] + site.new.encode() + raw[site.start + len(old):])
