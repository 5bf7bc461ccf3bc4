"""The list of proofs: what each proves, how (``bmc`` to a depth, or ``prove``: k-induction,
which holds for every depth), and whether it is quick (a minute or less on one core:
``make check`` proves it, and ``make test`` if it takes 10 s or less); ``make formal`` runs
them all.  The stream-contract proofs of the units are made from the registry of operations (:func:`stream_contract`,
:func:`tilecosim.flows.formal.all_proofs`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from . import align, streams
from .addrgen import addrgen_one_tile
from .common import Harness
from .completion import completion_order
from .transpose import transpose_scoreboard

__all__ = ["Proof", "PROOFS", "stream_contract"]


@dataclass(frozen=True)
class Proof:
    name: str
    unit: str                      # the Component proved
    what: str                      # one line
    build: Callable[[], Harness]
    mode: str                      # "prove" (k-induction) or "bmc"
    depth: int                     # induction length, or BMC depth
    cover_depth: int               # the steps within which every Cover must be reached
    quick: bool = False


def _transpose(line_bits, sizes):
    def build():
        return transpose_scoreboard(line_bits, sizes)
    return build


def stream_contract(name: str, label: str, module: str, cls: str, environment: str | None,
                    params: dict, quick: bool) -> Proof:
    """The proof ``streams-<name>`` that the gateware Component ``cls`` of ``module`` (built
    as ``cls(**params)``, imported only when the proof is built) keeps the stream contract,
    under the assumptions ``environment`` of :mod:`.streams`.  The flows make one for each
    unit of the registry of operations that names a proof."""
    def build():
        make = getattr(importlib.import_module(module), cls)
        return streams.stream_contract(make(**params),
                                       environment and getattr(streams, environment))
    return Proof(f"streams-{name}", label, "every output stream keeps the valid/ready contract, "
                 "is idle after reset until an input is offered", build, "bmc", 8,
                 cover_depth=20, quick=quick)


def _align(which):
    def build():
        return getattr(align, f"{which}_align_modes")()
    return build


def _addrgen():
    return addrgen_one_tile()


def _completion():
    return completion_order()


PROOFS: list[Proof] = [
    Proof("transpose-64", "SquareTranspose(max_rows=16, line_bits=64)",
          "squares of b4..b64 in any order, any back-pressure: every column is the transpose "
          "of its square; stream contract", _transpose(64, (2, 3, 4, 5, 6)), "prove", 3,
          cover_depth=50),
    *(Proof(f"transpose-64-b{1 << k}", "SquareTranspose(line_bits=64)",
            f"squares of b{1 << k} ({64 >> k}x{64 >> k}): every column is the transpose of its "
            "square; stream contract", _transpose(64, (k,)), "prove", 3,
            cover_depth=3 * (64 >> k) + 6, quick=True)
      for k in (3, 4, 5, 6)),
    *(Proof(f"transpose-256-b{1 << k}", "SquareTranspose(line_bits=256)",
            f"squares of b{1 << k} ({256 >> k}x{256 >> k}) in the engines' instance: every column "
            "is the transpose of its square; stream contract", _transpose(256, (k,)), "prove",
            3, cover_depth=3 * (256 >> k) + 6)
      for k in (6,)),
    Proof("completion-order", "CompletionQueue",
          "completions leave in instruction order, faults included; stream contract",
          _completion, "bmc", 16, cover_depth=16, quick=True),
    Proof("addrgen-one-tile", "FractalAddressGenerator",
          "one legal TLOAD of a 512-byte tile, any layout, shape and extents: requests within "
          "the source, 16 lines filled, no address twice", _addrgen, "bmc", 20, cover_depth=20,
          quick=True),
    Proof("load-align-modes", "LoadAlignUnit(vl=64)",
          "any byte of any op's dst0/dst1 is the window byte its mode names (D11), or zero",
          _align("load"), "bmc", 6, cover_depth=6),
    Proof("store-align-modes", "StoreAlignUnit(vl=64)",
          "any UB byte of any op's write, and its enable, is what its mode names (D12)",
          _align("store"), "bmc", 6, cover_depth=6, quick=True),
]
