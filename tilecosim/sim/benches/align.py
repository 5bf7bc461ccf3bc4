"""Simulating the LoadAlign unit against the golden model (Amaranth's simulator).

The bench drives a stream of LoadAligns (with random gaps), models UB as a synchronous
read port (data the cycle after the address), applies random back-pressure on the
result, and compares every result -- registers, next address, fault code -- with
``model.load_align.load_align``.
"""

from dataclasses import dataclass, field

import numpy as np

from tilecosim.hdl.align.common import Addressing, AlignOp, LoadDist, StoreDist
from tilecosim.hdl.align.load import LoadAlignResult, LoadAlignUnit
from tilecosim.hdl.align.store import StoreAlignOp, StoreAlignResult as res_layout, StoreAlignUnit
from tilecosim.model.buffers import Buffer
from tilecosim.model.faults import Fault, fault_label
from tilecosim.model.load_align import (WIDTHS, Addressing as MAddr, LoadDist as MLoadDist,
                                        StoreDist as MStoreDist, load_align, store_align,
                                        store_align_geometry)
from tilecosim.sim.api import pack, stretched, unpack, watchdog
from tilecosim.sim.design import BUILTIN, Design
from tilecosim.sim.runner import run_bench
from tilecosim.sim.stall import Stall
from tilecosim.sim.protocol import ProtocolError, Rule
from tilecosim.sim.streams import Sink, Source, in_flight

__all__ = ["AlignCase", "StoreCase", "load_align_setup", "simulate_load_align",
           "compare_load_align", "store_align_setup", "store_align_run", "simulate_store_align",
           "store_footprint", "store_source", "compare_store_align", "store_moves"]

T_LOG = {"b8": 0, "b16": 1, "b32": 2, "b64": 3}
MODE = {"plain": Addressing.PLAIN, "post_update": Addressing.POST_UPDATE,
        "addr_reg": Addressing.ADDR_REG}


@dataclass(frozen=True)
class AlignCase:
    dist: str
    t: str
    addr: int
    how: MAddr = MAddr()
    reg_trait: int = 1

    def payload(self) -> dict:
        dist = self.dist if isinstance(self.dist, int) else LoadDist[self.dist].value
        return {"dist": dist, "t": T_LOG[self.t], "addr": self.addr,
                "mode": MODE[self.how.kind], "value": self.how.value, "reg_trait": self.reg_trait}


@dataclass
class AlignResult:
    results: list = field(default_factory=list)     # (dst0 bytes, dst1 bytes, next_addr, fault)
    accept: list = field(default_factory=list)
    out: list = field(default_factory=list)
    timed_out: bool = False
    waveform: str | None = None            # written when the watchdog fired
    error: str | None = None               # what a batch harness found wrong (the Python
                                           # bench raises AssertionError instead)


def load_align_procs(cases, ub: np.ndarray, vl: int, seed: int, p_op: float, p_ready: float,
                     res: "AlignResult"):
    """The LoadAlign bench, simulator-neutral (see :mod:`tilecosim.sim.api`): a driver with random
    gaps, a synchronous UB read port, a sink with random back-pressure, a watchdog."""
    state = {"cycle": 0, "done": False}
    limit = stretched(10 * len(cases), p_op, p_ready) + 100
    padded = np.concatenate([ub, np.zeros(2 * vl, np.uint8)])
    res_layout = LoadAlignResult(vl)
    payloads = [pack(AlignOp, c.payload()) for c in cases]

    clock = watchdog(state, limit, lambda: setattr(res, "timed_out", True))

    driver = Source("op", payloads, state, stall=Stall(seed, 0, p_op), accepted=res.accept)

    async def sram(port):
        port.set("ub_size", ub.size)
        while not state["done"]:
            en, addr = await port.tick("ub_en", "ub_addr")
            if en:
                port.set("ub_data", int.from_bytes(padded[addr:addr + 2 * vl].tobytes(), "little"))

    def result(bits, cycle):
        pl = unpack(res_layout, bits)
        f = pl.fault
        res.results.append((int(pl.dst0).to_bytes(vl, "little"),
                            int(pl.dst1).to_bytes(vl, "little"),
                            int(pl.next_addr), int(getattr(f, "value", f))))
        res.out.append(cycle)
        if len(res.results) == len(cases):
            state["done"] = True

    sink = Sink("res", state, result, stall=Stall(seed, 1, p_ready), most=lambda: len(res.accept))

    return [clock, driver, sram, sink]


def load_align_setup(cases, ub: np.ndarray, vl: int, seed: int, p_op: float, p_ready: float):
    """(processes, result) of the LoadAlign bench, for :func:`tilecosim.sim.runner.run_bench`."""
    res = AlignResult()
    return load_align_procs(cases, ub, vl, seed, p_op, p_ready, res), res


def simulate_load_align(cases, ub: np.ndarray, vl: int = 256, seed: int = 0,
                        p_op: float = 1.0, p_ready: float = 1.0, vcd: str | None = None,
                        backend: str = "amaranth", waves: str | None = None,
                        timing: dict | None = None, design: Design = BUILTIN) -> AlignResult:
    """Run a stream of LoadAligns through the unit (``design``: the built-in one, or one
    of the contract from elsewhere) on ``backend``."""

    return run_bench(backend, lambda: design.make(lambda: LoadAlignUnit(vl=vl)),
                     "load_align_unit", load_align_setup,
                     (list(cases), ub, vl, seed, p_op, p_ready), vcd=vcd, waves=waves,
                     timing=timing, key=repr((vl,)), design=design)


def _element_bytes(c: AlignCase) -> int:
    """The bytes of a destination element of ``c``: the mode's width, else T's (a half of
    T's with RegTraitNumTwo)."""
    t = WIDTHS[c.t]
    if c.reg_trait == 2:
        return t // 2
    return (MLoadDist[c.dist].width if isinstance(c.dist, str) else None) or t


def compare_load_align(cases, ub: np.ndarray, res: AlignResult, vl: int = 256) -> list[str]:
    """Disagreements with the model, one line each (empty: all equal); a batch harness's
    protocol violation first."""
    if res.error:
        return [res.error]
    problems = []
    if res.timed_out:
        problems.append(f"the unit did not return every result within 10 cycles per op + 100; "
                        f"waveform: {res.waveform}")
    buf = Buffer("UB", ub)
    for i, (c, got) in enumerate(zip(cases, res.results)):
        try:
            want = load_align(buf, c.addr, c.dist, c.t, c.how, vl, c.reg_trait)
        except Fault as f:
            if got[3] != f.code:
                problems.append(f"op {i} {c}: fault {fault_label(got[3])} from the design, "
                                f"{fault_label(f.code)} from the model ({f})")
            continue
        if got[3]:
            problems.append(f"op {i} {c}: fault {fault_label(got[3])} from the design, "
                            f"NONE (0) from the model")
            continue
        w = _element_bytes(c)
        for k, reg in enumerate(want.dst):
            if got[k] != reg.tobytes():
                lane = next(b for b in range(vl) if got[k][b] != reg[b])
                problems.append(f"op {i} {c}: dst{k} element {lane // w} (b{8 * w}) byte "
                                f"{lane % w} (lane {lane}): expected {reg[lane]:#04x}, got "
                                f"{got[k][lane]:#04x}")
        if c.how.kind == "post_update" and got[2] != want.next_addr:
            problems.append(f"op {i} {c}: next_addr {got[2]:#x}, model {want.next_addr:#x}")
    return problems


@dataclass(frozen=True)
class StoreCase:
    dist: str
    t: str
    addr: int
    regs: tuple                    # one or two bytes objects of VL bytes
    mask: bytes                    # one 0/1 byte per lane
    how: MAddr = MAddr()
    reg_trait: int = 1
    #: how ``regs`` and ``mask`` were made, as ``tilecosim store-align`` options (its
    #: reproduce line); () when given as bytes
    origin: tuple = ()

    def payload(self, vl) -> dict:
        r = list(self.regs) + [bytes(vl)] * (2 - len(self.regs))
        dist = self.dist if isinstance(self.dist, int) else StoreDist[self.dist].value
        return {"dist": dist, "t": T_LOG[self.t], "addr": self.addr,
                "mode": MODE[self.how.kind], "value": self.how.value, "reg_trait": self.reg_trait,
                "src0": int.from_bytes(r[0], "little"), "src1": int.from_bytes(r[1], "little"),
                "mask": sum(1 << k for k, b in enumerate(self.mask) if b)}


def store_align_procs(cases, ub: np.ndarray, mem: np.ndarray, vl: int, seed: int, p_op: float,
                      p_ready: float, results: list, state: dict):
    """The StoreAlign bench, simulator-neutral: a driver with random gaps, a synchronous UB
    write port applying byte enables to ``mem``, a sink with random back-pressure."""
    payloads = [pack(StoreAlignOp(vl), c.payload(vl)) for c in cases]
    limit = stretched(10 * len(cases), p_op, p_ready) + 100

    clock = watchdog(state, limit, lambda: state.update(timed_out=True))

    driver = Source("op", payloads, state, stall=Stall(seed, 0, p_op),
                    accepted=state.setdefault("accept", []))

    accepted = state["accept"]
    may_store = in_flight(accepted, results, store_moves(cases, ub, vl))

    async def sram(port):
        port.set("ub_size", ub.size)
        while not state["done"]:
            en, addr, wdata, be = await port.tick("ub_wen", "ub_waddr", "ub_wdata", "ub_wbe")
            if en and not may_store(state["cycle"] - 1):
                raise ProtocolError("ub_wen", state["cycle"] - 1, Rule.FAULTING_ACCESS)
            if en:
                d = int(wdata).to_bytes(2 * vl, "little")
                for k in range(2 * vl):
                    if (be >> k) & 1:
                        if addr + k >= ub.size:
                            raise AssertionError(f"the unit wrote UB byte {addr + k:#x}, "
                                                 f"past its end")
                        mem[addr + k] = d[k]

    def result(bits, cycle):
        pl = unpack(res_layout, bits)
        f = pl.fault
        results.append((int(pl.next_addr), int(getattr(f, "value", f))))
        state.setdefault("out", []).append(cycle)
        if len(results) == len(cases):
            state["done"] = True

    sink = Sink("res", state, result, stall=Stall(seed, 1, p_ready),
                most=lambda: len(accepted))

    return [clock, driver, sram, sink]


def store_moves(cases, ub: np.ndarray, vl: int) -> list[bool]:
    """Which StoreAligns the model lets store (no fault): the protocol's access rule lets
    only these write UB."""
    out, scratch = [], Buffer("UB", ub.copy())    # a fault depends on no byte of UB
    for c in cases:
        regs = [np.frombuffer(r, np.uint8) for r in c.regs]
        mask = np.frombuffer(c.mask, np.uint8).astype(bool)
        try:
            store_align(scratch, c.addr, regs, c.dist, c.t, mask, c.how, vl, c.reg_trait)
            out.append(True)
        except Fault:
            out.append(False)
    return out


def store_align_setup(cases, ub: np.ndarray, vl: int, seed: int, p_op: float, p_ready: float):
    """(processes, result) of the StoreAlign bench: the result is a dict with the final
    UB image ``mem``, the ``results`` (next address, fault) and ``timed_out``."""
    out = {"mem": ub.copy(), "results": [], "cycle": 0, "done": False, "timed_out": False,
           "accept": [], "out": []}
    return store_align_procs(cases, ub, out["mem"], vl, seed, p_op, p_ready, out["results"],
                             out), out


def store_align_run(cases, ub: np.ndarray, vl: int = 256, seed: int = 0,
                    p_op: float = 1.0, p_ready: float = 1.0, vcd: str | None = None,
                    backend: str = "amaranth", waves: str | None = None,
                    timing: dict | None = None, design: Design = BUILTIN) -> dict:
    """Run StoreAligns through the unit (``design``) on ``backend``: a dict with the final
    UB image ``mem``, the ``results`` (next address, fault), the ``accept`` and ``out``
    cycles, ``timed_out`` and, after a hang, the ``waveform`` written."""
    return run_bench(backend, lambda: design.make(lambda: StoreAlignUnit(vl=vl)),
                     "store_align_unit", store_align_setup,
                     (list(cases), ub, vl, seed, p_op, p_ready), vcd=vcd, waves=waves,
                     timing=timing, key=repr((vl,)), design=design)


def simulate_store_align(cases, ub: np.ndarray, vl: int = 256, seed: int = 0,
                         p_op: float = 1.0, p_ready: float = 1.0, vcd: str | None = None,
                         backend: str = "amaranth", waves: str | None = None,
                         timing: dict | None = None, design: Design = BUILTIN):
    """:func:`store_align_run`'s (final UB image, results, timed_out); ``timing``, when
    given, also receives the cycle of every accept and result (``accept``, ``out``)."""
    out = store_align_run(cases, ub, vl, seed, p_op, p_ready, vcd, backend, waves, timing,
                          design)
    if timing is not None:
        timing.update(accept=out["accept"], out=out["out"])
    return out["mem"], out["results"], out["timed_out"]


def store_footprint(c: StoreCase, vl: int = 256) -> tuple[int, int, int]:
    """(effective address, bytes, bytes of the mode's element) of the UB range a legal
    ``c`` writes."""
    d = MStoreDist[c.dist] if isinstance(c.dist, str) else MStoreDist(c.dist)
    size = WIDTHS[c.t]
    ea = c.addr + (c.how.value * size if c.how.kind == "addr_reg" else 0)
    if c.reg_trait == 2:
        return ea, 2 * vl, size
    n, _ = store_align_geometry(d, c.t, vl)
    return ea, n, d.width or size


def store_source(c: StoreCase, k: int, vl: int = 256) -> str:
    """The register byte that byte ``k`` of a legal ``c``'s write comes from, as register,
    element and byte (seed 003's StoreDist table)."""
    size = WIDTHS[c.t]
    if c.reg_trait == 2:
        half = size // 2
        el, kk = divmod(k, size)
        return f"element {el} (b{8 * size}) byte {kk}: src{kk // half} byte {el * half + kk % half}"
    d = MStoreDist[c.dist] if isinstance(c.dist, str) else MStoreDist(c.dist)
    w = d.width or size
    if d.family == "PACK4":
        reg, el, byte = 0, k, 0
    elif d.family == "PACK":
        reg, (el, byte) = 0, divmod(k, w // 2)
    elif d.family == "INTLV":
        e, byte = divmod(k, w)
        reg, el = e % 2, e // 2
    else:                                   # NORM, FIRST_ELEMENT
        reg, (el, byte) = 0, divmod(k, w)
    return f"src{reg} element {el} (b{8 * w}) byte {byte}"


def compare_store_align(cases, ub: np.ndarray, final: np.ndarray, results, timed_out,
                        vl: int = 256, waveform: str | None = None) -> list[str]:
    """Replay the stores on the model and compare the UB images, next addresses and faults,
    one line each (empty: all equal).  A UB byte that differs is named by the op whose
    write covers it in the model (the last one), its byte and element in that write."""
    problems = []
    if timed_out:
        problems.append("the unit did not return every result within 10 cycles per op + 100"
                        + (f"; waveform: {waveform}" if waveform else ""))
    buf = Buffer("UB", ub.copy())
    owner = np.full(ub.size, -1, np.int64)
    for i, (c, got) in enumerate(zip(cases, results)):
        regs = [np.frombuffer(r, np.uint8) for r in c.regs]
        mask = np.frombuffer(c.mask, np.uint8).astype(bool)
        try:
            nxt = store_align(buf, c.addr, regs, c.dist, c.t, mask, c.how, vl, c.reg_trait)
        except Fault as f:
            if got[1] != f.code:
                problems.append(f"op {i} {c.dist} {c.t} @{c.addr:#x}: fault "
                                f"{fault_label(got[1])} from the design, "
                                f"{fault_label(f.code)} from the model ({f})")
            continue
        ea, n, _ = store_footprint(c, vl)
        owner[ea:ea + n] = i
        if got[1]:
            problems.append(f"op {i} {c.dist} {c.t} @{c.addr:#x}: fault "
                            f"{fault_label(got[1])} from the design, NONE (0) from the model")
        elif c.how.kind == "post_update" and got[0] != nxt:
            problems.append(f"op {i} {c.dist} {c.t} @{c.addr:#x}: next_addr {got[0]:#x}, "
                            f"model {nxt:#x}")
    diff = np.nonzero(buf.data != final)[0]
    if diff.size:
        b = int(diff[0])
        what = (f"UB byte {b:#x}: expected {buf.data[b]:#04x}, got {final[b]:#04x} "
                f"({diff.size} bytes differ)")
        i = int(owner[b])
        if i < 0:
            problems.append(f"{what}; no op writes it")
        else:
            c = cases[i]
            ea, n, _ = store_footprint(c, vl)
            problems.append(f"op {i} {c.dist} {c.t} @{c.addr:#x}: {what}; byte {b - ea} of "
                            f"its {n}-byte write, {store_source(c, b - ea, vl)}")
    return problems
