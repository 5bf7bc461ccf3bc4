"""Functional coverage of the regression (``tilecosim regress``).

A bin is a string ``<short>.<point>:<value>``; each operation of the registry
(:mod:`tilecosim.ops`) declares its own bins and which a scenario hits.  Datapath bins
count only scenarios the golden model accepts (a faulting operation moves no data); fault
bins count faulting ones.  The fault kinds are those each single operation can raise
(TileAllocation and TileReleased belong to the tile register file, not to an engine).

The bins of today's operations: TLOAD 164 (:mod:`tilecosim.ops.tload`),
LoadDataWithTranspose 106 (:mod:`tilecosim.ops.load_data_with_transpose`), LoadAlign 125
(:mod:`tilecosim.ops.load_align`), StoreAlign 104 (:mod:`tilecosim.ops.store_align`), and
the programs of the tile system 48 (:mod:`tilecosim.ops.program`, where TileAllocation and
TileReleased are reached).  Among them the edge bins (D17, ``Operation.edges``): each
bound met and passed by the smallest step, each range field at its limits, each pair of
rules that can meet; regress draws them first.
"""

from tilecosim import ops

__all__ = ["OPS", "all_bins", "hits"]

#: the operations with bins, in the registry's order
OPS = tuple(ops.regress_names())


def all_bins(op: str) -> list[str]:
    """Every bin of ``op``, in a stable order."""
    if op not in OPS:
        raise ValueError(f"op={op!r}: one of {', '.join(OPS)}")
    return ops.get(op).bins()


def hits(drawn: dict) -> dict:
    """bin -> number of scenarios that hit it, over ``drawn`` (op -> scenarios), every bin
    of every drawn operation present."""
    out = {}
    for op, scs in drawn.items():
        for b in all_bins(op):
            out[b] = 0
        for s in scs:
            for b in s.bins:
                out[b] = out.get(b, 0) + 1
    return out
