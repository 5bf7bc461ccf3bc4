"""The TSTORE engine (D15): a tile register's footprint to global memory."""
