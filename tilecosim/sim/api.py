"""A simulator-neutral test-bench API: one bench body, every simulator.

A bench is a list of ``async def proc(port)`` coroutines run concurrently.  A process
drives inputs with ``port.set(name, int)``, and ``await port.tick(*names)`` waits for the
next rising clock edge and returns the values the named signals had AT that edge (what
the flip-flops saw).  ``await port.until(name, limit)`` waits for the first edge at which
the 1-bit register output ``name`` is 1 (False after ``limit`` cycles without); on the
Verilog simulators it is one trigger, so the design runs without Python in between.  Inputs
set after a tick are seen by the design in the next cycle.
Names are the Verilog port names (``op__valid``, ``op__payload``, ``ub_data``; ``rst`` is
the synchronous reset); values are
plain integers (struct payloads as their flat bit vectors; see :func:`pack`/:func:`unpack`),
or None for a value with X or Z bits (4-state simulators only).

The stream drivers written on it -- :class:`~tilecosim.sim.streams.Source`, ``Sink``,
``Monitor`` and ``Responder``, with seeded idle and back-pressure -- are in
:mod:`tilecosim.sim.streams`.

Two adapters implement it:

* :class:`AmaranthPort` over Amaranth's testbench context
  (``ctx.tick().sample(...)`` gives the at-edge values);
* :class:`CocotbPort` over a cocotb ``dut`` (right after ``RisingEdge`` the registers
  still hold their pre-edge values, which is the same thing; writes land in the same
  time step, after the edge).
"""

import os

import numpy as np
from amaranth import ClockDomain, Module
from amaranth.lib import data
from amaranth.sim import Simulator

__all__ = ["pack", "unpack", "memory_words", "watchdog", "hang_limit", "DESIGN_ENV", "AmaranthPort", "run_amaranth",
           "CocotbPort",
           "run_cocotb"]


def pack(layout, value: dict) -> int:
    """A dict of fields -> the flat bit vector of ``layout``."""
    return layout.const(value).as_value().value


def memory_words(image, nwords: int, word_bytes: int = 32) -> list[int]:
    """The init of a memory of ``nwords`` little-endian words of ``word_bytes`` bytes
    holding ``image`` (uint8) from word 0, zeros after it."""
    padded = np.zeros(nwords * word_bytes, dtype=np.uint8)
    padded[:len(image)] = image
    return [int.from_bytes(padded[k * word_bytes:(k + 1) * word_bytes].tobytes(), "little")
            for k in range(nwords)]


def unpack(layout, bits: int):
    """A flat bit vector -> a view with the fields of ``layout`` (``.field`` access)."""
    return layout.from_bits(int(bits))


def stretched(cycles: int, *p_ok: float) -> int:
    """``cycles`` of a run without stalls, stretched for ports that are ready or valid with
    the probabilities ``p_ok`` each cycle: a handshake waits on both of its sides, so it
    takes at most 1/min(p_ok)**2 as many cycles on average.  A watchdog scaled so fires on
    a hang, never on a run that is merely slow (``--stall 0.9``)."""
    worst = max(min(p_ok, default=1.0), 1e-3)
    return int(cycles / worst ** 2)


#: the environment variable :func:`tilecosim.sim.runner.run_bench` sets to the kind of the
#: design under test (``builtin``, ``verilog``, ``amaranth``), read by :func:`hang_limit`
DESIGN_ENV = "TILECOSIM_DESIGN"


def hang_limit(cycles: int) -> int:
    """The watchdog's limit for a run that the built-in engine finishes within ``cycles``:
    ``cycles`` itself for the built-in design, and 100 times it plus 10,000 for a design
    from elsewhere (``$TILECOSIM_DESIGN``), whose latency and throughput are its own (D16:
    no check assumes the built-in engine's cycle counts; only a hang ends its run)."""
    if os.environ.get(DESIGN_ENV, "builtin") == "builtin":
        return cycles
    return 100 * cycles + 10_000


def watchdog(state: dict, limit: int, on_timeout):
    """A background process that counts cycles in ``state["cycle"]`` and ends the run
    (``state["done"]``) after ``limit`` cycles (:func:`hang_limit` of it), calling
    ``on_timeout()``."""
    limit = hang_limit(limit)

    async def clock(port):
        while not state["done"]:
            await port.tick()
            state["cycle"] += 1
            if state["cycle"] > limit:
                on_timeout()
                state["done"] = True
    clock.background = True
    return clock


class AmaranthPort:
    def __init__(self, ctx, dut, rst=None):
        self.ctx = ctx
        self.dut = dut
        self._cache = {"rst": rst} if rst is not None else {}

    def _value(self, name):
        v = self._cache.get(name)
        if v is None:
            obj = self.dut
            for part in name.split("__"):
                obj = getattr(obj, part)
            v = obj.as_value() if isinstance(obj, data.View) else obj
            self._cache[name] = v
        return v

    def set(self, name: str, value: int):
        self.ctx.set(self._value(name), int(value))

    async def tick(self, *names):
        vals = await self.ctx.tick().sample(*(self._value(n) for n in names))
        return tuple(int(getattr(v, "value", v)) for v in vals[2:]) if names else ()

    async def until(self, name: str, limit: int) -> bool:
        sig = self._value(name)
        for _ in range(limit):
            (v,) = (await self.ctx.tick().sample(sig))[2:]
            if v:
                return True
        return False


def run_amaranth(dut, procs, vcd: str | None = None, traces=()) -> None:
    """Run the bench processes on Amaranth's simulator (clock period 10 ns).  The design's
    ``sync`` domain is made explicit so that a process can drive ``rst`` as on the Verilog
    simulators."""
    top = Module()
    top.submodules.dut = dut
    top.domains.sync = cd = ClockDomain("sync")
    sim = Simulator(top)
    sim.add_clock(1e-8, domain="sync")
    for proc in procs:
        async def tb(ctx, proc=proc):
            await proc(AmaranthPort(ctx, dut, cd.rst))
        sim.add_testbench(tb, background=getattr(proc, "background", False))
    if vcd:
        with sim.write_vcd(vcd, traces=list(traces)):
            sim.run()
    else:
        sim.run()


class CocotbPort:
    def __init__(self, dut, clk):
        self.dut = dut
        self.clk = clk
        self._handles = {}

    def _handle(self, name):
        h = self._handles.get(name)
        if h is None:
            h = self._handles[name] = getattr(self.dut, name)
        return h

    def set(self, name: str, value: int):
        h = self._handle(name)
        width = len(h)
        self._handle(name).value = int(value) & ((1 << width) - 1)

    async def tick(self, *names):
        # optional dependency (cocotb, the test extra): this runs inside a Verilog simulator only
        from cocotb.triggers import RisingEdge
        await RisingEdge(self.clk)
        return tuple(_as_int(self._handle(n).value, n) for n in names)

    async def until(self, name: str, limit: int) -> bool:
        # one trigger on the signal itself (a register output: it changes just after an
        # edge), then the edge that samples it: no Python in between.  Right after an edge
        # a register still shows its value from before it: ReadOnly waits for the edge's
        # own update, the value the next edge samples (as Amaranth's port does).
        # optional dependency (cocotb, the test extra): this runs inside a Verilog simulator only
        from cocotb.triggers import ReadOnly, RisingEdge, with_timeout
        h = self._handle(name)
        await ReadOnly()
        if _as_int(h.value, name) != 1:
            try:
                await with_timeout(RisingEdge(h), limit * 10, "ns")
            except TimeoutError:
                return False
        await RisingEdge(self.clk)
        return True


def _as_int(value, name):
    """A cocotb value (Logic or LogicArray) as an int, or None when it holds X or Z (a
    payload that is not valid yet, e.g. a FIFO's unwritten storage on Icarus); a process
    must not use a payload whose valid is low."""
    try:
        return value.to_unsigned() if hasattr(value, "to_unsigned") else int(value)
    except ValueError:
        return None


async def run_cocotb(dut, procs, inputs=(), reset_cycles: int = 2) -> None:
    """Run the bench processes under cocotb: drive ``inputs`` to 0 (Verilog inputs start
    as X), start the clock, reset, start every process and wait for the foreground ones.

    An exception in any process ends the run and is raised here (the other processes are
    cancelled)."""
    # optional dependency (cocotb, the test extra): this runs inside a Verilog simulator only
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import Event, RisingEdge
    for name in inputs:
        getattr(dut, name).value = 0
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for _ in range(reset_cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    errors, ended = [], Event()
    left = {"n": 0}

    async def guarded(proc, port):
        try:
            await proc(port)
        except Exception as e:              # report it from the main coroutine
            errors.append(e)
            ended.set()
            return
        if not getattr(proc, "background", False):
            left["n"] -= 1
            if left["n"] == 0:
                ended.set()

    tasks = []
    left["n"] = sum(not getattr(p, "background", False) for p in procs)
    for proc in procs:
        tasks.append(cocotb.start_soon(guarded(proc, CocotbPort(dut, dut.clk))))
    if left["n"]:
        await ended.wait()
    for task in tasks:
        if not task.done():
            task.cancel()
    if errors:
        raise errors[0]
