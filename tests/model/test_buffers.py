"""Buffers: bounds and alignment faults name the buffer, the address and the rule."""

import numpy as np
import pytest

from tilecosim.model.buffers import DEFAULT_SIZES, Buffer, Buffers
from tilecosim.model.faults import Alignment, OutOfBounds


def test_default_and_configured_sizes():
    b = Buffers()
    assert {n: b[n].size for n in DEFAULT_SIZES} == DEFAULT_SIZES
    b = Buffers.sized(ub=192 * 1024, l1=1 << 20)
    assert b.ub.size == 192 * 1024 and b.l1.size == 1 << 20 and b.l0a.size == 64 * 1024
    with pytest.raises(ValueError, match="'l2'"):
        Buffers.sized(l2=4)


def test_alignment_fault_names_buffer_address_rule():
    l0 = Buffer("L0A", 4096)
    with pytest.raises(Alignment) as e:
        l0.write(0x120, np.zeros(4, np.uint8), align=512, rule="LoadDataWithTranspose dst")
    assert e.value.message == "L0A address=0x120: must be 512 B aligned (LoadDataWithTranspose dst)"


def test_out_of_bounds_fault_and_nothing_written():
    ub = Buffer("UB", 1024)
    with pytest.raises(OutOfBounds, match=r"UB address=0x3f0: writes 32 B, past the end of UB \(1024 B\)"):
        ub.write(0x3F0, np.ones(32, np.uint8))
    assert not ub.data.any()
    with pytest.raises(OutOfBounds, match="below the start"):
        ub.read(-4, 4)


def test_masked_write_keeps_disabled_bytes():
    ub = Buffer("UB", np.arange(8, dtype=np.uint8))
    ub.write(0, np.full(8, 0xAA, np.uint8), enable=np.array([1, 0, 1, 0, 0, 0, 0, 1], bool))
    assert ub.data.tolist() == [0xAA, 1, 0xAA, 3, 4, 5, 6, 0xAA]
