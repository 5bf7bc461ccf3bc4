"""The built-in memories of the command line: the TLOAD ramp and the index ramp."""

import numpy as np
import pytest

from tilecosim.model.display import RAMP_PERIOD, index_ramp, ramp_memory
from tilecosim.model.dtypes import DTYPES, encode, dtype as _dtype


def _ramp_by_definition(name, size):
    """Element k (at byte k*esize) holds k: wrapped for integers, modulo the exact period
    for floats, the byte ramp for types without an encoder."""
    dt = _dtype(name)
    k = np.arange(size // dt.esize, dtype=np.int64)
    if dt.is_int and not dt.packed4:
        raw = encode(dt, k)
    elif dt.name in RAMP_PERIOD:
        raw = encode(dt, k % RAMP_PERIOD[dt.name])
    else:
        raw = (np.arange(size, dtype=np.int64) & 0xFF).astype(np.uint8)
    mem = np.zeros(size, dtype=np.uint8)
    mem[:raw.size] = np.asarray(raw).reshape(-1)
    return mem


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("size", [0, 7, 4096, 300001, 1 << 18])
def test_ramp_memory_follows_its_definition(name, size):
    np.testing.assert_array_equal(ramp_memory(name, size), _ramp_by_definition(name, size))


def test_a_16_bit_ramp_wraps_and_a_32_bit_one_does_not():
    m = ramp_memory("U16", 1 << 18).view("<u2")
    assert m[65535] == 65535 and m[65536] == 0
    m = ramp_memory("S32", 1 << 19).view("<u4")
    assert m[65536] == 65536 and m[-1] == (1 << 17) - 1


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_index_ramp_element_k_holds_k(bits):
    m = index_ramp(bits, 1 << 18 | 3)
    v = m[:(m.size // (bits // 8)) * (bits // 8)].view(f"<u{bits // 8}")
    k = np.arange(v.size, dtype=np.uint64) % np.uint64(1 << min(bits, 63) if bits < 64 else 1 << 63)
    if bits < 64:
        np.testing.assert_array_equal(v, np.arange(v.size) % (1 << bits))
    else:
        np.testing.assert_array_equal(v, k)
    assert (m[v.size * (bits // 8):] == 0).all()


def test_index_ramp_of_nibbles_puts_the_even_index_low():
    m = index_ramp(4, 9)
    nibbles = [(b >> s) & 0xF for b in m for s in (0, 4)]
    assert nibbles == [k % 16 for k in range(18)]
