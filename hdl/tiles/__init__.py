"""The tile system: the tile register file (seed 002), the record assembler, the
elementwise ALU and the top that joins them with the TLOAD engine."""
