"""tilecosim hardware side: Amaranth components, Verilog generation, simulator
adapters and the command-line interface.

Importing this package does not import Amaranth; the components do.
"""
