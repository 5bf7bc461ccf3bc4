"""``tilecosim bench``: every figure of merit measured in one run, as Markdown and JSON.

* TLOAD engine (W = 32): cycles, ideal cycles (tile bytes / W), efficiency and first-write
  latency per layout x element size at 2 KB, 8 KB and 64 KB (dense, fully valid, no
  back-pressure, memory latency 2);
* L1 -> L0 engine: the same per data type at repeatTimes 4, 16 and 64;
* LoadAlign unit: ops per cycle and latency over every mode back to back;
* TSTORE engine: each layout and element size at 64 KB and W = 32, 64, 128, against its
  bound; a TLOAD -> TADD -> TSTORE kernel through the tile system against its parts, and the
  cost of program order (:mod:`tilecosim.perf.tstore`);
* simulation speed: simulated cycles per second of Amaranth, Icarus and Verilator on a
  stream of 64 KB TLOADs, with the Python-driven bench and with the bulk harness, and the
  ratios;
* regress speed: scenarios per second of ``regress`` (the same seed and op mix) on each
  backend -- the Python-driven bench on Amaranth, the batch harnesses on Icarus and
  Verilator -- and the ratios;
* cluster: regress with ``--jobs 2`` against a Dask ``--cluster local:2``, the scheduler's
  cost per task, and the run predicted on 10 and 100 workers (:mod:`tilecosim.perf.cluster`;
  alone, after the other parts, as it measures both cores);
* tile system: a stream of 16 TLOADs of 2 KB per layout through the RTL tile system against
  the TLOAD engine alone, TADD beats per cycle, the latency from an instruction's last record
  to its first tile write, and the area of the system, its register file and its engine with
  the SRAM's bits apart (:mod:`tilecosim.perf.tiles`);
* golden model speed: the vectorized TLOAD against the source's loops on a 64 KB tile;
* area: Yosys ``synth`` cells and flip-flops of every top and of the transpose unit.

Every HDL figure comes from a run that also matched the golden model.  The parts run in
parallel processes (``--jobs``).
"""

import os
import time
from concurrent.futures import ProcessPoolExecutor

from tilecosim import ops
from tilecosim.model.load_data import LDT_DTYPES
from tilecosim.model.tload import TLoadLayout, tload, tload_reference
from tilecosim.perf.cluster import markdown as cluster_md, measure_cluster
from tilecosim.perf.sim_speed import REGRESS_COUNTS, measure, regress_rate, scenario
from tilecosim.perf.tiles import SHAPES, stream_case as tiles_stream_case, tadd_case, tiles_area
from tilecosim.perf.tload import NARROW, area, bench_case, narrow_case, stream_case
from tilecosim.perf.tstore import bench_case as tstore_case, kernel_case
from tilecosim.perf.units import l1l0_case, load_align_figures
from tilecosim.sim.runner import BACKENDS, missing

__all__ = ["PARTS", "run_bench_all", "markdown"]

SIZES = (2048, 8192, 65536)
WIDTHS = (32, 64, 128)
REPEATS = (4, 16, 64)


def _tload_case(layout_name, esize, size, width=32):
    return bench_case(TLoadLayout[layout_name], esize, size, width)


def _tload_stream(layout_name, esize, width):
    return stream_case(TLoadLayout[layout_name], esize, width)


def _tload_narrow(name, width):
    return narrow_case(name, width)


def _l1l0_case(dt, r, width):
    return l1l0_case(dt, r, width)


def _load_align():
    return load_align_figures()


def _speed(backend, harness, repeat):
    return dict(measure(backend, harness, repeat), repeat=repeat)


def _regress(backend, count):
    return regress_rate(backend, count)


#: TLOADs of the speed stream per run: Verilator's bulk run needs a long stream, or its
#: start-up is what the rate measures
SPEED_REPEAT = {("verilator", "bulk"): 100}


def _golden():
    params, mem = scenario()
    best = min(_timed(tload, mem, params) for _ in range(3))
    ref = _timed(tload_reference, mem, params)
    size = params.outputs[0][1]
    return {"tile_bytes": size, "fast_s": round(best, 5), "reference_s": round(ref, 3),
            "ratio": round(ref / best, 1), "fast_mb_per_s": round(size / best / 1e6, 1)}


def _tstore_case(layout_name, esize, width):
    return tstore_case(TLoadLayout[layout_name], esize, width)


def _tstore_kernel(width):
    return kernel_case(width)


def _tiles_stream(layout):
    return tiles_stream_case(layout)


def _tiles_tadd():
    return tadd_case()


def _tiles_area(part):
    return tiles_area(part)


def _timed(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def area_rows() -> dict:
    """The rows of the area table, from the registry: every ``area`` row of every unit of
    every operation, label -> (unit, keyword arguments), in the registry's order."""
    return {label: (unit, kwargs) for op in ops.REGISTRY for unit in op.units
            for label, kwargs in unit.area}


def _area(label):
    unit, kwargs = area_rows()[label]
    a = area(unit.cls()(**kwargs), "top")
    return {"top": label, "cells": a["cells"], "flip_flops": a["flip_flops"]}


#: the parts of the run, in the order of the report
PARTS = ("tload", "l1l0", "load-align", "tstore", "tiles", "speed", "regress", "cluster",
         "golden", "area")


def run_bench_all(jobs: int = 2, area: bool = True, speed_repeat: int = 2, progress=None,
                  parts=PARTS) -> dict:
    """Run ``parts`` (every one by default; ``area=False`` drops the synthesis); returns the
    results (see :func:`markdown`)."""
    tasks = []
    if "tload" in parts:
        for w in WIDTHS:
            for lay in TLoadLayout:
                for e in (1, 2, 4, 8):
                    for s in SIZES:
                        tasks.append(("tload", _tload_case, (lay.name, e, s, w)))
                    tasks.append(("tload_stream", _tload_stream, (lay.name, e, w)))
            tasks += [("tload_narrow", _tload_narrow, (n, w)) for n in NARROW]
    if "l1l0" in parts:
        for w in WIDTHS:
            for dt in LDT_DTYPES:
                for r in REPEATS:
                    tasks.append(("l1l0", _l1l0_case, (dt, r, w)))
    if "load-align" in parts:
        tasks.append(("load_align", _load_align, ()))
    if "tstore" in parts:
        for w in WIDTHS:
            for lay in TLoadLayout:
                for e in (1, 2, 4, 8):
                    tasks.append(("tstore", _tstore_case, (lay.name, e, w)))
            tasks.append(("tstore_kernel", _tstore_kernel, (w,)))
    if "speed" in parts:
        for b in BACKENDS:
            if missing(b):
                raise RuntimeError(missing(b))
            for h in ("python", "bulk"):
                tasks.append(("speed", _speed, (b, h, SPEED_REPEAT.get((b, h), speed_repeat))))
    if "regress" in parts:
        for b in BACKENDS:
            if missing(b):
                raise RuntimeError(missing(b))
        runs = list(REGRESS_COUNTS.items()) + [("verilator", REGRESS_COUNTS["amaranth"])]
        tasks += [("regress", _regress, r) for r in runs]
    if "tiles" in parts:
        tasks += [("tiles_stream", _tiles_stream, (lay,)) for lay in SHAPES]
        tasks.append(("tiles_tadd", _tiles_tadd, ()))
        if area:
            tasks += [("tiles_area", _tiles_area, (p,)) for p in ("system", "regfile",
                                                                   "engine")]
    if "golden" in parts:
        tasks.append(("golden", _golden, ()))
    if area and "area" in parts:
        tasks += [("area", _area, (t,)) for t in area_rows()]
    # the slow ones first, so the pool ends together
    order = {"area": 0, "tiles_area": 0, "regress": 1, "speed": 1, "golden": 2, "l1l0": 3,
             "tiles_stream": 3, "tiles_tadd": 3, "tstore_kernel": 3, "tload": 4,
             "tload_stream": 4, "tload_narrow": 4, "tstore": 4, "load_align": 5}
    tasks.sort(key=lambda t: order[t[0]])
    out = {"tload": [], "tload_stream": [], "tload_narrow": [], "l1l0": [], "speed": [], "regress": [], "area": [], "load_align": None,
           "golden": None, "tiles_stream": [], "tiles_tadd": None, "tiles_area": [],
           "tstore": [], "tstore_kernel": []}
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(kind, pool.submit(fn, *args)) for kind, fn, args in tasks]
        for k, (kind, fut) in enumerate(futures):
            r = fut.result()
            if kind in ("load_align", "golden", "tiles_tadd"):
                out[kind] = r
            else:
                out[kind].append(r)
            if progress:
                progress(k + 1, len(futures) + ("cluster" in parts))
    if "cluster" in parts:                       # alone: it measures both cores
        out["cluster"] = measure_cluster()
        if progress:
            progress(len(futures) + 1, len(futures) + 1)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    out["jobs"] = jobs
    out["speed_repeat"] = speed_repeat
    return out


def markdown(res: dict) -> str:
    """The results as Markdown tables."""
    L = []
    L += _tload_markdown(res)
    for w in dict.fromkeys(r["width"] for r in res["l1l0"]):
        L += [f"### L1 -> L0 engine (LoadDataWithTranspose), W = {w}: efficiency (first "
              f"write, cycles after accept) / its fraction of the fill bound beats / (beats + "
              f"S/P)", "",
              "| data type | " + " | ".join(f"repeat {r}" for r in REPEATS) + " |",
              "|---|" + "---:|" * len(REPEATS)]
        l1 = {(r["dtype"], r["repeat"]): r for r in res["l1l0"] if r["width"] == w}
        for dt in dict.fromkeys(d for d, _ in l1):
            L.append(f"| {dt} | " + " | ".join(
                f"{l1[(dt, r)]['efficiency']:.3f} ({l1[(dt, r)]['first_write']}) / "
                f"{l1[(dt, r)]['of_fill_bound']:.3f}" for r in REPEATS) + " |")
        L.append("")
    la = res["load_align"]
    if la:
        L += [f"### LoadAlign unit: {la['ops_per_cycle']} ops/cycle over {la['ops']} ops of "
              f"every mode back to back; latency {la['latency']} cycles", ""]
    L += _tstore_markdown(res)
    L += _tiles_markdown(res)
    sp = res["speed"]
    if sp:
        base = next((r["cycles_per_s"] for r in sp if r["backend"] == "amaranth"
                     and r["harness"] == "bulk"), None)
        L += ["### Simulation speed: a stream of 64 KB TLOADs (ND2NZ FP16 128 x 256) back to "
              "back; simulated cycles per second", "",
              "| backend | harness | TLOADs | cycles | seconds | cycles/s | vs Amaranth bulk |",
              "|---|---|---:|---:|---:|---:|---:|"]
        for r in sp:
            ratio = f"{r['cycles_per_s'] / base:.1f}x" if base else "-"
            L.append(f"| {r['backend']} | {r['harness']} | {r.get('repeat', '-')} "
                     f"| {r['cycles']} | {r['seconds']:.2f} | {r['cycles_per_s']:,.0f} "
                     f"| {ratio} |")
        L.append("")
    rg = res.get("regress")
    if rg:
        base = next((r["scenarios_per_s"] for r in rg if r["backend"] == "amaranth"), None)
        L += ["### Regress speed: scenarios per second of `tilecosim regress --seed 1 --jobs 1` "
              f"({', '.join(rg[0]['ops'])}; the same scenarios first), after the builds", "",
              "| backend | harness | per op | scenarios | seconds | scenarios/s | vs Amaranth |",
              "|---|---|---:|---:|---:|---:|---:|"]
        for r in rg:
            ratio = f"{r['scenarios_per_s'] / base:.1f}x" if base else "-"
            harness = "python" if r["backend"] == "amaranth" else "batch"
            L.append(f"| {r['backend']} | {harness} | {r['per_op']} | {r['scenarios']} "
                     f"| {r['seconds']:.1f} | {r['scenarios_per_s']:,.1f} | {ratio} |")
        L.append("")
    if res.get("cluster"):
        L += [cluster_md(res["cluster"]).rstrip("\n"), ""]
    g = res["golden"]
    if g:
        L += [f"### Golden model: the vectorized TLOAD moves a {g['tile_bytes'] // 1024} KB "
              f"tile in {g['fast_s'] * 1e3:.2f} ms ({g['fast_mb_per_s']} MB/s), {g['ratio']}x "
              f"the source's loops ({g['reference_s']} s)", ""]
    if L:
        L.pop()                                  # the blank line before the next section
    if res["area"]:
        L += ["", "### Area: Yosys `synth -noabc` (generic gates; flip-flops as after any "
              "synthesis)", "",
              "| top | cells | flip-flops |", "|---|---:|---:|"]
        for a in res["area"]:
            L.append(f"| {a['top']} | {a['cells']:,} | {a['flip_flops']:,} |")
        for name, top in (("TLOAD", "tload_engine"), ("L1 -> L0", "l1l0_engine")):
            eng = {int(a["top"].split("W = ")[1].rstrip(")")): a for a in res["area"]
                   if a["top"].startswith(f"{top} (W = ")}
            if eng:
                L += ["", f"{name} engine area per byte/cycle: " + "; ".join(
                    f"W = {w}: {a['cells'] / w:,.0f} cells and {a['flip_flops'] / w:,.0f} "
                    f"flip-flops per byte/cycle" for w, a in sorted(eng.items())) + "."]
    L += ["", f"Measured in {res['seconds']} s with {res['jobs']} processes."]
    return "\n".join(L) + "\n"


#: the goals of the TLOAD engine at every W (issue 18)
GOAL_64K, GOAL_STREAM, GOAL_FILL = 0.95, 0.95, 0.97


def _tload_markdown(res) -> list[str]:
    """Per W: efficiency at each size (first write; for a transposing layout also its
    fraction of the fill bound), the stream of 16 x 2 KB, the narrow shapes."""
    L = []
    cells = {(r["layout"], r["dtype"], r["size"], r.get("width", 32)): r for r in res["tload"]}
    streams = {(r["layout"], r["dtype"], r["width"]): r for r in res.get("tload_stream") or []}
    for w in dict.fromkeys(r.get("width", 32) for r in res["tload"]):
        L += [f"### TLOAD engine, W = {w}: efficiency = ideal / cycles (first write, cycles "
              "after accept; transposing layouts: / fill bound), and a stream of 16 x 2 KB", "",
              "| layout | element | " + " | ".join(f"{s // 1024} KB" for s in SIZES)
              + " | stream (beats/cycle) |", "|---|---|" + "---:|" * (len(SIZES) + 1)]
        for lay, dt in dict.fromkeys((r["layout"], r["dtype"]) for r in res["tload"]):
            row = []
            for s in SIZES:
                c = cells.get((lay, dt, s, w))
                if c is None:
                    row.append("-")
                    continue
                text = f"{c['efficiency']:.3f} ({c['first_write']})"
                if c.get("fill_bound"):
                    text += f" / {c['efficiency'] / c['fill_bound']:.3f}"
                row.append(text)
            st = streams.get((lay, dt, w))
            row.append(f"{st['beats_per_cycle']:.3f}" if st else "-")
            L.append(f"| {lay} | {dt} | " + " | ".join(row) + " |")
        L.append("")
        narrow = [r for r in res.get("tload_narrow") or [] if r["width"] == w]
        if narrow:
            L += [f"Narrow dense tiles at W = {w} (8 KB; transposing: / fill bound): " + "; ".join(
                f"{r['name']} {r['efficiency']:.3f}"
                + (f" / {r['efficiency'] / r['fill_bound']:.3f}" if r.get("fill_bound") else "")
                for r in narrow) + ".", ""]
    return L


def _tstore_markdown(res) -> list[str]:
    """Per W: each layout and element size at 64 KB, and the kernel."""
    L = []
    rows = res.get("tstore") or []
    if rows:
        dts = list(dict.fromkeys(r["dtype"] for r in rows))
        L += ["### TSTORE engine: one 64 KB tile, dense; efficiency = beats / cycles "
              "(first write, cycles after accept) / its fraction of the bound (transposing "
              "layouts: beats / (beats + S), D14)", "",
              "| W | layout | " + " | ".join(dts) + " |", "|---|---|" + "---:|" * len(dts)]
        cells = {(r["width"], r["layout"], r["dtype"]): r for r in rows}
        for w, lay in dict.fromkeys((r["width"], r["layout"]) for r in rows):
            L.append(f"| {w} | {lay} | " + " | ".join(
                f"{c['efficiency']:.3f} ({c['first_write']}) / {c['of_bound']:.3f}"
                if (c := cells.get((w, lay, dt))) else "-" for dt in dts) + " |")
        worst = min(rows, key=lambda r: r["of_bound"])
        L += ["", f"Lowest fraction of its bound: {worst['of_bound']:.3f} ({worst['layout']} "
              f"{worst['dtype']}, W = {worst['width']}).", ""]
    ks = res.get("tstore_kernel") or []
    if ks:
        L += ["### Kernel through the tile system: TLOAD A, TLOAD B, TADD, TSTORE (4 KB S16 "
              "tiles) against its parts alone; and the cost of program order (D15): TLOAD, "
              "TSTORE, TLOAD of other registers and memory", "",
              "| W | kernel | parts (TLOAD, TLOAD, TADD, TSTORE) | sum | overlap "
              "| ordered | alone (TLOAD, TSTORE, TLOAD) | floor | cost of the order |",
              "|---:|---:|---|---:|---:|---:|---|---:|---:|"]
        for k in ks:
            o = k["order"]
            L.append(f"| {k['width']} | {k['kernel']} | {', '.join(map(str, k['parts']))} "
                     f"| {k['sum']} | {100 * k['overlap']:.1f} % | {o['cycles']} "
                     f"| {', '.join(map(str, o['parts']))} | {o['floor']} "
                     f"| {o['cycles'] - o['floor']} |")
        L.append("")
    return L


def _tiles_markdown(res) -> list[str]:
    L = []
    ts = res.get("tiles_stream") or []
    if ts:
        L += ["### Tile system: 16 TLOADs of 2 KB (S16) streamed as block records through the "
              "RTL tile system, against the same 16 through the TLOAD engine alone", "",
              "| layout | ideal beats | system cycles | engine cycles | system efficiency "
              "| engine efficiency | system / engine | last record -> first write |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in ts:
            L.append(f"| {r['layout']} | {r['ideal']} | {r['system_cycles']} "
                     f"| {r['engine_cycles']} | {r['system_efficiency']:.3f} "
                     f"| {r['engine_efficiency']:.3f} | {r['ratio']:.3f} | {r['latency']} |")
        L.append("")
    t = res.get("tiles_tadd")
    if t:
        L += [f"TADD of 4 KB: {t['beats']} beats in {t['cycles']} cycles "
              f"({t['beats_per_cycle']:.2f} beats/cycle); last record -> first write "
              f"{t['latency']} cycles.", ""]
    ta = res.get("tiles_area") or []
    if ta:
        what = {"system": "TileSystem (W = 32, 4 KB registers)",
                "regfile": "TileRegisterFile alone", "engine": "its TLOAD engine alone"}
        L += ["Area (Yosys generic synthesis, memories kept as memory cells; the SRAM "
              "counted in bits):", "",
              "| design | cells | flip-flops | SRAM bits |", "|---|---:|---:|---:|"]
        for a in ta:
            L.append(f"| {what[a['part']]} | {a['cells']:,} | {a['flip_flops']:,} "
                     f"| {a['sram_bits']:,} |")
        L.append("")
    return L


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))
