"""The registry of operations: everything the tool knows about an operation, in one place.

An :class:`Operation` declares the golden-model call, the design under test (its Verilog
tops), the bench run and its comparison, the constrained-random scenario generator, the
functional-coverage bins and the reproduce line.  ``regress``, the coverage report,
``verilog``, the wave groups, the mutation runner, the CLI's HDL backends and the simulator
tests iterate :data:`REGISTRY`; none of them names an operation.

Adding an operation: its golden model under ``model/``, its gateware under ``hdl/``, one
module here with a subclass of :class:`~tilecosim.ops.base.Operation`, and one line in :data:`REGISTRY`.
"""

from __future__ import annotations

from .base import Operation, Outcome, Top, Unit
from .load_align import LoadAlign
from .load_data_with_transpose import LoadDataWithTranspose
from .program import Program
from .store_align import StoreAlign
from .tload import TLoad

__all__ = ["Top", "Unit", "Outcome", "Operation", "REGISTRY", "get", "names", "regress_names",
           "regress_default_names", "tops",
           "top"]


#: every operation, in the order of the tool's listings
REGISTRY: list[Operation] = [TLoad(), LoadDataWithTranspose(), LoadAlign(), StoreAlign(),
                             Program()]


def get(name: str) -> Operation:
    for op in REGISTRY:
        if op.name == name:
            return op
    raise KeyError(f"{name!r} is not an operation: one of {', '.join(names())}")


def names() -> list[str]:
    return [op.name for op in REGISTRY]


def regress_names() -> list[str]:
    """The operations ``tilecosim regress`` draws scenarios of."""
    return [op.name for op in REGISTRY if op.regress]


def regress_default_names() -> list[str]:
    """The operations ``tilecosim regress`` runs when ``--ops`` is not given."""
    return [op.name for op in REGISTRY if op.regress and op.regress_default]


def tops() -> list[Top]:
    """Every Verilog top, operation by operation."""
    return [t for op in REGISTRY for t in op.tops]


def top(name: str) -> Top:
    for t in tops():
        if t.name == name:
            return t
    raise KeyError(name)
