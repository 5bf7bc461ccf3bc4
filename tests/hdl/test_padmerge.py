"""Pad/merge alone: every byte is the data where valid, else the pad pattern's byte at the
same position in its element; Null padding leaves the padded bytes unwritten.  Lines go
through under back-pressure, in order, with their ``meta``."""

import random

import pytest
from tilecosim.hdl.tload.padmerge import PadMerge
from tilecosim.model.dtypes import DTYPES, PadValue, pad_bytes
from tilecosim.sim.api import pack, run_amaranth, stretched, unpack, watchdog
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Sink, Source


def expected(data, valid, esize, pattern, null):
    out, be = bytearray(32), 0
    for b in range(32):
        v = (valid >> b) & 1
        out[b] = data[b] if v else pattern[b % esize]
        be |= (v | (not null)) << b
    return bytes(out), be


def lines(seed, n=40):
    rng = random.Random(seed)
    names = list(DTYPES)
    for k in range(n):
        dt = DTYPES[rng.choice(names)]
        pad = rng.choice(list(PadValue))
        # the model's pad bytes are the pattern of one element (Null: no pattern)
        pattern = pad_bytes(dt, pad, "finite") if pad is not PadValue.Null else bytes(dt.esize)
        valid = rng.choice([0, (1 << 32) - 1, rng.getrandbits(32),
                            (1 << rng.randint(0, 32)) - 1])
        yield (bytes(rng.getrandbits(8) for _ in range(32)), valid,
               dt.esize.bit_length() - 1, pattern, pad is PadValue.Null, k)


@pytest.mark.parametrize("stall", [0.0, 0.5])
@pytest.mark.parametrize("meta_width", [1, 15, 16, 17])
def test_merge_pad_and_byte_enables(stall, meta_width):
    """Through the shared stream drivers: a Source idling and a Sink back-pressuring with the
    seeded patterns every bench uses, and the bench's watchdog (lines lost never arrive)."""
    cases = list(lines(meta_width + int(stall * 10)))
    dut = PadMerge(meta_width)
    state = {"cycle": 0, "done": False}
    got = []
    in_layout, out_layout = dut.i.payload.shape(), dut.o.payload.shape()

    def on_beat(bits, cycle):
        p = unpack(out_layout, bits)
        got.append((int(p.data).to_bytes(32, "little"), int(p.be), int(p.meta)))
        state["done"] = len(got) == len(cases)

    payloads = [pack(in_layout, {"data": int.from_bytes(data, "little"), "valid": valid,
                                 "log2_esize": log2_esize,
                                 "pattern": int.from_bytes(pattern, "little"),
                                 "null": int(null), "meta": k % (1 << meta_width)})
                for data, valid, log2_esize, pattern, null, k in cases]
    go = 1 - stall                                   # the patterns' probability of a handshake
    source = Source("i", payloads, state, stall=Stall(meta_width, 0, go) if stall else None)
    sink = Sink("o", state, on_beat, stall=Stall(meta_width, 1, go) if stall else None)
    clock = watchdog(state, stretched(10 * len(cases), go) + 100, lambda: None)
    run_amaranth(dut, [source, sink, clock])
    assert len(got) == len(cases), f"{len(got)} of {len(cases)} lines within the watchdog"
    for (data, valid, log2_esize, pattern, null, k), (out, be, meta) in zip(cases, got):
        want, want_be = expected(data, valid, 1 << log2_esize, pattern, null)
        assert be == want_be
        assert all(out[b] == want[b] for b in range(32) if (want_be >> b) & 1)
        assert meta == k % (1 << meta_width)
