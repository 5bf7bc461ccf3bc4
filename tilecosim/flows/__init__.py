"""Flows over the registry: regress, functional coverage, mutation, Verilog and lint."""
