"""Figures of the RTL tile system (``tilecosim bench --only tiles``).

* a stream of 16 TLOADs of 2 KB per layout through the system (records in, no stall) against
  the same 16 through the TLOAD engine alone: each one's efficiency = ideal beats / cycles,
  and their ratio (the tile register file must not add bubbles);
* TADD: write beats per cycle once started (a 4 KB tile: 128 beats);
* latency from an instruction's last record to its first tile write, TLOAD and TADD;
* area: Yosys cells and flip-flops of the system's logic, with the SRAM's bits apart.

Every figure comes from a run that also matched the golden Machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile

from amaranth.back import rtlil

from tilecosim.hdl.tiles.regfile import NSLOTS, TileRegisterFile
from tilecosim.hdl.tiles.system import TileSystem
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.model.asm import parse_program
from tilecosim.model.display import seeded_memory
from tilecosim.perf.tload import yosys
from tilecosim.sim.benches.program import ProgramConfig, golden_steps, run_program
from tilecosim.sim.benches.tload import SimConfig, run_and_compare
from tilecosim.sim.runner import cache_dir

__all__ = ["stream_case", "tadd_case", "tiles_area", "STREAM"]

STREAM = 16                  # TLOADs of the stream
SHAPES = {"NORM": (16, 64), "ND2NZ": (16, 64), "ND2ZN": (64, 16), "DN2NZ": (64, 16),
          "DN2ZN": (16, 64)}   # rows x cols of each 2 KB S16 tile


def _regs():
    return {"a0": 0, "a1": 4096}


def stream_case(layout: str) -> dict:
    """16 TLOADs of 2 KB (S16) of ``layout``: the system against the engine alone."""
    rows, cols = SHAPES[layout]
    lb0, lb1 = (rows, cols) if layout.startswith("DN") else (cols, rows)
    queues = "TUMN"
    lines = [f"TLOAD.{layout} <LB0:{lb0}, LB1:{lb1}, S16, Zero>, [a{k % 2}], "
             f"->{queues[k % 4]}<2KB>" for k in range(STREAM)]
    mem = seeded_memory(3, 1 << 16)
    cfg = ProgramConfig(check="end")
    steps = golden_steps(parse_program("\n".join(lines)), _regs(), mem, cfg.profile, cfg.lcfr)
    res, problems = run_program(steps, mem, cfg)
    if problems:
        raise AssertionError(f"tile system, {layout} stream: {problems[:3]}")
    ideal = STREAM * 2048 // 32
    system = ideal / (res.last_write_cycle - res.first_record_cycle + 1)
    plist = [insn.resolve(_regs()) for _, insn in parse_program("\n".join(lines))]
    eng, _, mism, probs = run_and_compare(plist, mem, SimConfig())
    if mism or probs:
        raise AssertionError(f"engine, {layout} stream: {(mism + probs)[:3]}")
    engine = ideal / eng.cycles
    return {"layout": layout, "ideal": ideal,
            "system_cycles": res.last_write_cycle - res.first_record_cycle + 1,
            "engine_cycles": eng.cycles, "system_efficiency": round(system, 4),
            "engine_efficiency": round(engine, 4), "ratio": round(system / engine, 4),
            "latency": res.first_writes[0] - res.record_cycles[0],
            "write_cycles": res.write_cycles}


def tadd_case() -> dict:
    """A 4 KB TADD (128 beats) after its two TLOADs have completed (each instruction checked
    before the next is sent): beats per cycle once its first beat is written, and the
    latency from its last record to that write."""
    text = ("TLOAD.NORM <LB0:16, LB1:128, S16, Zero>, [a0], ->T<4KB>\n"
            "TLOAD.NORM <LB0:16, LB1:128, S16, Zero>, [a1], ->T<4KB>\n"
            "TADD T#1, T#2, ->U\n")
    mem = seeded_memory(4, 1 << 16)
    cfg = ProgramConfig(check="each")
    steps = golden_steps(parse_program(text), _regs(), mem, cfg.profile, cfg.lcfr)
    res, problems = run_program(steps, mem, cfg)
    if problems:
        raise AssertionError(f"tile system, TADD: {problems[:3]}")
    start = res.first_writes[2]
    beats = 4096 // 32
    return {"beats": beats, "cycles": res.last_write_cycle - start + 1,
            "beats_per_cycle": round(beats / (res.last_write_cycle - start + 1), 4),
            "latency": start - res.record_cycles[2]}


#: the synthesis of the tile system: Yosys's generic flow up to the fine stage, its memories
#: kept as memory cells (mapping the 2 Mbit SRAM to flip-flops would measure nothing useful)
SYNTH_KEEP_MEM = ("synth -top {name} -noabc -run begin:fine; opt -fast -full; techmap; "
                  "opt -fast")


def area_keep_mem(component, name: str) -> dict:
    """Cells (memories excluded), flip-flops and memory cells after
    :data:`SYNTH_KEEP_MEM`, cached by the SHA-1 of the RTLIL and the script."""
    text = rtlil.convert(component, name=name)
    digest = hashlib.sha1(f"{SYNTH_KEEP_MEM}\0{text}".encode()).hexdigest()[:20]
    cached = cache_dir() / f"area-{digest}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "top.il"), "w") as f:
            f.write(text)
        subprocess.run([yosys(), "-q", "-p", f"read_rtlil top.il; hierarchy -top {name}; "
                        f"flatten; {SYNTH_KEEP_MEM.format(name=name)}; "
                        f"tee -q -o stat.txt stat"],
                       cwd=d, check=True, capture_output=True, text=True)
        stat = open(os.path.join(d, "stat.txt")).read()
    counts = {k: int(n) for n, k in re.findall(r"^\s+(\d+)\s+(\$\w+)\s*$", stat, re.M)}
    mems = sum(n for k, n in counts.items() if k.startswith("$mem"))
    out = {"cells": sum(counts.values()) - mems,
           "flip_flops": sum(n for k, n in counts.items() if "DFF" in k),
           "memories": mems}
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(out))
    return out


def tiles_area(part: str) -> dict:
    """``part``: "system" (the top), "regfile" (the tile register file alone) or "engine"
    (the TLOAD engine alone, as inside the system), by the same synthesis; the SRAM's bits
    apart (64 registers x the LCFR maximum)."""
    make = {"system": lambda: TileSystem(), "regfile": lambda: TileRegisterFile(),
            "engine": lambda: TLoadEngine(width=32, lcfr=(256, 4096), checked=True)}[part]
    dut = make()
    out = area_keep_mem(dut, "top")
    sram = NSLOTS * 4096 * 8 if part != "engine" else 0
    return dict(out, part=part, sram_bits=sram)
