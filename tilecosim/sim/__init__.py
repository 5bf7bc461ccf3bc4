"""Simulation: the simulator-neutral bench API, stream drivers, port lists from signatures,
the backend runner (Amaranth, or cocotb on Icarus/Verilator), the benches and the bulk harness."""
