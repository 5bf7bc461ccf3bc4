"""Constrained-random scenarios for the L1 -> L0 engine and the LoadAlign/StoreAlign units
(reproducible from a :class:`random.Random`); TLOAD's are in :mod:`model.scenarios`.

Each generator draws legal and faulting operations alike: the parameter ranges reach past
the buffers and the alignment rules on purpose.
"""

import random

from tilecosim.model.load_align import WIDTHS, Addressing, LoadDist, StoreDist
from tilecosim.model.load_data import LoadData2dTransposeParams as V1, LoadData2dTransposeParamsV2 as V2

from tilecosim.sim.benches.align import AlignCase, StoreCase
from tilecosim.sim.benches.load_data_with_transpose import LdtCall

__all__ = ["random_ldt_call", "random_addressing", "random_load_case", "random_store_case"]


def random_ldt_call(rng: random.Random, dtype: str) -> LdtCall:
    """A LoadDataWithTranspose call of ``dtype`` (V1 or V2, L0A or L0B, gaps 0..5)."""
    v2 = dtype != "int4b" and rng.random() < 0.3
    kw = dict(repeatTimes=rng.randint(1 if v2 else 0, 4), startIndex=rng.randint(0, 5),
              srcStride=rng.randint(0, 3), dstGap=rng.randint(0, 5), dstFracGap=rng.randint(0, 4),
              addrMode=rng.random() < 0.2)
    p = V2(dtype, srcFracGap=rng.randint(0, 3), **kw) if v2 else V1(dtype, **kw)
    dst = "L0B" if (v2 or dtype == "int4b" or rng.random() < 0.5) else "L0A"
    return LdtCall(p, dst, rng.randint(0, 3) * 512, rng.randint(0, 16) * 32)


def random_addressing(rng: random.Random, kind: str | None = None) -> Addressing:
    kind = kind or rng.choice(["plain", "post_update", "addr_reg"])
    if kind == "plain":
        return Addressing()
    return Addressing(kind, rng.randint(-4, 12) * rng.choice([1, 4, 8, 16, 32]))


def _addr(rng):
    return rng.randint(0, 60) * rng.choice([1, 2, 4, 16, 32])


def random_load_case(rng: random.Random, dist: LoadDist | None = None) -> AlignCase:
    """A LoadAlign of ``dist`` (any when None): random type, address, addressing and, one
    time in ten, RegTraitNumTwo."""
    dist = dist if dist is not None else rng.choice(list(LoadDist))
    t = rng.choice(list(WIDTHS))
    how = random_addressing(rng)
    return AlignCase(dist.name, t, _addr(rng), how, 2 if rng.random() < 0.1 else 1)


def random_store_case(rng: random.Random, dist: StoreDist | None = None,
                      vl: int = 256) -> StoreCase:
    """A StoreAlign of ``dist`` (any when None) with random registers and mask."""
    dist = dist if dist is not None else rng.choice(list(StoreDist))
    t = rng.choice(list(WIDTHS))
    rt = 2 if rng.random() < 0.1 else 1
    nregs = 2 if (dist.dual or rt == 2) else 1
    regs = tuple(bytes(rng.randrange(256) for _ in range(vl)) for _ in range(nregs))
    mask = bytes(rng.randrange(2) for _ in range(vl))
    return StoreCase(dist.name, t, _addr(rng), regs, mask, random_addressing(rng), rt)
