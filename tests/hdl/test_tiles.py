"""The RTL tile system on Amaranth's simulator: programs checked against the golden Machine
after every instruction (faults, live names, every defined byte), and the same programs
streamed without a pause between instructions (the final state and every fault checked).

The expected names and faults of the fixed programs are the seed's (002: T#1 is the newest
register, a source read without .reuse is released at commit, a full queue cannot
allocate) and D8's codes, written here by hand; the bytes come from the golden model.
Icarus and Verilator run the same programs in cocotb_tests/test_tiles.py.
"""

import random

import numpy as np
import pytest

from tilecosim import ops
from tilecosim.model.asm import parse_program
from tilecosim.model.display import seeded_memory
from tilecosim.sim.benches.program import ProgramConfig, golden_steps, run_programs

REGS = {"a0": 0, "a1": 512, "a2": 1024, "a3": 4096}
LOAD = "TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [{}], ->{}<512>\n"

SEED_EXAMPLE = (LOAD.format("a0", "T") + LOAD.format("a1", "T") + LOAD.format("a2", "T")
                + "TADD T#2.reuse, T#3, ->U\nTSUB T#2, T#1, ->U\n")

#: name -> (program, the fault that ends it: name, D8 code, its line)
FAULT_PROGRAMS = {
    "17 loads into one queue": ("".join(LOAD.format("a0", "M") for _ in range(17)),
                                ("TileAllocation", 3, 17)),
    # 16 live in M after a load into U: the other queues' slots stay as they were
    "17 loads into one queue after another queue's": (
        LOAD.format("a1", "U") + "".join(LOAD.format("a0", "M") for _ in range(17)),
        ("TileAllocation", 3, 18)),
    "a read after release": (SEED_EXAMPLE + "TADD T#3, T#1, ->N\n", ("TileReleased", 4, 6)),
    "a never-written register": (LOAD.format("a0", "U") + "TADD U#1, U#2, ->T\n",
                                 ("TileReleased", 4, 2)),
    "an illegal destination": (LOAD.format("a0", "N") + "TADD N#1.reuse, N#1, ->ACC\n",
                               ("IllegalInstruction", 1, 2)),
    "a TLOAD to ACC": ("TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [a0], ->ACC<512>\n",
                       ("IllegalInstruction", 1, 1)),
    "a tile larger than the LCFR": (LOAD.format("a0", "T")
                                    + "TLOAD.NORM <LB0:2048, LB1:2, S16, Zero>, [a3], "
                                      "->T<8KB>\n", ("IllegalParameter", 2, 2)),
    "a floating-point TADD": ("TLOAD.NORM <LB0:16, LB1:16, FP16, Zero>, [a0], ->T<512>\n" * 2
                              + "TADD T#1, T#2, ->U\n", ("IllegalInstruction", 1, 3)),
    "sources of different shapes": ("TLOAD.NORM <LB0:32, LB1:8, U8, Zero>, [a0], ->T<256>\n"
                                    "TLOAD.NORM <LB0:16, LB1:16, U8, Zero>, [a0], ->T<256>\n"
                                    "TSUB T#1, T#2, ->U\n", ("IllegalParameter", 2, 3)),
}


def run_checked(texts, backend="amaranth", stall=0.2, check="each", width=32):
    """Each program (its text, or (text, registers)) on the RTL, one simulator start for
    all, compared with the Machine; [(golden steps, result)]."""
    mem = seeded_memory(21, 1 << 16)
    cfg = ProgramConfig(backend=backend, seed=6, p_req_ready=1 - stall,
                        p_resp_valid=1 - stall, p_record_valid=1 - stall, check=check,
                        width=width)
    texts = [(t, REGS) if isinstance(t, str) else t for t in texts]
    progs = [golden_steps(parse_program(t), dict(regs), mem, cfg.profile, cfg.lcfr)
             for t, regs in texts]
    out = []
    for steps, (res, problems) in zip(progs, run_programs(progs, mem, cfg)):
        assert problems == [], "\n".join(problems)
        out.append((steps, res))
    return out


def test_the_seed_example():
    [(steps, res)] = run_checked([SEED_EXAMPLE])
    # the seed: three loads become T#3, T#2, T#1; TADD keeps T#2, releases T#3, writes U#1;
    # TSUB releases T#2 and T#1 and writes U#1 (the first result moving to U#2)
    assert [s.names for s in steps] == [["T#1"], ["T#1"], ["T#1"], ["U#1"], ["U#1"]]
    assert [n for n, _ in steps[3].live] == ["T#1", "T#2", "U#1"]
    assert [n for n, _ in steps[4].live] == ["U#1", "U#2"]
    assert res.faults == [0] * 5 and res.checked == 5


@pytest.mark.parametrize("check", ["each", "end"])
def test_each_fault_of_the_register_file(check):
    texts = list(FAULT_PROGRAMS.values())
    for (text, (name, code, line)), (steps, res) in zip(texts, run_checked(
            [t for t, _ in texts], check=check)):
        assert steps[-1].fault["name"] == name and steps[-1].line == line
        assert res.faults == [0] * (line - 1) + [code]


@pytest.mark.parametrize("width", [64, 128])
def test_the_system_at_a_wider_beat(width):
    """W = 64 and 128: the seed's example, every fault program and random programs of every
    layout and lane, on W-byte SRAM words and ports."""
    texts = [SEED_EXAMPLE] + [t for t, _ in FAULT_PROGRAMS.values()]
    runs = run_checked(texts + drawn_programs(("program.layout:ND2ZN", "program.lane:b64",
                                               "program.queue:full")), width=width)
    assert [res.faults[-1] for _, res in runs[1:len(texts)]] == \
        [code for _, (_, code, _) in FAULT_PROGRAMS.values()]


def test_tadd_moves_one_beat_per_cycle_and_a_tload_stream_has_no_bubble():
    """A 4 KB TADD writes its 128 words in 128 consecutive cycles; 8 TLOADs of 2 KB
    streamed (no stall) write 512 beats in at most 512 / 0.95 cycles from the first write."""
    text = (LOAD.replace("<512>", "<4KB>").replace("LB1:16", "LB1:128").format("a0", "T") * 2
            + "TADD T#1, T#2, ->U\n")
    [(_, res)] = run_checked([text], stall=0.0)
    add_start = res.first_writes[2]
    assert res.last_write_cycle - add_start + 1 == 128
    load = "TLOAD.NORM <LB0:64, LB1:16, S16, Zero>, [a0], ->N<2KB>\n"
    [(_, res)] = run_checked([load * 8], stall=0.0, check="end")
    assert res.write_cycles == 8 * 64
    span = res.last_write_cycle - res.first_writes[0] + 1
    assert span * 0.95 <= 8 * 64, span


def drawn_programs(bins=None):
    """(text, registers) of one program aimed at each bin of the program operation (all
    bins, or those named), seeded."""
    op = ops.get("program")
    rng = random.Random(11)
    items = [op.draw(rng, b)[0] for b in op.bins()]
    return [(it.text, dict(it.regs)) for b, it in zip(op.bins(), items)
            if bins is None or b in bins]


#: the bins whose programs run here (all of them run on Verilator, cocotb_tests/test_tiles.py)
SAMPLE_BINS = ("program.queue:full", "program.index:16", "program.lane:b4x2",
               "program.layout:DN2NZ", "program.fault:TileReleased/released",
               "program.fault_after:9..32")


@pytest.mark.parametrize("check", ["each", "end"])
def test_random_programs(check):
    """Programs of queue pressure, Q#16, reuse, nibble lanes, a transposing layout and a
    read after release, with back-pressure; ``end`` streams each program without waiting
    between instructions."""
    run_checked(drawn_programs(SAMPLE_BINS), check=check)


def test_a_tadd_streamed_right_after_the_tload_it_reads():
    """TADD must wait for the TLOAD before it to complete (its source is being written)."""
    text = ("TLOAD.ND2NZ <LB0:64, LB1:16, U16, Zero>, [a0], ->T<2KB>\n"
            "TADD T#1.reuse, T#1.reuse, ->U\nTSUB U#1, T#1, ->M\n")
    [(steps, res)] = run_checked([text], stall=0.0, check="end")
    assert res.faults == [0, 0, 0] and [s.names for s in steps] == [["T#1"], ["U#1"], ["M#1"]]


def test_the_alu_lanes_wrap_as_numpy():
    from amaranth.sim import Simulator
    from tilecosim.hdl.tiles.elementwise import ElementwiseALU, LaneWidth
    alu = ElementwiseALU(32)
    rng = np.random.default_rng(3)
    cases = []
    for lane, dt in ((LaneWidth.B8, np.uint8), (LaneWidth.B16, np.uint16),
                     (LaneWidth.B32, np.uint32), (LaneWidth.B64, np.uint64)):
        for sub in (0, 1):
            a = rng.integers(0, 256, 32, dtype=np.uint8)
            b = rng.integers(0, 256, 32, dtype=np.uint8)
            xa, xb = a.view(dt), b.view(dt)
            want = (xa - xb if sub else xa + xb).view(np.uint8)
            cases.append((lane, sub, a, b, want))
    a = rng.integers(0, 256, 32, dtype=np.uint8)
    b = rng.integers(0, 256, 32, dtype=np.uint8)
    for sub in (0, 1):                                 # nibbles: low and high apart
        op = np.subtract if sub else np.add
        lo = op(a & 15, b & 15) & 15
        hi = op(a >> 4, b >> 4) & 15
        cases.append((LaneWidth.B4, sub, a, b, (lo | hi << 4).astype(np.uint8)))

    async def bench(ctx):
        for lane, sub, a, b, want in cases:
            ctx.set(alu.a, int.from_bytes(a.tobytes(), "little"))
            ctx.set(alu.b, int.from_bytes(b.tobytes(), "little"))
            ctx.set(alu.sub, sub)
            ctx.set(alu.lane, lane)
            got = ctx.get(alu.y).to_bytes(32, "little")
            assert got == want.tobytes(), (lane, sub)
    with np.errstate(over="ignore"):
        sim = Simulator(alu)
        sim.add_testbench(bench)
        sim.run()


def assemble(blocks):
    """Each block (a list of record-beat dicts) through the RecordAssembler alone: the ``bad``
    bit of each instruction it emits."""
    from amaranth.sim import Simulator

    from tests.watchdog import run_bounded
    from tilecosim.hdl.tiles.records import RecordAssembler
    from tilecosim.hdl.tiles.types import RecordBeat
    dut = RecordAssembler()
    bad = []

    async def source(ctx):
        for block in blocks:
            for k, beat in enumerate(block):
                full = {"value0": 0, "value1": 0, **beat, "end": int(k == len(block) - 1)}
                ctx.set(dut.i.payload, RecordBeat.const(full))
                ctx.set(dut.i.valid, 1)
                await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)

    async def sink(ctx):
        ctx.set(dut.o.ready, 1)
        while len(bad) < len(blocks):
            _, _, v, p = await ctx.tick().sample(dut.o.valid, dut.o.payload)
            if v:
                bad.append(int(p.bad))
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    run_bounded(sim, 20 * sum(map(len, blocks)) + 50, "record assembler bench")
    return bad


def test_a_tadd_block_without_two_sources_and_a_destination_is_illegal():
    """D9's TADD/TSUB template is BSTART.TEW, two B.IOS (the sources) and a B.IOT (the
    destination): a block missing any of them is IllegalInstruction (``bad``)."""
    from tilecosim.hdl.tiles.types import Opcode, RecordKind as K
    start = {"record": {"kind": K.BSTART_TEW, "f0": Opcode.TADD.value}}
    src = {"record": {"kind": K.B_IOS, "f0": 0, "f1": 1, "f2": 0}}
    dst = {"record": {"kind": K.B_IOT, "f0": 1, "f1": 1}}
    assert assemble([[start, src, src, dst],            # well formed
                     [start, src, dst],                 # one source
                     [start, src, src],                 # no destination
                     [start, dst],                      # neither
                     [src, src, dst],                   # no BSTART
                     [start, src, src, dst]]) == [0, 1, 1, 1, 1, 0]
