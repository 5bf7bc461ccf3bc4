"""Human-readable tiles: the logical matrix in the data type's numbers.

Loaded elements print as numbers; padded elements print as ``*`` (the header
gives the pad value), and elements left undefined by Null padding print as ``.``.  Wide or tall matrices are
elided in the middle like numpy does, unless ``full`` is set.
"""

from __future__ import annotations

import numpy as np

from .dtypes import PadValue, decode, dtype as _dtype, encode, format_value
from .layouts import to_tile
from .tload import TileImage

__all__ = ["format_tile", "ramp_memory", "index_ramp", "seeded_memory", "RAMP_PERIOD"]

#: Period of the ramp pattern per type: values 0..period-1 are exact in the type.
RAMP_PERIOD = {"FP64": 1 << 20, "FP32": 1 << 20, "TF32": 2048, "HF32": 4096, "FP16": 2048,
               "BF16": 256, "E4M3": 16, "E5M2": 8}


def ramp_memory(dt, size: int) -> np.ndarray:
    """Global memory in which the element at address k*esize holds the value k.

    Integers wrap at their width; floats repeat with :data:`RAMP_PERIOD` so
    every value is exact; types without an encoder (HiF8, E8M0, the 4-bit
    pairs) hold the byte ramp k & 0xff.  Integers are :func:`index_ramp`; the rest is built
    from one period, so a 1 GiB memory costs 1 GiB.
    """
    dt = _dtype(dt)
    es = dt.esize
    if dt.is_int and not dt.packed4:                      # two's complement wraps as k does
        return index_ramp(8 * es, size)
    if dt.name in RAMP_PERIOD:
        period = encode(dt, np.arange(RAMP_PERIOD[dt.name], dtype=np.int64))
        n = size // es
    else:
        period, n, es = np.arange(256, dtype=np.uint8), size, 1
    flat = np.resize(np.asarray(period, dtype=np.uint8).reshape(-1), n * es)
    mem = np.zeros(size, dtype=np.uint8)
    mem[:flat.size] = flat
    return mem


def index_ramp(bits: int, size: int) -> np.ndarray:
    """``size`` bytes in which the element of ``bits`` bits at index k holds k modulo
    2**bits, little-endian (for 4-bit elements, the even index in the low nibble): the
    built-in L1 and UB images of ``load-data-with-transpose`` and ``load-align``, printed
    in hex, show each element's own index."""
    if bits == 4:
        k = np.arange(2 * size, dtype=np.int64) & 0xF
        return (k[0::2] | (k[1::2] << 4)).astype(np.uint8)
    if bits not in (8, 16, 32, 64):
        raise ValueError(f"index_ramp: {bits}-bit elements (4, 8, 16, 32 or 64)")
    n = size * 8 // bits
    raw = np.arange(n, dtype=f"<u{bits // 8}").view(np.uint8)      # wraps at 2**bits
    mem = np.zeros(size, dtype=np.uint8)
    mem[:raw.size] = raw
    return mem


def seeded_memory(seed: int, size: int) -> np.ndarray:
    """Random bytes from a seed (numpy's default generator): ``--mem-seed`` memories."""
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)


def _window(n: int, full: bool, head: int = 12, tail: int = 3) -> list[int | None]:
    if full or n <= head + tail + 1:
        return list(range(n))
    return list(range(head)) + [None] + list(range(n - tail, n))


def format_tile(img: TileImage, name: str = "", pad: PadValue | None = None,
                full: bool = False, storage: int = 0) -> str:
    """The tile as text: a header line, then the logical matrix."""
    dt = img.dtype
    m = img.matrix()                       # (rows, cols, esize)
    vm = img.valid_matrix()                # (rows, cols): False = undefined
    vals = decode(dt, m)
    loaded = np.zeros((img.rows, img.cols), dtype=bool)
    loaded[:img.valid_rows, :img.valid_cols] = True
    head = (f"{name + ': ' if name else ''}{img.queue}<{img.size}> {dt.name} {img.layout.value} "
            f"{img.rows}x{img.cols}, loaded {img.valid_rows}x{img.valid_cols}")
    padded = ~loaded & vm
    if padded.any():
        i, j = np.argwhere(padded)[0]
        head += f"; * = pad {pad.name + ' ' if pad is not None else ''}{format_value(dt, vals[i, j])}"
    if not vm.all():
        head += "; . = undefined (Null pad)"
    rows, cols = _window(img.rows, full), _window(img.cols, full)
    cells = []
    for i in rows:
        line = []
        for j in cols:
            if i is None or j is None:
                line.append("...")
            elif not vm[i, j]:
                line.append(".")
            elif loaded[i, j]:
                line.append(format_value(dt, vals[i, j]))
            else:
                line.append("*")
        cells.append(line)
    width = max(len(c) for line in cells for c in line)
    out = [head]
    out += ["  " + " ".join(c.rjust(width) for c in line) for line in cells]
    if storage:
        idx = np.arange(img.rows * img.cols).reshape(img.rows, img.cols)
        order = to_tile(idx, img.layout, esize=dt.esize)[:storage]
        pos = ", ".join(f"({k // img.cols},{k % img.cols})" for k in order)
        out.append(f"  storage order, first {min(storage, order.size)} elements: {pos}")
    return "\n".join(out)
