"""tilecosim gateware: synthesizable Amaranth Components only, a folder per engine.

* :mod:`.common` -- line and fractal sizes, D8 fault codes, the completion payload, the
  checks of parameters; :mod:`.completion` -- the in-flight count and ordered completions;
* :mod:`.transpose` -- the square transpose unit (and its naive twin), shared by TLOAD and
  LoadDataWithTranspose;
* :mod:`.tload` -- the TLOAD engine: decoder, fractal address generator, pad/merge, engine;
* :mod:`.l1l0` -- the L1 -> L0 engine (LoadDataWithTranspose);
* :mod:`.align` -- the LoadAlign and StoreAlign units.

This package imports Amaranth, the golden model's tables and enums, and itself; nothing of
the tool (tilecosim.sim, .ops, .flows, .cli).
"""
