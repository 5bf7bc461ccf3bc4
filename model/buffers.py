"""On-chip buffers: L1, L0A, L0B and UB as byte arrays with checked accesses.

Every access names the rule it is checked against; a violation raises a fault
that names the buffer, the address and the rule, before anything is read or
written:

* ``Alignment``   -- ``L0A address=0x120: must be 512 B aligned (LoadDataWithTranspose dst)``
* ``OutOfBounds`` -- ``UB address=0x3ff00: reads 512 B past the end of UB (262144 B)``
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .faults import Alignment, OutOfBounds

__all__ = ["Buffer", "Buffers", "DEFAULT_SIZES"]

#: Default capacities in bytes (Ascend 950-class core: L1 512 KB, L0A/L0B 64 KB, UB 256 KB).
DEFAULT_SIZES = {"L1": 512 * 1024, "L0A": 64 * 1024, "L0B": 64 * 1024, "UB": 256 * 1024}


class Buffer:
    """A named byte array.  ``data`` is the live content (uint8)."""

    def __init__(self, name: str, size_or_data: int | np.ndarray | bytes):
        self.name = name
        if isinstance(size_or_data, (int, np.integer)):
            if size_or_data <= 0:
                raise ValueError(f"{name} size={size_or_data} must be positive")
            self.data = np.zeros(int(size_or_data), dtype=np.uint8)
        elif isinstance(size_or_data, (bytes, bytearray)):
            self.data = np.frombuffer(bytes(size_or_data), dtype=np.uint8).copy()
        else:
            self.data = np.array(size_or_data, dtype=np.uint8).reshape(-1)

    @property
    def size(self) -> int:
        return self.data.size

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.size} B)"

    def check(self, addr: int, nbytes: int, align: int = 1, rule: str = "",
              what: str = "address", access: str = "reads") -> None:
        """Raise Alignment / OutOfBounds for an access of ``nbytes`` at ``addr``."""
        fld = f"{self.name} {what}"
        self.check_alignment(addr, align, rule, what)
        if addr < 0:
            raise OutOfBounds(fld, addr, f"{access} below the start of {self.name}"
                              + (f" ({rule})" if rule else ""))
        if addr + nbytes > self.size:
            raise OutOfBounds(fld, _hex(addr), f"{access} {nbytes} B, past the end of "
                              f"{self.name} ({self.size} B)" + (f" ({rule})" if rule else ""))

    def check_alignment(self, addr: int, align: int, rule: str = "",
                        what: str = "address") -> None:
        """Raise Alignment when ``addr`` is not a multiple of ``align`` (no bound: an
        address that is not accessed is checked for alignment alone)."""
        if align > 1 and addr % align:
            raise Alignment(f"{self.name} {what}", _hex(addr), f"must be {align} B aligned"
                            + (f" ({rule})" if rule else ""))

    def read(self, addr: int, nbytes: int, align: int = 1, rule: str = "") -> np.ndarray:
        self.check(addr, nbytes, align, rule)
        return self.data[addr:addr + nbytes].copy()

    def write(self, addr: int, data: np.ndarray, align: int = 1, rule: str = "",
              enable: np.ndarray | None = None) -> None:
        """Write ``data``; where ``enable`` (bool per byte) is False the byte is kept."""
        data = np.asarray(data, dtype=np.uint8).reshape(-1)
        self.check(addr, data.size, align, rule, access="writes")
        if enable is None:
            self.data[addr:addr + data.size] = data
        else:
            view = self.data[addr:addr + data.size]
            view[enable] = data[enable]


def _hex(v: int) -> str:
    return f"{v:#x}" if v >= 0 else str(v)


@dataclass
class Buffers:
    """The on-chip buffers of one core."""
    l1: Buffer = field(default_factory=lambda: Buffer("L1", DEFAULT_SIZES["L1"]))
    l0a: Buffer = field(default_factory=lambda: Buffer("L0A", DEFAULT_SIZES["L0A"]))
    l0b: Buffer = field(default_factory=lambda: Buffer("L0B", DEFAULT_SIZES["L0B"]))
    ub: Buffer = field(default_factory=lambda: Buffer("UB", DEFAULT_SIZES["UB"]))

    @classmethod
    def sized(cls, **sizes) -> "Buffers":
        """``Buffers.sized(l1=1 << 20, ub=192 * 1024)``; unnamed ones keep their defaults."""
        kw = {}
        for key, size in sizes.items():
            name = key.upper()
            if name not in DEFAULT_SIZES:
                raise ValueError(f"buffer {key!r} is not one of l1, l0a, l0b, ub")
            kw[key.lower()] = Buffer(name, size)
        return cls(**kw)

    def __getitem__(self, name: str) -> Buffer:
        return getattr(self, name.lower())
