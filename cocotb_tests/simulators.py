"""pytest side of the Verilog simulators: skip (locally) or fail (CI=true) when one is
missing, with what to install."""

import pytest

from tilecosim.sim.runner import VERILOG_SIMS, missing
from tilecosim.sim.toolchain import in_ci

__all__ = ["SIMULATORS", "need"]

SIMULATORS = VERILOG_SIMS


def need(sim: str) -> None:
    reason = missing(sim)
    if reason:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
