"""The TLOAD engine: decoder, fractal address generator, pad/merge, engine, port types."""
