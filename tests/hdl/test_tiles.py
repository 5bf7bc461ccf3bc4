"""The RTL tile system on Amaranth's simulator: programs checked against the golden Machine
after every instruction (faults, live names, every defined byte), and the same programs
streamed without a pause between instructions (the final state and every fault checked).

The expected names and faults of the fixed programs are the seed's (002: T#1 is the newest
register, a source read without .reuse is released at commit, a full queue cannot
allocate), D7's ring rule (an allocation whose Q#16 is live faults) and D8's codes, written
here by hand; the bytes come from the golden model.
Icarus and Verilator run the same programs in cocotb_tests/test_tiles.py.
"""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from tests.tiers import slow
from tests.watchdog import run_bounded
from tilecosim import ops
from tilecosim.hdl.tiles.elementwise import ElementwiseALU, LaneWidth
from tilecosim.hdl.tiles.records import RecordAssembler
from tilecosim.hdl.tiles.regfile import TileRegisterFile
from tilecosim.hdl.tiles.types import QUEUE_CODES, LookupStatus, Opcode, RecordBeat
from tilecosim.hdl.tiles.types import RecordKind as K
from tilecosim.model.asm import parse_program
from tilecosim.model.display import seeded_memory
from tilecosim.model.dtypes import dtype
from tilecosim.model.faults import TileAllocation
from tilecosim.model.layouts import Layout
from tilecosim.model.tiles import QUEUE_DEPTH, TileRef, TileRegisterFile as Golden
from tilecosim.model.tload import TileImage
from tilecosim.sim.api import pack, run_amaranth, stretched, unpack, watchdog
from tilecosim.sim.benches.program import ProgramConfig, golden_steps, run_programs
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Sink, Source

REGS = {"a0": 0, "a1": 512, "a2": 1024, "a3": 4096}
LOAD = "TLOAD.NORM <LB0:16, LB1:16, S16, Zero>, [{}], ->{}<512>\n"

SEED_EXAMPLE = (LOAD.format("a0", "T") + LOAD.format("a1", "T") + LOAD.format("a2", "T")
                + "TADD T#2.reuse, T#3, ->U\nTSUB T#2, T#1, ->U\n")

#: the kernel of examples/kernel.s (D15): load, add, store, and load the stored sum back
KERNEL = ("TLOAD.ND2NZ <LB0:32, LB1:32, S16>, [a0], ->T<2KB>\n"
          "TLOAD.ND2NZ <LB0:32, LB1:32, S16>, [a1], ->T<2KB>\n"
          "TADD T#1, T#2, ->U\n"
          "TSTORE.ND2NZ <LB0:32, LB1:32, S16>, U#1.reuse, [a3]\n"
          "TLOAD.NORM <LB0:32, LB1:32, S16>, [a3], ->T<2KB>\n"
          "TSTORE.DN2NZ <LB0:30, LB1:32, LB2:32, S16>, U#1, [a2]\n"
          "TLOAD.DN2NZ <LB0:30, LB1:32, LB2:32, S16, Zero>, [a2], ->M<2KB>\n")

#: name -> (program, the fault that ends it: name, D8 code, its line)
FAULT_PROGRAMS = {
    "a TSTORE of a released register": (LOAD.format("a0", "T")
                                        + "TSTORE.NORM <LB0:16, LB1:16, S16>, T#1, [a3]\n" * 2,
                                        ("TileReleased", 4, 3)),
    "a TSTORE of another element size": (LOAD.format("a0", "T")
                                         + "TSTORE.NORM <LB0:16, LB1:16, S8>, T#1, [a3]\n",
                                         ("IllegalParameter", 2, 2)),
    "a TSTORE past the end of memory": (LOAD.format("a0", "T")
                                        + "TSTORE.NORM <LB0:16, LB1:16, S16>, T#1, [a3, a3]\n",
                                        ("OutOfBounds", 6, 2)),
    "17 loads into one queue": ("".join(LOAD.format("a0", "M") for _ in range(17)),
                                ("TileAllocation", 3, 17)),
    # 16 live in M after a load into U: the other queues' slots stay as they were
    "17 loads into one queue after another queue's": (
        LOAD.format("a1", "U") + "".join(LOAD.format("a0", "M") for _ in range(17)),
        ("TileAllocation", 3, 18)),
    # the ring rule (D7): T#16, the first load, is live, though 2 of 16 slots are free
    "a live register pushed out of the 16 names": (
        "".join(LOAD.format("a0", "T") for _ in range(16)) + "TADD T#1, T#2, ->U\n"
        + LOAD.format("a1", "T"), ("TileAllocation", 3, 18)),
    # two outputs push N#15 and N#16 out; N#16 was released, N#15 is live
    "two outputs pushing a live register out": (
        "".join(LOAD.format("a0", "N") for _ in range(16)) + "TADD N#16, N#1.reuse, ->U\n"
        + "TLOAD.NORM <LB0:16, LB1:16, LB2:32, S16, Zero>, [a0], ->N<512>, N<512>\n",
        ("TileAllocation", 3, 18)),
    # the same, after N#15 is released too: the TLOAD goes in; then M#16 read by a TADD into M
    "a source that its own instruction would release": (
        "".join(LOAD.format("a0", "N") for _ in range(16)) + "TADD N#16, N#1.reuse, ->U\n"
        + "TSUB N#15, N#1.reuse, ->U\n"
        + "TLOAD.NORM <LB0:16, LB1:16, LB2:32, S16, Zero>, [a0], ->N<512>, N<512>\n"
        + "".join(LOAD.format("a1", "M") for _ in range(16)) + "TADD M#16, M#1.reuse, ->M\n",
        ("TileAllocation", 3, 36)),
    "a read after release": (SEED_EXAMPLE + "TADD T#3, T#1, ->N\n", ("TileReleased", 4, 6)),
    "a never-written register": (LOAD.format("a0", "U") + "TADD U#1, U#2, ->T\n",
                                 ("TileReleased", 4, 2)),
    # ACC holds no tile (regress --ops program, seed 1, found the RTL calling it illegal)
    "ACC as a source": ("TADD ACC, ACC, ->T\n", ("TileReleased", 4, 1)),
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
def test_the_kernel_stores_and_reads_back(check):
    """TLOAD, TLOAD, TADD, TSTORE, a TLOAD of the stored sum, a transposing TSTORE and its
    TLOAD: memory and registers equal the Machine's after every instruction (run_checked),
    and the sum read back is A + B, computed here from the memory image."""
    [(steps, res)] = run_checked([KERNEL], check=check)
    assert res.faults == [0] * 7
    mem = seeded_memory(21, 1 << 16)
    a = mem[0:2048].view(np.int16)
    b = mem[512:2560].view(np.int16)
    back = dict(steps[4].live)["T#1"]
    assert np.array_equal(back.data.view(np.int16), (a + b).astype(np.int16))
    assert [len(s.stored[0]) if s.stored else 0 for s in steps] == [0, 0, 0, 2048, 0, 1920, 0]


@pytest.mark.parametrize("check", ["each", "end"])
def test_each_fault_of_the_register_file(check):
    texts = list(FAULT_PROGRAMS.values())
    for (text, (name, code, line)), (steps, res) in zip(texts, run_checked(
            [t for t, _ in texts], check=check)):
        assert steps[-1].fault["name"] == name and steps[-1].line == line
        assert res.faults == [0] * (line - 1) + [code]


@pytest.mark.parametrize("width", [slow(64), 128])
def test_the_system_at_a_wider_beat(width):
    """W = 64 and 128: the seed's example, the kernel, every fault program and random
    programs of some layouts, a lane and stores, on W-byte SRAM words and ports."""
    texts = [SEED_EXAMPLE, KERNEL] + [t for t, _ in FAULT_PROGRAMS.values()]
    runs = run_checked(texts + drawn_programs(("program.layout:ND2ZN", "program.lane:b64",
                                               "program.queue:full", "program.store:ND2ZN",
                                               "program.store:DN2NZ")), width=width)
    assert [res.faults[-1] for _, res in runs[2:len(texts)]] == \
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


@pytest.mark.parametrize("check", [slow("each"), "end"])        # each: every program, checked
def test_random_programs(check):                                  # after every instruction
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
    """Each block (a list of record-beat dicts) through the RecordAssembler alone, under the
    shared stream drivers' seeded idle and back-pressure: the ``bad`` bit of each instruction
    it emits."""
    dut = RecordAssembler()
    state = {"cycle": 0, "done": False}
    bad = []
    out_layout = dut.o.payload.shape()

    def on_beat(bits, cycle):
        bad.append(int(unpack(out_layout, bits).bad))
        state["done"] = len(bad) == len(blocks)

    beats = [pack(RecordBeat, {"value0": 0, "value1": 0, **beat, "end": int(k == len(block) - 1)})
             for block in blocks for k, beat in enumerate(block)]
    limit = stretched(20 * len(beats) + 50, 0.5)
    run_amaranth(dut, [Source("i", beats, state, stall=Stall(len(beats), 0, 0.5)),
                       Sink("o", state, on_beat, stall=Stall(len(beats), 1, 0.5)),
                       watchdog(state, limit, lambda: None)])
    assert len(bad) == len(blocks), f"record assembler bench: {len(bad)} of {len(blocks)}"
    return bad


def test_a_tadd_block_without_two_sources_and_a_destination_is_illegal():
    """D9's TADD/TSUB template is BSTART.TEW, two B.IOS (the sources) and a B.IOT (the
    destination): a block missing any of them is IllegalInstruction (``bad``)."""
    start = {"record": {"kind": K.BSTART_TEW, "f0": Opcode.TADD.value}}
    src = {"record": {"kind": K.B_IOS, "f0": 0, "f1": 1, "f2": 0}}
    dst = {"record": {"kind": K.B_IOT, "f0": 1, "f1": 1}}
    assert assemble([[start, src, src, dst],            # well formed
                     [start, src, dst],                 # one source
                     [start, src, src],                 # no destination
                     [start, dst],                      # neither
                     [src, src, dst],                   # no BSTART
                     [start, src, src, dst]]) == [0, 1, 1, 1, 1, 0]


def test_the_register_file_alone_keeps_the_models_names_and_rule():
    """TileRegisterFile alone under 2,000 random commits, each checked against the golden
    register file: whether the allocation may go (the ring rule of D7, a full queue among
    them), the ``live`` port by name, the status of a random name on the third lookup port,
    and (every 8th) that no two live names share a slot.  Phases of 100 commits fill one
    queue (loads into it, no reads: it wraps and faults, full or on a live Q#16) and drain
    (reads, most of the oldest live register, released at commit unless reused; one
    allocation into the queue with most room, or several anywhere; none when no queue has
    room, a release alone)."""
    dut = TileRegisterFile(width=32, slot_bytes=256)
    gold = Golden()
    rng = random.Random(29)
    queues = ("T", "U", "M", "N")
    counts = {"commits": 0, "full": 0, "ring": 0}

    def image(q):
        return TileImage(q, 256, dtype("U8"), Layout.ND, 2, 128, np.zeros(256, np.uint8),
                         np.ones(256, bool))

    def want_status(q, index):
        if q >= 6:
            return LookupStatus.ILLEGAL
        if q >= 4:                          # ACC and S: no index, never written (D7)
            return LookupStatus.NEVER
        if not 1 <= index <= QUEUE_DEPTH:
            return LookupStatus.ILLEGAL
        name = ("T", "U", "M", "N")[q]
        if index > gold.allocated(name):
            return LookupStatus.NEVER
        return LookupStatus.LIVE if gold.is_live(name, index) else LookupStatus.RELEASED

    async def bench(ctx):
        for step in range(2000):
            heavy = queues[(step // 200) % 4]
            reads, writes = [], []
            if (step // 100) % 2 == 0:                  # fill: loads into one queue
                n = 1 if rng.random() < 0.8 else rng.choice([2, 3, 8])
                writes = [image(heavy if n == 1 else rng.choice(queues)) for _ in range(n)]
            else:                                       # drain, mostly the oldest
                live = [n for n, _ in gold.live()]
                oldest = {n[0]: n for n in live}        # live() lists newest first
                picked = rng.sample(live, min(len(live), rng.choice([0, 1, 2, 2])))
                if picked and rng.random() < 0.6:
                    picked[0] = oldest.get(heavy, oldest[rng.choice(list(oldest))])
                reads = [TileRef(n[0], int(n[2:]), rng.random() < 0.3)
                         for n in dict.fromkeys(picked)]
                roomiest = max(queues, key=gold.room)
                if gold.room(roomiest) and rng.random() < 0.7:
                    writes = [image(roomiest)]
                elif gold.room(roomiest):
                    writes = [image(rng.choice(queues)) for _ in range(rng.choice([1, 2, 8]))]
            for p in range(2):
                ref = reads[p] if p < len(reads) else TileRef("T", 1)
                ctx.set(dut.lookup[p].queue, QUEUE_CODES[ref.queue])
                ctx.set(dut.lookup[p].index, ref.index)
            ctx.set(dut.release, sum((not r.reuse) << p for p, r in enumerate(reads)))
            for k in range(8):
                ctx.set(dut.alloc[k], QUEUE_CODES[writes[k].queue] if k < len(writes) else 0)
            ctx.set(dut.alloc_n, len(writes))
            try:
                gold.commit(reads, writes)
                ok = 1
            except TileAllocation as f:
                ok = 0
                counts["full" if "is full" in f.message else "ring"] += 1
            assert ctx.get(dut.alloc_ok) == ok, (step, [w.queue for w in writes])
            counts["commits"] += ok
            ctx.set(dut.commit, ok)
            await ctx.tick()
            ctx.set(dut.commit, 0)
            for code, q in enumerate(queues):
                want = sum(gold.is_live(q, k + 1) << k for k in range(QUEUE_DEPTH))
                assert ctx.get(dut.live[code]) == want, (step, q)
            q, index = rng.randrange(8), rng.randrange(18)
            ctx.set(dut.lookup[2].queue, q)
            ctx.set(dut.lookup[2].index, index)
            assert ctx.get(dut.found[2].status) == want_status(q, index), (step, q, index)
            if step % 8:
                continue
            slots = []
            for name, _ in gold.live():
                ctx.set(dut.lookup[2].queue, QUEUE_CODES[name[0]])
                ctx.set(dut.lookup[2].index, int(name[2:]))
                slots.append(ctx.get(dut.found[2].slot))
            assert len(set(slots)) == len(slots), (step, "two live names share a slot")

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    run_bounded(sim, 2100, "register file bench")
    # the draw reached what it aims at: commits, and vetoes of both kinds
    assert counts["commits"] > 600 and counts["full"] > 20 and counts["ring"] > 200, counts


def test_the_rtl_sees_global_memory_at_a_window_and_matches_there():
    """The bench places global memory at a base drawn from its seed and the program (so that
    the engines' address bits above 64 KB move): a multiple of 64 KB below 2**63, the same
    for the same seed and program, another for another seed; a program with an operand of
    2**20 or more keeps memory at 0.  The kernel (TLOAD, TLOAD, TADD, TSTORE, TLOAD back)
    matches the model there, in the same cycles as at 0."""
    mem = seeded_memory(21, 1 << 16)
    far = "TLOAD.NORM <LB0:16, LB1:4, S16, Zero>, [t6], ->T<256>\n"
    got = {}
    for seed, window, text, regs in ((1, True, KERNEL, REGS), (1, False, KERNEL, REGS),
                                     (2, True, KERNEL, REGS),
                                     (1, True, far, dict(REGS, t6=1 << 40))):
        cfg = ProgramConfig(seed=seed, window=window)
        steps = golden_steps(parse_program(text), dict(regs), mem, cfg.profile, cfg.lcfr)
        [(res, problems)] = run_programs([steps], mem, cfg)
        assert problems == [], problems
        got[(seed, window, text)] = (res.window, res.done_cycles)
    w1, cyc1 = got[(1, True, KERNEL)]
    assert w1 % (1 << 16) == 0 and 0 < w1 < 1 << 63
    assert got[(1, False, KERNEL)] == (0, cyc1)
    assert got[(2, True, KERNEL)][0] not in (0, w1) and got[(2, True, KERNEL)][1] == cyc1
    assert got[(1, True, far)][0] == 0
