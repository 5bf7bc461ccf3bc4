"""tilecosim: hardware-modelled cosimulation of an AI accelerator's tile datapaths.

One installed package, in layers whose imports only go down:

* :mod:`tilecosim.model` -- the golden model (pure numpy; the repository's ``model/``);
* :mod:`tilecosim.hdl` -- the synthesizable Amaranth gateware (the repository's ``hdl/``);
* :mod:`tilecosim.sim` -- the simulator-neutral bench API, stream drivers, backends, benches;
* :mod:`tilecosim.ops` -- the registry: one :class:`~tilecosim.ops.Operation` per operation;
* :mod:`tilecosim.flows` -- regress, coverage, mutation, Verilog generation and lint;
* :mod:`tilecosim.perf` -- benchmarks (``tilecosim bench``);
* :mod:`tilecosim.cli` -- the ``tilecosim`` command line.
"""
