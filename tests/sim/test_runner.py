"""The runner's build inputs: what the converted-Verilog cache is keyed on, and the
Verilog that Verilator is given; a bench that leaves no result."""

from pathlib import Path

import numpy as np
import pytest

from amaranth import Module
from amaranth.back import verilog
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.sim import runner


def test_the_conversion_cache_key_covers_the_harness_gateware(monkeypatch):
    """A harness lives in tilecosim/sim, not tilecosim/hdl: editing it must not reuse the
    Verilog converted from its old text."""
    digest = runner._hdl_digest.__wrapped__            # the sources as they are on disk
    before = digest()
    real = Path.read_bytes

    def edited(self):
        data = real(self)
        return data + b"# edited" if self.name == "harness.py" else data
    monkeypatch.setattr(Path, "read_bytes", edited)
    assert digest() != before


def test_a_running_process_keys_its_conversions_by_the_sources_it_imported(monkeypatch):
    """The digest is read once, at import: an engine edited while a regress runs (its
    processes converting the engine they imported) does not put the old engine's Verilog
    under the edited sources' key."""
    before = runner._hdl_digest()
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: real(self) + (
        b"# edited" if self.name == "engine.py" else b""))
    assert runner._hdl_digest.__wrapped__() != before        # the disk changed
    assert runner._hdl_digest() == before                    # this process's key did not


class _Two(wiring.Component):
    def __init__(self):
        super().__init__({"a": In(4), "q": Out(8), "r": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.zeros = z = memory.Memory(shape=8, depth=16, init=[])
        m.submodules.lut = t = memory.Memory(shape=8, depth=16, init=[k + 1 for k in range(16)])
        wz = z.write_port()
        m.d.comb += [wz.addr.eq(self.a), wz.data.eq(self.a), wz.en.eq(1)]
        rz, rt = z.read_port(), t.read_port()
        m.d.comb += [rz.addr.eq(self.a), rt.addr.eq(self.a), self.q.eq(rz.data),
                     self.r.eq(rt.data)]
        return m


def test_only_all_zero_memory_initializers_are_dropped():
    text = verilog.convert(_Two(), name="two", emit_src=False)
    assert text.count("initial begin") == 2
    out = runner.drop_zero_inits(text)
    assert out.count("initial begin") == 1
    assert "lut[15] = 8'h10;" in out and "zeros[3] =" not in out
    assert "reg [7:0] zeros [15:0];" in out                # the memory itself stays


def test_verilator_sees_only_the_signals_named_public():
    text = runner.public_vlt("batch_tload", ("clk", "rst", "instr__en"))
    assert text.splitlines() == [
        "`verilator_config",
        'public_flat_rw -module "batch_tload" -var "clk"',
        'public_flat_rw -module "batch_tload" -var "rst"',
        'public_flat_rw -module "batch_tload" -var "instr__en"']


def test_the_conversion_cache_key_ignores_the_tool_around_the_gateware(monkeypatch):
    """Editing the runner or a Python bench does not throw every converted design away."""
    digest = runner._hdl_digest.__wrapped__
    before = digest()
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: real(self) + (
        b"# edited" if self.name in ("runner.py", "api.py", "streams.py") else b""))
    assert digest() == before


class _FailsToLoad:
    """Pickles fine here; loading it in the simulator's Python raises (int('x'))."""
    def __reduce__(self):
        return (int, ("x",))


def test_a_bench_that_leaves_no_result_is_a_bench_error_naming_the_log(tmp_path, monkeypatch):
    """The log the message names is kept in $TILECOSIM_LOG_DIR (default build/logs) and
    holds the bench's error; the run's temporary folder is gone."""
    from cocotb_tests.simulators import need
    from tilecosim import ops
    from tilecosim.sim.benches.program import program_setup
    from tilecosim.sim.runner import BenchError, run_bench
    need("icarus")
    monkeypatch.setenv("TILECOSIM_LOG_DIR", str(tmp_path / "logs"))
    make = ops.top("load_align_unit").make
    with pytest.raises(BenchError, match=r"icarus .*\(log: .*\.log\)") as e:
        run_bench("icarus", make, "load_align_unit", program_setup, (_FailsToLoad(),),
                  key="load_align_unit")
    log = Path(str(e.value).split("(log: ")[1].rstrip(")"))
    assert log.parent == tmp_path / "logs" and log.name.startswith("load_align_unit-icarus")
    assert "invalid literal for int()" in log.read_text()


class _Converted(Exception):
    """Raised by the stand-in conversion: the key is all the test needs."""


@pytest.mark.parametrize("run", ["simulate_load_align", "store_align_run"])
def test_a_unit_is_converted_once_whatever_the_size_of_its_ub(run, monkeypatch):
    """The LoadAlign and StoreAlign units are told the UB size at run time (the ub_size
    port): benches over UB images of different sizes share one conversion, and a
    different VL gets its own."""
    from tilecosim.sim.benches import align
    keys = []

    def convert(make_dut, top, key=None):
        keys.append((top, key))
        raise _Converted
    monkeypatch.setattr(runner, "to_verilog", convert)
    for size, vl in ((4096, 256), (1 << 16, 256), (4096, 128)):
        with pytest.raises(_Converted):
            getattr(align, run)([], np.zeros(size, np.uint8), vl=vl, backend="icarus")
    assert keys[0] == keys[1] != keys[2]
