"""GTKWave save files for the waveforms of the benches: one collapsible group per stream of
a design (valid, ready, payload) and one of its other ports, all derived from the design's
signature (:func:`tilecosim.sim.ports.wave_groups`), so ``gtkwave run.fst run.fst.gtkw``
opens on the handshakes.

Scopes differ per simulator: Amaranth's VCD puts the design under ``bench.top.dut``, Icarus
(cocotb's dump module) under the top module's name, Verilator under ``TOP.<top>``.
"""

from pathlib import Path

from .ports import ports, wave_groups

__all__ = ["write_gtkw"]


def _scope(top: str, backend: str) -> str:
    return {"amaranth": "bench.top.dut.", "icarus": f"{top}.",
            "verilator": f"TOP.{top}."}[backend]


def write_gtkw(wave: str, top: str, backend: str, component) -> Path:
    """Write ``<wave>.gtkw`` next to the waveform ``wave`` of the design ``component``
    (Verilog module ``top``) run on ``backend``; returns its path."""
    scope = _scope(top, backend)
    lines = [f'[dumpfile] "{Path(wave).resolve()}"', "[timestart] 0", "[size] 1400 800",
             "[sst_width] 250", "[signals_width] 260"]
    widths = {p.name: p.width for p in ports(component)}
    for group, names in wave_groups(component):
        lines += ["@800200", f"-{group}"]
        for n in names:
            lines += ["@28" if widths[n] == 1 else "@22", f"{scope}{n}"]
        lines += ["@1000200", f"-{group}"]
    path = Path(f"{wave}.gtkw")
    path.write_text("\n".join(lines) + "\n")
    return path

