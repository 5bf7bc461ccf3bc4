"""Every unit checks its parameters when it is built: a ValueError that names the parameter
and the value, before anything is elaborated."""

import gc
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from tilecosim.hdl.align.load import LoadAlignUnit
from tilecosim.hdl.align.store import StoreAlignUnit
from tilecosim.hdl.completion import CompletionQueue
from tilecosim.hdl.l1l0.engine import L1L0Engine
from tilecosim.hdl.tload.decode import TLoadDecoder
from tilecosim.hdl.tload.engine import TLoadEngine
from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.hdl.transpose import ChunkTranspose, NaiveTranspose, SquareTranspose
from tilecosim.hdl.tstore.engine import TStoreEngine

CASES = [
    (lambda: TLoadEngine(width=48), "width=48"),
    (lambda: TLoadEngine(width=256), "width=256"),
    (lambda: PadMerge(0, width=16), "width=16"),
    (lambda: ChunkTranspose(width=32), "width=32"),
    (lambda: TLoadEngine(depth=1), "depth=1"),
    (lambda: TLoadEngine(transpose="fast"), "transpose='fast'"),
    (lambda: TLoadEngine(profile="ieee"), "profile='ieee'"),
    (lambda: TLoadEngine(lcfr=(256, 1000)), r"lcfr=\(256, 1000\)"),
    (lambda: TLoadEngine(lcfr=(128, 1024)), r"lcfr=\(128, 1024\)"),
    (lambda: TLoadDecoder(lcfr=(512, 256)), r"lcfr=\(512, 256\)"),
    (lambda: TStoreEngine(width=48), "width=48"),
    (lambda: TStoreEngine(lcfr=(256, 1000)), r"lcfr=\(256, 1000\)"),
    (lambda: L1L0Engine(depth=1), "depth=1"),
    (lambda: L1L0Engine(transpose="slow"), "transpose='slow'"),
    (lambda: SquareTranspose(max_rows=16), "max_rows=16"),
    (lambda: NaiveTranspose(max_rows=33), "max_rows=33"),
    (lambda: PadMerge(-1), "meta_width=-1"),
    (lambda: LoadAlignUnit(vl=100), "vl=100"),
    (lambda: LoadAlignUnit(vl=32), "vl=32"),
    (lambda: StoreAlignUnit(vl=192), "vl=192"),
    (lambda: CompletionQueue(depth=0), "depth=0"),
    (lambda: SquareTranspose(line_bits=96), "line_bits=96"),
    (lambda: SquareTranspose(max_rows=32, line_bits=64), "max_rows=32"),
    (lambda: CompletionQueue(max_in_flight=0), "max_in_flight=0"),
]


@pytest.mark.parametrize("make,match", CASES, ids=[m for _, m in CASES])
def test_a_bad_parameter_is_named_with_its_value(make, match):
    with warnings.catch_warnings():
        # the half-built component is never elaborated: Amaranth would say so when it goes
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match=match):
            make()
        gc.collect()


@pytest.mark.parametrize("make", [lambda: TLoadEngine(width=64, depth=2),
                                  lambda: TLoadEngine(width=128),
                                  lambda: ChunkTranspose(width=128),
                                  lambda: LoadAlignUnit(vl=64),
                                  lambda: StoreAlignUnit(vl=128),
                                  lambda: SquareTranspose(max_rows=64),
                                  lambda: SquareTranspose(max_rows=16, line_bits=64),
                                  lambda: PadMerge(0)])
def test_the_edges_of_the_legal_ranges_are_accepted(make):
    unit = make()
    unit._MustUse__used = True             # built to check the constructor only
