"""The L1 -> L0 engine (LoadDataWithTranspose)."""
