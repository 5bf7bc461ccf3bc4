"""Benchmarks behind ``tilecosim bench`` (elsewhere "bench" means a testbench)."""
