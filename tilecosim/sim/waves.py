"""GTKWave save files for the waveforms of the benches: one collapsible group per stream of
an engine (valid, ready, payload), so ``gtkwave run.fst run.gtkw`` opens on the handshakes.

Scopes differ per simulator: Amaranth's VCD puts the design under ``bench.top.dut``, Icarus
(cocotb's dump module) under the top module's name, Verilator under ``TOP.<top>``.
"""

from pathlib import Path

__all__ = ["STREAMS", "write_gtkw"]

#: top -> (group, signals) in the order they are shown; a name without "__" is a plain port
STREAMS = {
    "tload_engine": [("instr", "instr"), ("memory requests", "req"),
                     ("memory responses", "resp"), ("tile writes", "write"),
                     ("completions", "done")],
    "l1l0_engine": [("op", "op"), ("L1 reads", "rd"), ("L1 data", "rd_data"),
                    ("L0 writes", "wr"), ("completions", "done")],
    "load_align_unit": [("op", "op"), ("UB read", ["ub_en", "ub_addr", "ub_data"]),
                        ("result", "res")],
    "store_align_unit": [("op", "op"), ("UB write", ["ub_wen", "ub_waddr", "ub_wbe"]),
                         ("result", "res")],
    "bulk_tload": [("run", ["start", "finished", "cycles", "fault"])],
}


def _scope(top: str, backend: str) -> str:
    return {"amaranth": "bench.top.dut.", "icarus": f"{top}.",
            "verilator": f"TOP.{top}."}[backend]


def write_gtkw(wave: str, top: str, backend: str) -> Path:
    """Write ``<wave>.gtkw`` next to the waveform ``wave``; returns its path."""
    scope = _scope(top, backend)
    lines = [f'[dumpfile] "{Path(wave).resolve()}"', "[timestart] 0", "[size] 1400 800",
             "[sst_width] 250", "[signals_width] 260"]
    for group, sig in STREAMS.get(top, []):
        names = sig if isinstance(sig, list) else [f"{sig}__valid", f"{sig}__ready",
                                                   f"{sig}__payload"]
        lines += ["@800200", f"-{group}"]
        for n in names:
            one_bit = n.endswith(("__valid", "__ready", "_en", "_wen")) or n in ("start",
                                                                                "finished")
            lines += ["@28" if one_bit else "@22", f"{scope}{n}"]
        lines += ["@1000200", f"-{group}"]
    path = Path(f"{wave}.gtkw")
    path.write_text("\n".join(lines) + "\n")
    return path
