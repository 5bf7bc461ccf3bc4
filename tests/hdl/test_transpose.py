"""The transpose unit: both implementations against numpy's transpose, with random
back-pressure, every element size, partial squares; and the square one's throughput."""

import numpy as np
import pytest

from tilecosim.hdl.transpose import ChunkTranspose, NaiveTranspose, SquareTranspose
from tilecosim.sim.api import pack as pack_fields, run_amaranth, unpack, watchdog
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Sink, Source


def squares(seed, count=10, lb=None, b4=False, bits=256):
    """(lb, lines, square) with the square as elements (S, S) of 2**lb bits."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        lg = int(rng.integers(2 if b4 else 3, 7)) if lb is None else lb
        s = bits >> lg
        lines = int(rng.choice([s, max(1, s // 2), 1]))
        sq = rng.integers(0, 1 << min(1 << lg, 62), (s, s), dtype=np.uint64)
        out.append((lg, lines, sq))
    return out


def pack(elems, lg):
    """Elements of 2**lg bits -> an int, element 0 in the low bits (b4: even nibble low)."""
    v = 0
    for k, x in enumerate(elems):
        v |= int(x) << (k << lg)
    return v


def stream_through(dut, payloads, total, fields, seed, p_in, p_out, limit, name):
    """Offer ``payloads`` on ``dut.i`` and take ``total`` outputs of ``dut.o`` (the ``fields``
    of each, as ints) through the shared stream drivers, idling and back-pressuring with the
    seeded patterns every bench uses; returns (outputs, cycles from the first input taken to the
    first and the last output)."""
    state = {"cycle": 0, "done": False}
    got, timing, accepted = [], {}, []
    in_layout, out_layout = dut.i.payload.shape(), dut.o.payload.shape()

    def on_beat(bits, cycle):
        p = unpack(out_layout, bits)
        got.append(tuple(int(getattr(p, f)) for f in fields))
        timing.setdefault("first", cycle - accepted[0])      # cycles after the first input
        timing["last"] = cycle - accepted[0]
        state["done"] = len(got) == total

    source = Source("i", [pack_fields(in_layout, pl) for pl in payloads], state,
                    stall=Stall(seed, 0, p_in) if p_in < 1 else None, accepted=accepted)
    sink = Sink("o", state, on_beat, stall=Stall(seed, 1, p_out) if p_out < 1 else None)
    clock = watchdog(state, limit, lambda: None)
    run_amaranth(dut, [source, sink, clock])
    assert len(got) == total, f"{name}: {len(got)} of {total} outputs within {limit} cycles"
    return got, timing


def run(cls, sqs, seed=0, p_in=1.0, p_out=1.0, max_rows=32, bits=256):
    payloads = [{"data": pack(row, lg), "log2_ebits": lg, "lines": lines}
                for lg, lines, sq in sqs for row in sq]
    # about 2.4 cycles per row or column at the lowest rates (0.7 in, 0.6 out); 6 is ample
    rows = sum((bits >> lg) + lines for lg, lines, _ in sqs)
    return stream_through(cls(max_rows=max_rows, line_bits=bits), payloads,
                          sum(lines for _, lines, _ in sqs), ("data", "index", "last"), seed,
                          p_in, p_out, 6 * rows + 200, f"{cls.__name__} bench")


def expected(sqs):
    out = []
    for lg, lines, sq in sqs:
        for col in range(lines):
            out.append((pack(sq[:, col], lg), col, int(col == lines - 1)))
    return out


@pytest.mark.parametrize("max_rows", [32, 64])
@pytest.mark.parametrize("cls", [SquareTranspose, NaiveTranspose])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_squares_with_back_pressure(cls, seed, max_rows):
    sqs = squares(seed, count=12, b4=max_rows == 64)
    got, _ = run(cls, sqs, seed, p_in=0.7, p_out=0.6, max_rows=max_rows)
    assert got == expected(sqs)


@pytest.mark.parametrize("lb", [2, 3, 4, 5, 6])
def test_square_unit_full_throughput_one_square_of_storage(lb):
    """One row in and one column out per cycle, no gap between squares: the last of N*S
    columns leaves S + N*S - 1 cycles after the start."""
    sqs = squares(10 + lb, count=8, lb=lb)
    sqs = [(lg, 256 >> lg, sq) for lg, _, sq in sqs]          # full squares
    got, t = run(SquareTranspose, sqs, max_rows=64 if lb == 2 else 32)
    assert got == expected(sqs)
    s = 256 >> lb
    assert t["first"] == s and t["last"] == s + 8 * s - 1


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("cls", [SquareTranspose, NaiveTranspose])
def test_narrower_instances_of_the_same_code(cls, bits):
    """line_bits 64 and 128 (squares 8x8 .. 1x1 and 16x16 .. 2x2, b4 included): the instances
    the formal proofs use."""
    for b4 in (False, True):
        sqs = squares(7, count=12, b4=b4, bits=bits)
        got, _ = run(cls, sqs, 7, p_in=0.7, p_out=0.6, max_rows=bits // (4 if b4 else 8),
                     bits=bits)
        assert got == expected(sqs)


def test_naive_unit_drains_before_filling():
    sqs = [(3, 32, sq) for _, _, sq in squares(5, count=3, lb=3)]
    got, t = run(NaiveTranspose, sqs)
    assert got == expected(sqs)
    assert t["last"] > 32 + 3 * 32 + 30                         # no overlap of fill and drain


def run_chunks(width, squares_, seed, p_in=1.0, p_out=1.0):
    """ChunkTranspose fed ``squares_`` = [(lines, rows)], rows = P x (data, valid) per row."""
    payloads = [{"data": data, "valid": valid, "lines": lines}
                for lines, rows in squares_ for data, valid in rows]
    return stream_through(ChunkTranspose(width), payloads, sum(n for n, _ in squares_),
                          ("data", "valid", "index", "last"), seed, p_in, p_out,
                          6 * sum(len(r) + n for n, r in squares_) + 200, "ChunkTranspose bench")


def chunk_squares(width, seed, count):
    """Random squares of P rows of P 32-byte chunks with random byte-valid bits, and for
    each the columns to emit (P, 1 or in between)."""
    p = width // 32
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        chunks = rng.integers(0, 256, (p, p, 32), dtype=np.uint8)     # [row][chunk][byte]
        valid = rng.integers(0, 2, (p, p, 32), dtype=np.uint8)
        lines = int(rng.integers(1, p + 1))
        rows = [(int.from_bytes(chunks[r].tobytes(), "little"),
                 pack(valid[r].reshape(-1), 0)) for r in range(p)]
        out.append((lines, rows, chunks, valid))
    return out


def chunk_expected(sqs):
    """Column c of a square: chunk c of each row, rows in order (numpy's transpose)."""
    out = []
    for lines, _, chunks, valid in sqs:
        t, tv = chunks.transpose(1, 0, 2), valid.transpose(1, 0, 2)
        for c in range(lines):
            out.append((int.from_bytes(t[c].tobytes(), "little"), pack(tv[c].reshape(-1), 0),
                        c, int(c == lines - 1)))
    return out


@pytest.mark.parametrize("width", [64, 128])
@pytest.mark.parametrize("seed", [1, 2])
def test_chunk_transpose_with_back_pressure(width, seed):
    sqs = chunk_squares(width, seed, 10)
    got, _ = run_chunks(width, [(n, r) for n, r, _, _ in sqs], seed, p_in=0.7, p_out=0.6)
    assert got == chunk_expected(sqs)


@pytest.mark.parametrize("width", [64, 128])
def test_chunk_transpose_full_throughput(width):
    """Full squares back to back: one row in and one column out per cycle; the first column
    leaves after the P rows of the first square, the last N*P - 1 cycles after it."""
    p = width // 32
    sqs = [(p, r, c, v) for _, r, c, v in chunk_squares(width, 3, 8)]
    got, t = run_chunks(width, [(n, r) for n, r, _, _ in sqs], 3)
    assert got == chunk_expected(sqs)
    assert t["first"] == p and t["last"] == p + 8 * p - 1
