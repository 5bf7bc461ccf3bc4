"""Simulating the L1 -> L0 engine against the golden model (Amaranth's simulator).

L1 is a read port answering row requests in order after a latency, L0 a write port; both
with random stalls from a seed.  The final L0 image, the fault codes and the cycles are
compared with ``model.load_data.load_data_with_transpose``.
"""

import random
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from amaranth.sim import Simulator

from model.buffers import Buffer
from model.faults import Fault
from model.load_data import (LDT_DTYPES, LoadData2dTransposeParams, LoadData2dTransposeParamsV2,
                             load_data_with_transpose, plan_ldt)

from .l1l0_engine import L1L0Engine

__all__ = ["LdtCall", "simulate_l1l0", "run_and_compare_l1l0"]

LB = {4: 2, 8: 3, 16: 4, 32: 5}
MASK32 = (1 << 32) - 1


@dataclass(frozen=True)
class LdtCall:
    params: object                  # LoadData2dTransposeParams or ...V2
    dst_name: str = "L0A"
    dst: int = 0
    src: int = 0

    def payload(self) -> dict:
        p = self.params
        v2 = p.version == 2
        return {"v2": int(v2), "lb": LB[LDT_DTYPES[p.dtype]], "dst_l0b": int(self.dst_name == "L0B"),
                "repeat": p.repeatTimes & MASK32, "start": p.startIndex & MASK32,
                "src_stride": p.srcStride & MASK32, "dst_gap": p.dstGap & MASK32,
                "dst_frac_gap": p.dstFracGap & MASK32,
                "src_frac_gap": (p.srcFracGap if v2 else 0) & MASK32,
                "addr_mode": int(bool(p.addrMode)), "src": self.src & MASK32,
                "dst": self.dst & MASK32}


@dataclass
class L1L0Result:
    l0: np.ndarray = None
    faults: list = field(default_factory=list)
    accept: list = field(default_factory=list)
    first_write: int | None = None
    last_write: int | None = None
    reads: int = 0
    timed_out: bool = False

    @property
    def cycles(self):
        if self.last_write is None or not self.accept:
            return None
        return self.last_write - self.accept[0] + 1


def simulate_l1l0(calls, l1: np.ndarray, l0_init: np.ndarray, seed: int = 0, latency: int = 2,
                  stall: float = 0.0, transpose: str = "square",
                  vcd: str | None = None) -> L1L0Result:
    dut = L1L0Engine(transpose=transpose)
    rng = random.Random(seed)
    res = L1L0Result(l0=l0_init.copy())
    state = {"cycle": 0, "done": False}
    beats = 0
    for c in calls:
        try:
            pl = plan_ldt(c.params, Buffer("L1", l1), Buffer(c.dst_name, l0_init.size), c.dst, c.src)
            beats += pl.bytes_moved // 32
        except Fault:
            pass
    limit = 10 * beats + 150 + 50 * len(calls)
    ok = 1 - stall

    async def clock(ctx):
        while not state["done"]:
            await ctx.tick()
            state["cycle"] += 1
            if state["cycle"] > limit:
                res.timed_out = state["done"] = True

    async def driver(ctx):
        ctx.set(dut.l1_size, l1.size)
        ctx.set(dut.l0_size, l0_init.size)
        for c in calls:
            while rng.random() > ok:
                ctx.set(dut.op.valid, 0)
                await ctx.tick()
            ctx.set(dut.op.payload, c.payload())
            ctx.set(dut.op.valid, 1)
            while not state["done"]:
                _, _, v, r = await ctx.tick().sample(dut.op.valid, dut.op.ready)
                if v and r:
                    res.accept.append(state["cycle"] - 1)
                    break
        ctx.set(dut.op.valid, 0)

    async def l1_port(ctx):
        pending = deque()
        prng = random.Random(seed + 1)
        while not state["done"]:
            now = state["cycle"]
            ctx.set(dut.rd.ready, prng.random() < ok)
            show = bool(pending) and pending[0][0] <= now and prng.random() < ok
            ctx.set(dut.rd_data.valid, show)
            if show:
                ctx.set(dut.rd_data.payload, pending[0][1])
            _, _, qv, qr, qa, sv, sr = await ctx.tick().sample(
                dut.rd.valid, dut.rd.ready, dut.rd.payload.addr, dut.rd_data.valid, dut.rd_data.ready)
            if qv and qr:
                a = int(qa)
                if a % 32 or a + 32 > l1.size:
                    raise AssertionError(f"the engine read L1 at {a:#x}, outside the rows of L1")
                pending.append((now + latency, int.from_bytes(l1[a:a + 32].tobytes(), "little")))
                res.reads += 1
            if sv and sr:
                pending.popleft()

    async def l0_port(ctx):
        wrng = random.Random(seed + 2)
        while not state["done"]:
            ctx.set(dut.wr.ready, wrng.random() < ok)
            _, _, v, r, a, d = await ctx.tick().sample(dut.wr.valid, dut.wr.ready,
                                                       dut.wr.payload.addr, dut.wr.payload.data)
            if v and r:
                a = int(a)
                if a % 32 or a + 32 > res.l0.size:
                    raise AssertionError(f"the engine wrote L0 at {a:#x}, outside L0")
                res.l0[a:a + 32] = np.frombuffer(int(d).to_bytes(32, "little"), np.uint8)
                cyc = state["cycle"] - 1
                res.last_write = cyc
                if res.first_write is None:
                    res.first_write = cyc

    async def completions(ctx):
        ctx.set(dut.done.ready, 1)
        while not state["done"]:
            _, _, v, pl = await ctx.tick().sample(dut.done.valid, dut.done.payload)
            if v:
                f = pl.fault
                res.faults.append(int(getattr(f, "value", f)))
                if len(res.faults) == len(calls):
                    state["done"] = True

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(clock, background=True)
    for proc in (driver, l1_port, l0_port, completions):
        sim.add_testbench(proc)
    if vcd:
        traces = [dut.op.valid, dut.op.ready, dut.rd.valid, dut.rd.ready, dut.rd_data.valid,
                  dut.rd_data.ready, dut.wr.valid, dut.wr.ready, dut.done.valid]
        with sim.write_vcd(vcd, traces=traces):
            sim.run()
    else:
        sim.run()
    return res


def run_and_compare_l1l0(calls, l1: np.ndarray, l0_init: np.ndarray, **kw):
    """(result, problems): the final L0 image, each fault code, the watchdog."""
    res = simulate_l1l0(calls, l1, l0_init, **kw)
    problems = []
    if res.timed_out:
        problems.append("the engine did not complete within the watchdog")
    want = Buffer(calls[0].dst_name if calls else "L0A", l0_init.copy())
    for k, c in enumerate(calls):
        want.name = c.dst_name
        try:
            load_data_with_transpose(Buffer("L1", l1), want, c.params, c.dst, c.src)
            code = 0
        except Fault as f:
            code = f.code
        got = res.faults[k] if k < len(res.faults) else None
        if got != code:
            problems.append(f"call {k}: fault {got} from the engine, {code} from the model")
    diff = np.nonzero(want.data != res.l0)[0]
    if diff.size:
        b = int(diff[0])
        problems.append(f"L0 byte {b:#x} (fractal {b // 512}, line {b % 512 // 32}, byte "
                        f"{b % 32}): expected {want.data[b]:#04x}, got {res.l0[b]:#04x} "
                        f"({diff.size} bytes differ)")
    return res, problems
