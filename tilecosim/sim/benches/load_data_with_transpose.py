"""Simulating the L1 -> L0 engine against the golden model (Amaranth's simulator).

L1 is a read port answering W-byte requests (P = W/32 rows) in order after a latency, L0 a
write port of W bytes; both with random stalls from a seed.  The final L0 image, the fault codes and the cycles are
compared with ``model.load_data.load_data_with_transpose``.
"""

from dataclasses import dataclass, field

import numpy as np
from amaranth.lib import data

from tilecosim.hdl.l1l0.engine import L1L0Engine, LdtOp
from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault, completion_label, fault_label
from tilecosim.model.load_data import LDT_DTYPES, load_data_with_transpose, plan_ldt
from tilecosim.sim.api import pack, stretched, unpack, watchdog
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.runner import run_bench
from tilecosim.sim.stall import Stall
from tilecosim.sim.streams import Responder, Sink, Source, in_flight

__all__ = ["LdtCall", "L1L0Result", "l1l0_plans", "l1l0_limit", "l1l0_moves", "l1l0_setup",
           "simulate_l1l0", "run_and_compare_l1l0", "compare_l1l0"]

LOG2_EBITS = {4: 2, 8: 3, 16: 4, 32: 5}       # element bits -> the engine's log2_ebits
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
        return {"v2": int(v2), "log2_ebits": LOG2_EBITS[LDT_DTYPES[p.dtype]],
                "dst_l0b": int(self.dst_name == "L0B"),
                "repeat": p.repeat_times & MASK32, "start": p.start_index & MASK32,
                "src_stride": p.src_stride & MASK32, "dst_gap": p.dst_gap & MASK32,
                "dst_frac_gap": p.dst_frac_gap & MASK32,
                "src_frac_gap": (p.src_frac_gap if v2 else 0) & MASK32,
                "addr_mode": int(bool(p.addr_mode)), "src": self.src & MASK32,
                "dst": self.dst & MASK32}


@dataclass
class L1L0Result:
    l0: np.ndarray = None
    faults: list = field(default_factory=list)
    accept: list = field(default_factory=list)
    done: list = field(default_factory=list)        # the cycle of every completion
    first_write: int | None = None
    last_write: int | None = None
    reads: int = 0
    timed_out: bool = False
    waveform: str | None = None            # written when the watchdog fired
    error: str | None = None               # what a batch harness found wrong (the Python
                                           # bench raises AssertionError instead)

    @property
    def cycles(self):
        if self.last_write is None or not self.accept:
            return None
        return self.last_write - self.accept[0] + 1


def l1l0_plans(calls, l1: np.ndarray, l0_size: int) -> list:
    """The model's plan of each call (:func:`~tilecosim.model.load_data.plan_ldt`), None
    for a call that faults: what :func:`l1l0_limit` and :func:`l1l0_moves` are made of."""
    out = []
    for c in calls:
        try:
            out.append(plan_ldt(c.params, Buffer("L1", l1), Buffer(c.dst_name, l0_size), c.dst,
                                c.src))
        except Fault:
            out.append(None)
    return out


def l1l0_limit(plans) -> int:
    """The watchdog's limit of calls planned as ``plans`` (:func:`l1l0_plans`): 10 x the
    lines the calls write + 150 + 50 per call (at any W)."""
    beats = sum(pl.bytes_moved // 32 for pl in plans if pl is not None)
    return 10 * beats + 150 + 50 * len(plans)


def l1l0_moves(plans) -> list[bool]:
    """Which calls planned as ``plans`` move data by the model: no fault, and at least one
    byte (the protocol's access rule: the others must not read L1 or write L0)."""
    return [pl is not None and pl.bytes_moved > 0 for pl in plans]


def l1l0_procs(calls, l1: np.ndarray, res: "L1L0Result", seed: int = 0, latency: int = 2,
               stall: float = 0.0, width: int = 32):
    """The L1 -> L0 bench, simulator-neutral (see :mod:`tilecosim.sim.api`)."""
    state = {"cycle": 0, "done": False}
    ok = 1 - stall
    plans = l1l0_plans(calls, l1, res.l0.size)
    limit = stretched(l1l0_limit(plans), ok)
    payloads = [pack(LdtOp, c.payload()) for c in calls]

    clock = watchdog(state, limit, lambda: setattr(res, "timed_out", True))

    source = Source("op", payloads, state, stall=Stall(seed, 0, ok), accepted=res.accept)

    async def driver(port):
        port.set("l1_size", l1.size)
        port.set("l0_size", res.l0.size)
        await source(port)

    W = width

    def read(a):                                        # the request payload is {addr} alone
        if a % 32 or a + W > l1.size:
            raise AssertionError(f"the engine read L1 at {a:#x}, outside the rows of L1")
        res.reads += 1
        return int.from_bytes(l1[a:a + W].tobytes(), "little")

    moving = in_flight(res.accept, res.faults, l1l0_moves(plans))
    l1_port = Responder("rd", "rd_data", state, read, latency=latency,
                        ready_stall=Stall(seed, 1, ok), valid_stall=Stall(seed, 2, ok),
                        allowed=moving)
    wr_layout = data.StructLayout({"addr": 32, "data": 8 * W})

    def write(bits, cycle):
        w = unpack(wr_layout, bits)
        a = int(w.addr)
        if a % W or a + W > res.l0.size:
            raise AssertionError(f"the engine wrote L0 at {a:#x}, outside L0")
        res.l0[a:a + W] = np.frombuffer(int(w.data).to_bytes(W, "little"), np.uint8)
        res.last_write = cycle
        if res.first_write is None:
            res.first_write = cycle

    l0_port = Sink("wr", state, write, stall=Stall(seed, 3, ok), allowed=moving)

    def complete(bits, cycle):
        res.faults.append(int(bits))                    # the payload is {fault} alone
        res.done.append(cycle)
        if len(res.faults) == len(calls):
            state["done"] = True

    completions = Sink("done", state, complete, stall=Stall(seed, 4, ok),
                       most=lambda: len(res.accept))

    return [clock, driver, l1_port, l0_port, completions]


def l1l0_setup(calls, l1: np.ndarray, l0_init: np.ndarray, seed: int, latency: int,
               stall: float, width: int = 32):
    """(processes, result) of the L1 -> L0 bench, for :func:`tilecosim.sim.runner.run_bench`."""
    res = L1L0Result(l0=l0_init.copy())
    return l1l0_procs(calls, l1, res, seed, latency, stall, width), res


def simulate_l1l0(calls, l1: np.ndarray, l0_init: np.ndarray, seed: int = 0, latency: int = 2,
                  stall: float = 0.0, transpose: str = "square", vcd: str | None = None,
                  backend: str = "amaranth", waves: str | None = None,
                  timing: dict | None = None, width: int = 32,
                  design: Design = BUILTIN) -> L1L0Result:
    """Run LoadDataWithTranspose calls through the engine (W = ``width``; ``design``: the
    built-in one or one of the contract from elsewhere) on ``backend``."""

    top = "l1l0_engine" if width == 32 else f"l1l0_engine_w{width}"
    return run_bench(backend,
                     lambda: design.make(lambda: L1L0Engine(width=width, transpose=transpose)),
                     top,
                     l1l0_setup, (list(calls), l1, l0_init, seed, latency, stall, width),
                     vcd=vcd, waves=waves, timing=timing, key=repr((transpose, width)),
                     design=design)


def run_and_compare_l1l0(calls, l1: np.ndarray, l0_init: np.ndarray, **kw):
    """(result, problems): the final L0 image, each fault code, the watchdog."""
    res = simulate_l1l0(calls, l1, l0_init, **kw)
    return res, compare_l1l0(calls, l1, l0_init, res, kw.get("vcd") or kw.get("waves"))


def compare_l1l0(calls, l1: np.ndarray, l0_init: np.ndarray, res: L1L0Result,
                 waves: str | None = None) -> list[str]:
    """Disagreements with the golden model, one line each: each call's fault code (``call
    k: ...``), the final L0 image, the watchdog."""
    problems = []
    if res.timed_out:
        problems.append(f"the engine did not complete within the watchdog; waveform: "
                        f"{res.waveform or waves}")
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
            problems.append(f"call {k}: {completion_label(got)} from the design, "
                            f"{fault_label(code)} from the model")
    diff = np.nonzero(want.data != res.l0)[0]
    if diff.size:
        b = int(diff[0])
        problems.append(f"L0 byte {b:#x} (fractal {b // 512}, line {b % 512 // 32}, byte "
                        f"{b % 32}): expected {want.data[b]:#04x}, got {res.l0[b]:#04x} "
                        f"({diff.size} bytes differ)")
    return problems
