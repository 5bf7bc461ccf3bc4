"""pytest side of the cocotb runs: skip (locally) or fail (CI=true) when a simulator is
missing, then build and run through :func:`hdl.cocotb_run.build_and_test`."""

from pathlib import Path

import pytest

from hdl.cocotb_run import SIMULATORS, build_and_test, missing
from hdl.toolchain import in_ci

__all__ = ["SIMULATORS", "need", "run_cocotb_test"]


def need(sim: str) -> None:
    reason = missing(sim)
    if reason:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)


def run_cocotb_test(sim: str, verilog: str, top: str, module: str, build_dir: Path,
                    env: dict, waves: bool = False) -> None:
    need(sim)
    build_and_test(sim, verilog, top, module, build_dir, env, waves)
