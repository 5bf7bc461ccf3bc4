"""What every operation of the registry is made of: :class:`Operation`, the :class:`Top` of
its Verilog and the :class:`Outcome` of a bench run (the registry itself is
:mod:`tilecosim.ops`)."""

from __future__ import annotations

import copy
import importlib
import random
from dataclasses import dataclass, field
from typing import Callable

from tilecosim.sim.contract import Contract, derive
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.ports import probe

__all__ = ["Top", "Unit", "Outcome", "Operation", "FaultRule", "by_class"]


@dataclass(frozen=True)
class Top:
    """A Verilog top of ``tilecosim verilog``: a file stem (the module name) and the design;
    ``parts``, units inside it whose code coverage is also reported on its own:
    (instance, unit name)."""
    name: str
    make: Callable                   # make(profile) -> a wiring.Component
    what: str                        # one line for the listing
    parts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FaultRule:
    """One row of an operation's fault table on the contract page (docs/contract.md), in the
    order the model checks its rules: the first broken rule's code is the completion's.

    ``fault`` the D8 name; ``when`` the boundary, as the inequality over the fields that
    faults; ``at_zero`` whether it is checked when the instruction's count is 0; ``edges``
    the edge bins regress draws on its sides (D17), legal ones (``.edge:``) and faulting
    ones (``.fault:``) -- a test draws each through the model and holds the row to what it
    says (tests/sim/test_contract.py)."""
    fault: str
    when: str
    at_zero: str = "-"
    edges: tuple = ()


@dataclass
class Outcome:
    """What a bench run of a batch of scenarios found.

    ``problems`` maps the index of a scenario in the batch to what went wrong (-1: not
    attributable to one scenario); ``waveform`` names the waveform of a hang; ``cycles`` and
    ``ideal`` are the batch's cycles and its ideal cycle count."""
    problems: dict = field(default_factory=dict)
    waveform: str | None = None
    cycles: int = 0
    ideal: int = 0
    #: class -> [cycles, ideal, fill] (:func:`by_class`)
    classes: dict = field(default_factory=dict)


def by_class(classes: list, accepts: list, ends: list, ideals: list,
             fills: list | None = None) -> dict:
    """class -> [cycles, ideal cycles, fill cycles] of a batch: scenario i, of class
    ``classes[i]``, is given the cycles from the previous scenario's end (the first: from
    its accept) to its own end, so that the classes' cycles add up to the batch's;
    ``ideals[i]`` its ideal cycles (one beat a cycle), ``fills[i]`` the cycles its engine
    must wait before its first beat can leave (D14: a transposing layout's S source rows;
    none given: 0), so that ideal + fill is its single-instruction fill bound.  Empty when
    the bench did not see every end."""
    if not accepts or len(ends) < len(classes):
        return {}
    out: dict = {}
    prev = accepts[0] - 1
    for cls, end, ideal, fill in zip(classes, ends, ideals, fills or [0] * len(classes)):
        row = out.setdefault(cls, [0, 0, 0])
        row[0] += end - prev
        row[1] += ideal
        row[2] += fill
        prev = end
    return out


class Operation:
    """One operation of the accelerator, as the tool sees it.  Subclasses set the class
    attributes and implement the methods; an operation without a scenario generator
    (``regress = False``) is still simulated, converted, linted and mutated."""

    #: the name users type (CLI subcommand, ``regress --ops``); the seed's name in kebab case
    name: str
    #: the seed's own name of the operation
    seed_name: str
    #: its Verilog tops, in the order ``tilecosim verilog`` writes them
    tops: tuple[Top, ...] = ()
    #: the comparison tests of its gateware (the mutation runner runs them first)
    tests: tuple[str, ...] = ()
    #: its gateware units that the area table, the stream-contract proofs and the mutation
    #: runner take one by one (:class:`Unit`)
    units: tuple["Unit", ...] = ()
    #: does ``tilecosim regress`` draw scenarios of it?
    regress: bool = False
    #: ... when ``--ops`` is not given?  (False: only when named, e.g. ``--ops program``)
    regress_default: bool = True
    #: scenarios per bench run in ``regress`` of an operation without a batch harness (one
    #: with uses ``harness_batch``), on every backend
    batch: int = 24
    #: the most scenarios of one run (one ``start`` of the design) of the operation's batch
    #: harness (:mod:`tilecosim.sim.harness`), which :meth:`run_many` and ``cross_check(...,
    #: harness=True)`` use and ``regress`` runs on Icarus and Verilator; 0: no harness
    harness_batch: int = 0
    #: the memory image file that reproduce commands read (None: the command regenerates it
    #: from the seed)
    image_file: str | None = None
    #: the beat widths W its engine is built at (``regress --width``); None: the operation
    #: has no beat width (LoadAlign's is its VL), and runs the same at every W
    widths: tuple[int, ...] | None = None
    #: the beat width this instance simulates (see :meth:`at_width`)
    width: int = 32
    #: the module name of its port contract (D16; :meth:`contract`); None: the operation
    #: has none (the tile system)
    contract_module: str | None = None
    #: the contract's prose on docs/contract.md: what the engine's environment does on each
    #: port, and what the design must and must not do beyond the common rules
    contract_notes: str = ""
    #: the fault table of the contract page, in the model's checking order
    fault_rules: tuple = ()
    #: the sizes of the buffers regress runs with, as the contract page gives them
    regress_sizes: str = ""
    #: the design under test (D16): the built-in engine unless ``--dut`` names one from
    #: elsewhere (see :meth:`with_design`)
    design: Design = BUILTIN
    #: what a design from elsewhere may declare it implements, a subset of each (D16,
    #: ``--dut-supports``): key -> every value.  ``faults`` (does it check faults) and
    #: ``widths`` (its beat widths) are every contract's; an operation adds its own
    capabilities: dict = {"faults": (True, False)}

    def at_width(self, width: int) -> "Operation":
        """The operation simulated at beat width ``width`` (ValueError naming it when the
        operation's engine is not built at that width)."""
        if self.widths is None or width == self.width:
            return self
        if width not in self.widths:
            raise ValueError(f"--width {width}: {self.name} runs at W = "
                             f"{', '.join(map(str, self.widths))} only")
        other = copy.copy(self)
        other.width = width
        return other

    def with_design(self, design: Design) -> "Operation":
        """The operation simulated on ``design`` (which honours its port contract) instead
        of the built-in engine."""
        if design == self.design:
            return self
        if self.contract_module is None and not design.builtin:
            raise ValueError(f"--dut: {self.name} has no port contract")
        other = copy.copy(self)
        other.design = design
        return other

    # --- the port contract (D16) ---------------------------------------------------------
    def reference(self):
        """The built-in engine at this width: the reference design of the contract."""
        raise NotImplementedError

    def contract(self) -> Contract:
        """The port contract at this width, derived from :meth:`reference`'s signature."""
        if self.contract_module is None:
            raise ValueError(f"{self.name} has no port contract")
        return derive(probe(self.reference), self.name, self.contract_module,
                      self.width if self.widths else None)

    # --- a declared subset (D16) -----------------------------------------------------------
    def traits(self, item, fault) -> dict:
        """The capability values the scenario ``item`` (with the model's ``fault``) needs:
        key -> value (a key absent: it needs none of that key's)."""
        return {"faults": fault is not None}

    def bin_traits(self, bin_: str) -> dict:
        """key -> the set of values the scenarios hitting ``bin_`` have (a key absent:
        any).  Datapath bins count legal scenarios alone, fault bins faulting ones."""
        return {"faults": {".fault:" in bin_}}

    def supports(self, item, fault) -> bool:
        """Is the scenario inside the subset the design declares (always, for a design
        that declares none)?"""
        s = self.design.supports
        return all(v in s[k] for k, v in self.traits(item, fault).items() if k in s)

    def applicable(self, bin_: str) -> bool:
        """Can a scenario inside the declared subset hit ``bin_``?"""
        s = self.design.supports
        return all(values & set(s[k]) for k, values in self.bin_traits(bin_).items()
                   if k in s)

    # --- regress ------------------------------------------------------------------------
    def bins(self) -> list[str]:
        """Every functional-coverage bin, ``<short>.<point>:<value>``, in a stable order."""
        raise NotImplementedError

    def edges(self) -> list[str]:
        """The edge bins among :meth:`bins` (D17: each bound met and exceeded by one
        element, each range field at its limits, each pair of rules that can meet, codes no
        mode has), in the order ``regress`` draws them: first, before any other bin."""
        return []

    def draw(self, rng: random.Random, hint: str | None):
        """One scenario aimed at the bin ``hint`` (None: any): (item, model fault or None,
        the bins it hits)."""
        raise NotImplementedError

    def image(self, seed: int):
        """The memory image (numpy uint8) the scenarios of ``seed`` read."""
        raise NotImplementedError

    def scenario_class(self, item) -> str:
        """The class of a scenario its cycles are reported by (``regress``: cycles/ideal per
        class, e.g. per layout)."""
        return "all"

    def batch_key(self, item):
        """Scenarios with different keys never share a bench run (None: any may)."""
        return None

    def run(self, items: list, backend: str, image, seed: int, stall: float) -> Outcome:
        """Run ``items`` back to back through the design on ``backend`` with the
        idle/back-pressure probability ``stall`` drawn from ``seed``, and compare with the
        golden model."""
        raise NotImplementedError

    def run_many(self, batches: list, backend: str, image) -> list[Outcome]:
        """Run several batches ``(items, seed, stall)``, each as :meth:`run` would: through
        the operation's batch harness in one simulator start where it has one and
        ``backend`` is a Verilog simulator (same results and cycles), else one
        Python-driven bench run each."""
        return [self.run(items, backend, image, seed, stall) for items, seed, stall in batches]

    @staticmethod
    def wave_option(backend: str, path: str) -> dict:
        """The bench's keyword for a waveform at ``path``: ``vcd`` on Amaranth's simulator,
        ``waves`` on Icarus and Verilator (the format is the path's suffix)."""
        return {"vcd": path} if backend == "amaranth" else {"waves": path}

    def waveform(self, item, backend: str, image, seed: int, stall: float, path: str) -> bool:
        """Run ``item`` alone as :meth:`run` would, writing a waveform to ``path`` (VCD on
        Amaranth and Icarus, FST on Verilator); False when the operation cannot."""
        return False

    def harness_args(self) -> dict:
        """The keyword arguments of the batch harness's build that ``regress`` uses (the
        tests use the same, so that each simulator builds it once)."""
        return {"depth": self.harness_batch}

    def repro(self, item, backend: str, mem_seed: int, image_path, stall: float,
              seed: int) -> str:
        """The one-line ``tilecosim`` command that runs ``item`` alone."""
        raise NotImplementedError

    # --- the simulator tests ------------------------------------------------------------
    def cross_check(self, backend: str, harness: bool = False) -> dict:
        """Run the operation's fixed scenario set (every mode, a fault, back-pressure) on
        ``backend`` -- through the Python-driven bench, or with ``harness`` through the batch
        harness with the build ``regress`` uses -- assert the golden model's results, and
        return the cycle of every event relative to the first accept: equal on every
        simulator and in both harnesses."""
        raise NotImplementedError

    def __repr__(self):
        return f"<Operation {self.name}>"


@dataclass(frozen=True)
class Unit:
    """A gateware unit of an operation, as the flows that take a unit on its own see it: the
    class ``name`` of the file ``file`` under ``hdl/`` (imported only when built).

    ``tests`` are its own unit tests (the mutation runner runs them, then the operation's,
    first on a mutant of its file); ``area`` the rows of the area table, ``(label,
    keyword arguments)``; ``proof`` the name of its stream-contract proof (``formal --only
    streams-<proof>``; None: none), proved on ``cls(**proof_args)`` under the assumptions
    ``environment`` of :mod:`tilecosim.formal.streams` (None: any input), to depth 8;
    ``quick``: the proof takes a minute or less (``make check`` runs it; ``make test`` if it
    takes 10 s or less)."""
    name: str
    file: str
    tests: tuple[str, ...] = ()
    area: tuple[tuple[str, dict], ...] = ()
    proof: str | None = None
    proof_args: dict = field(default_factory=dict)
    environment: str | None = None
    quick: bool = False

    @property
    def module(self) -> str:
        """``tilecosim.hdl.tload.engine`` for ``tload/engine.py``."""
        return "tilecosim.hdl." + self.file.removesuffix(".py").replace("/", ".")

    def cls(self):
        return getattr(importlib.import_module(self.module), self.name)

    def label(self) -> str:
        """``LoadAlignUnit(vl=64)``: the instance its proof takes."""
        args = ", ".join(f"{k}={v}" for k, v in self.proof_args.items())
        return f"{self.name}({args})" if args else self.name
