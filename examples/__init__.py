"""The example programs and designs, shipped inside the package as ``tilecosim.examples``:
``tilecosim examples`` lists them or copies them out, and every command that reads a program
or a design takes one by the name ``example:NAME``."""
