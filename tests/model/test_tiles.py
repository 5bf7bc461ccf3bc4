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
    with pytest.raises(TileAllocation, match="queue M is full, all 16 registers live: M#16 "
                                             r"\(allocated at line 1\) is still live"):
        m.execute(LOAD.format(q="M"))
    assert len(m.tiles.live()) == len(before) == 16
    # releasing the newest frees a slot but not M#16's name: the ring rule still faults
    m.execute("TADD M#1, M#2.reuse, ->T")
    assert m.tiles.free_slots("M") == 1 and m.tiles.room("M") == 0
    with pytest.raises(TileAllocation, match=r"^TileAllocation: ->M=1: M#16 \(allocated at "
                                             r"line 1\) is still live"):
        m.execute(LOAD.format(q="M"))
    # releasing M#16 makes room for one allocation
    m.execute("TADD M#16, M#2.reuse, ->T")
    assert m.tiles.room("M") == 1
    m.execute(LOAD.format(q="M"))
    assert m.tiles.free_slots("M") == 1 and m.tiles.room("M") == 0


def test_a_live_register_never_loses_its_name():
    """The issue's example: 16 TLOADs into T, TADD T#1, T#2 (releases the two newest),
    then a TLOAD: T#16 is the first TLOAD, still live, so the TLOAD faults and nothing
    changes; the 2 free slots do not help."""
    m = machine()
    program = "\n".join([LOAD.format(q="T")] * 16 + ["TADD T#1, T#2, ->U"]
                        + [LOAD.format(q="T")] * 2)
    with pytest.raises(TileAllocation) as e:
        m.run(program)
    assert e.value.lineno == 18
    assert e.value.message == ("->T=1: T#16 (allocated at line 1) is still live: read it "
                               "without .reuse, or release it, before allocating into T")
    live = [n for n, _ in m.tiles.live()]
    assert live == [f"T#{k}" for k in range(3, 17)] + ["U#1"]
    assert m.tiles.free_slots("T") == 2 and m.tiles.room("T") == 0


def test_an_allocation_pushes_a_released_register_out_of_the_names():
    m = machine()
    for k in range(16):
        m.regs["a0"] = 512 * k
        m.execute(LOAD.format(q="U"))
    m.execute("TADD U#16, U#15.reuse, ->T")           # releases the first load
    m.regs["a0"] = 512 * 16
    m.execute(LOAD.format(q="U"))                    # pushes it out: U#16 is the second load
    assert m.tiles.allocated("U") == 16
    assert m.tiles.read("U#16").data.view(np.uint16)[0] == 256 * 1
    assert m.tiles.read("U#1").data.view(np.uint16)[0] == 256 * 16
    with pytest.raises(TileAllocation, match="U#16 \\(allocated at line 2\\)"):
        m.execute(LOAD.format(q="U"))


def test_a_source_released_by_the_instruction_does_not_make_room_for_it():
    """Allocation is checked against the state before the instruction (D7: checks first,
    then commit): TADD T#16, ... ->T faults although it would release T#16."""
    m = machine()
    for _ in range(16):
        m.execute(LOAD.format(q="T"))
    with pytest.raises(TileAllocation, match="T#16"):
        m.execute("TADD T#16, T#1.reuse, ->T")
    assert m.tiles.is_live("T", 16)
    m.execute("TADD T#16, T#1.reuse, ->U")            # into another queue: fine
    assert not m.tiles.is_live("T", 16) and m.tiles.room("T") == 1


def test_multi_output_needs_every_name_it_pushes_out_dead():
    """n outputs into one queue push Q#17-n .. Q#16 out of the names."""
    m = machine()
    for _ in range(15):
        m.execute(LOAD.format(q="N"))
    two = "TLOAD.NORM <LB0:16, LB1:16, LB2:32, FP16>, [a0], ->N<512>, N<512>"
    with pytest.raises(TileAllocation, match=r"N#15 \(allocated at line 1\) is still live: "
                                             r".*; 2 allocations push N#15..N#16 out"):
        m.execute(two)
    assert m.tiles.free_slots("N") == 1 and m.tiles.allocated("N") == 15
    m.execute("TADD N#15, N#14.reuse, ->T")           # release the oldest
    assert m.execute(two).names == ["N#2", "N#1"]     # DstTile0 allocated first
    assert m.tiles.allocated("N") == 16 and m.tiles.free_slots("N") == 0
    names = m.execute("TLOAD.NORM <LB0:16, LB1:16, LB2:32, FP16>, [a0], ->T<512>, T<512>").names
    assert names == ["T#2", "T#1"]


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
