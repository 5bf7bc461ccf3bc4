"""Tile register file (seed 002, D7)."""

import numpy as np
import pytest

from tilecosim.model.faults import IllegalInstruction, IllegalParameter, OutOfBounds, TileAllocation, TileReleased
from tilecosim.model.machine import Machine
from tilecosim.model.tiles import TileRef, TileRegisterFile, parse_tile_ref

LOAD = "TLOAD.NORM <LB0:16, LB1:16, FP16>, [a0], ->{q}<512>"


def machine(**regs):
    mem = np.arange(1 << 15, dtype=np.uint16).view(np.uint8).copy()
    return Machine(mem, dict(a0=0, **regs))


def test_newest_is_index_1():
    m = machine()
    for k in range(3):
        m.regs["a0"] = 512 * k
        m.execute(LOAD.format(q="T"))
    # T#1 holds the third load, T#3 the first
    for idx, k in ((1, 2), (2, 1), (3, 0)):
        assert m.tiles.read(f"T#{idx}").data.view(np.uint16)[0] == 256 * k


def test_queues_are_independent():
    m = machine()
    m.execute(LOAD.format(q="T"))
    m.execute(LOAD.format(q="U"))
    assert [n for n, _ in m.tiles.live()] == ["T#1", "U#1"]


def test_seed_example_reuse_and_release():
    """Three TLOADs to T; TADD T#2.reuse, T#3, ->U; TSUB T#2, T#1, ->U."""
    m = machine(a1=512, a2=1024)
    for reg in ("a0", "a1", "a2"):
        m.execute(LOAD.format(q="T").replace("[a0]", f"[{reg}]"))
    first, second, third = (m.tiles.read(f"T#{k}").data.view(np.float16).astype(float)
                            for k in (3, 2, 1))
    m.execute("TADD T#2.reuse, T#3, ->U")
    np.testing.assert_array_equal(m.tiles.read("U#1").data.view(np.float16), second + first)
    with pytest.raises(TileReleased, match="T#3"):
        m.tiles.read("T#3")                     # released at the TADD's commit
    m.execute("TSUB T#2, T#1, ->U")             # T#2 survived thanks to .reuse
    np.testing.assert_array_equal(m.tiles.read("U#1").data.view(np.float16), second - third)
    with pytest.raises(TileReleased):
        m.execute("TADD T#3, T#2, ->U")
    assert [n for n, _ in m.tiles.live()] == ["U#1", "U#2"]


def test_sixteen_live_then_tile_allocation():
    m = machine()
    for _ in range(16):
        m.execute(LOAD.format(q="M"))
    before = m.tiles.live()
    with pytest.raises(TileAllocation, match="queue M has 0 free slot"):
        m.execute(LOAD.format(q="M"))
    assert len(m.tiles.live()) == len(before) == 16
    # releasing one frees a slot
    m.execute("TADD M#1, M#2.reuse, ->T")
    m.execute(LOAD.format(q="M"))
    assert m.tiles.free_slots("M") == 0


def test_multi_output_needs_every_slot_or_none():
    m = machine()
    for _ in range(15):
        m.execute(LOAD.format(q="N"))
    with pytest.raises(TileAllocation):
        m.execute("TLOAD.NORM <LB0:16, LB1:16, LB2:32, FP16>, [a0], ->N<512>, N<512>")
    assert m.tiles.free_slots("N") == 1
    names = m.execute("TLOAD.NORM <LB0:16, LB1:16, LB2:32, FP16>, [a0], ->T<512>, T<512>").names
    assert names == ["T#2", "T#1"]                  # DstTile0 allocated first


def test_write_once():
    m = machine()
    m.execute(LOAD.format(q="T"))
    img = m.tiles.read("T#1")
    with pytest.raises(ValueError):
        img.data[0] = 1


def test_faulting_instruction_changes_nothing():
    m = machine()
    m.execute(LOAD.format(q="T"))
    mem = m.memory.copy()
    snap = [(n, img.data.tobytes()) for n, img in m.tiles.live()]
    for bad in ("TLOAD.NORM <LB0:40, LB2:32, FP16>, [a0], ->T<512>",          # IllegalParameter
                "TLOAD.NORM <LB0:16, FP16>, [a0], ->ACC<512>",                 # IllegalInstruction
                "TLOAD.NORM <LB0:16, LB1:16, FP16>, [a3], ->T<512>"):          # OutOfBounds
        m.regs["a3"] = len(m.memory) - 8
        with pytest.raises((IllegalParameter, IllegalInstruction, OutOfBounds)):
            m.execute(bad)
    with pytest.raises(TileReleased):
        m.execute("TADD T#1, T#2, ->U")        # T#1 would be released, but T#2 faults first
    assert [(n, img.data.tobytes()) for n, img in m.tiles.live()] == snap
    assert (m.memory == mem).all()


def test_unwritten_and_out_of_range_indices():
    rf = TileRegisterFile()
    with pytest.raises(TileReleased, match="never been written"):
        rf.read("U#1")
    with pytest.raises(IllegalInstruction, match="1..16"):
        rf.read(TileRef("U", 17))
    with pytest.raises(TileReleased, match="ACC"):
        rf.read("ACC")


def test_parse_tile_ref():
    assert parse_tile_ref("T#2.reuse") == TileRef("T", 2, True)
    assert parse_tile_ref("ACC") == TileRef("ACC")
    with pytest.raises(ValueError, match="X#1"):
        parse_tile_ref("X#1")
