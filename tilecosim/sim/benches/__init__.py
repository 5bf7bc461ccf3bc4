"""The benches, one per operation family, each a ``setup(*args) -> (processes, result)``."""
