"""Formal proofs of the gateware: properties written with Amaranth's ``Assert`` / ``Assume``
/ ``Cover`` around an unmodified unit, proved by SymbiYosys (``yowasp-sby``) with the yices
SMT solver.  :mod:`.proofs` is the list of proofs; :mod:`.sby` runs one."""
