"""tilecosim golden model: pure numpy, never imports Amaranth."""
