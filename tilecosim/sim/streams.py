"""Stream drivers of the simulator-neutral bench (:mod:`tilecosim.sim.api`): one class each,
in the cocotbext-axi shape, with seeded idle and back-pressure.

* :class:`Source` presents payloads on a stream, idling before each while its stall
  pattern says so;
* :class:`Sink` takes beats from a stream, ``ready`` as its pattern says each cycle;
* :class:`Monitor` watches a stream it does not drive;
* :class:`Responder` answers a request stream on a response stream, in order, after a fixed
  latency (a memory port), with a pattern on each.

The patterns are :class:`~tilecosim.sim.stall.Stall` generators, one per stalled port, that
step once per clock cycle whatever the port does -- the same patterns a harness inside the
design draws from :class:`~tilecosim.sim.stall.StallGen`.  A driver is itself a bench
process (``await driver(port)``).  Each owns its patterns, so they do not depend on the order
in which a simulator resumes the processes within a cycle; it ends when ``state["done"]`` is
set.  A stream's ``valid`` never falls before its handshake.  ``state["cycle"]`` is the
watchdog's cycle count (:func:`tilecosim.sim.api.watchdog`); a handshake at the edge that
ends cycle ``c`` is recorded as ``c``.

:class:`Sink` and :class:`Responder` check the protocol rules on the streams the design
drives (``valid`` held and the payload stable until the beat moves, no ``valid`` after a
reset edge: :class:`~tilecosim.sim.protocol.Watch`); a violation raises
:class:`~tilecosim.sim.protocol.ProtocolError` and ends the run in its cycle.  ``most``,
when given, is the number of beats the stream may have moved so far (a completion stream:
the instructions taken), and an access check (``allowed``) says whether a beat may move now
(a memory access: an instruction that moves data is in flight).
"""

from collections import deque

from .protocol import ProtocolError, Rule, Watch
from .stall import Stall

__all__ = ["Source", "Sink", "Monitor", "Responder", "in_flight"]


def _go(stall: Stall | None) -> bool:
    return stall is None or stall.go()


async def _tick(port, stalls, *names):
    """One clock edge; every pattern of the driver steps with it."""
    values = await port.tick(*names)
    for stall in stalls:
        if stall is not None:
            stall.step()
    return values


class Source:
    """Presents ``payloads`` (flat bit vectors) on ``<name>__valid/__payload``, one by one;
    before each it idles while ``stall`` says so (no stall: never); the cycle of every
    handshake is appended to ``accepted``."""

    def __init__(self, name: str, payloads, state: dict, *, stall: Stall | None = None,
                 accepted: list | None = None):
        self.name, self.payloads, self.state, self.stall = name, list(payloads), state, stall
        self.accepted = [] if accepted is None else accepted

    async def send(self, port, payloads) -> None:
        valid, ready, payload = (f"{self.name}__{f}" for f in ("valid", "ready", "payload"))
        stalls = (self.stall,)
        for pl in payloads:
            while not _go(self.stall) and not self.state["done"]:
                port.set(valid, 0)
                await _tick(port, stalls)
            port.set(payload, pl)
            port.set(valid, 1)
            while not self.state["done"]:
                v, r = await _tick(port, stalls, valid, ready)
                if v and r:
                    self.accepted.append(self.state["cycle"] - 1)
                    break
        port.set(valid, 0)

    async def __call__(self, port) -> None:
        await self.send(port, self.payloads)


class Monitor:
    """Calls ``on_beat(payload, cycle)`` for every handshake on the stream ``name``."""

    def __init__(self, name: str, state: dict, on_beat):
        self.name, self.state, self.on_beat = name, state, on_beat

    async def watch(self, port) -> None:
        names = tuple(f"{self.name}__{f}" for f in ("valid", "ready", "payload"))
        while not self.state["done"]:
            v, r, bits = await port.tick(*names)
            if v and r:
                self.on_beat(bits, self.state["cycle"] - 1)

    async def __call__(self, port) -> None:
        await self.watch(port)


class Sink(Monitor):
    """Takes beats from the stream ``name``: ``ready`` as ``stall`` says each cycle (no
    stall: always), ``on_beat(payload, cycle)`` for every handshake; the stream's protocol
    checked (module doc): ``most()`` beats at most so far, a beat only when ``allowed()``."""

    def __init__(self, name: str, state: dict, on_beat, *, stall: Stall | None = None,
                 most=None, allowed=None):
        super().__init__(name, state, on_beat)
        self.stall, self.most, self.allowed = stall, most, allowed

    async def __call__(self, port) -> None:
        ready = f"{self.name}__ready"
        names = tuple(f"{self.name}__{f}" for f in ("valid", "ready", "payload")) + ("rst",)
        watch, beats = Watch(self.name), 0
        while not self.state["done"]:
            port.set(ready, _go(self.stall))
            v, r, bits, rst = await _tick(port, (self.stall,), *names)
            cycle = self.state["cycle"] - 1
            watch.check(v, r, bits, rst, cycle)
            if v and r and not rst:
                beats += 1
                if self.most is not None and beats > self.most():
                    raise ProtocolError(self.name, cycle, Rule.EXTRA_COMPLETION)
                if self.allowed is not None and not self.allowed(cycle):
                    raise ProtocolError(self.name, cycle, Rule.FAULTING_ACCESS)
                self.on_beat(bits, cycle)
        port.set(ready, 0)


class Responder:
    """A memory port: takes requests from the stream ``req`` (``ready`` as ``ready_stall``
    says), and presents ``answer(request payload)`` on the stream ``resp`` in order,
    ``latency`` cycles later at the earliest, in a cycle ``valid_stall`` lets it go; once
    presented, a response stays until it is taken.  While ``state["in_reset"]`` the pending
    responses are dropped."""

    def __init__(self, req: str, resp: str, state: dict, answer, *, latency: int = 2,
                 ready_stall: Stall | None = None, valid_stall: Stall | None = None,
                 allowed=None):
        self.req, self.resp, self.state, self.answer = req, resp, state, answer
        self.latency, self.ready_stall, self.valid_stall = latency, ready_stall, valid_stall
        self.allowed = allowed

    async def __call__(self, port) -> None:
        pending: deque = deque()
        state = self.state
        req, resp = self.req, self.resp
        stalls = (self.ready_stall, self.valid_stall)
        shown = False
        watch = Watch(req)
        while not state["done"]:
            now = state["cycle"]
            port.set(f"{req}__ready", _go(self.ready_stall))
            show = bool(pending) and pending[0][0] <= now and (shown or _go(self.valid_stall))
            port.set(f"{resp}__valid", show)
            if show:
                port.set(f"{resp}__payload", pending[0][1])
            qv, qr, qp, sv, sr, rst = await _tick(port, stalls, f"{req}__valid",
                                                  f"{req}__ready", f"{req}__payload",
                                                  f"{resp}__valid", f"{resp}__ready", "rst")
            watch.check(qv, qr, qp, rst, now)
            if qv and qr and self.allowed is not None and not rst and not self.allowed(now):
                raise ProtocolError(req, now, Rule.FAULTING_ACCESS)
            shown = show and not sr
            if state.get("in_reset"):
                pending.clear()
                shown = False
                continue
            if qv and qr:
                pending.append((now + self.latency, self.answer(qp)))
            if sv and sr:
                pending.popleft()


def in_flight(accepted: list, completed: list, moves: list):
    """The access check of a bench (rule 5): ``allowed(cycle)`` is true while an instruction
    that moves data (``moves[i]``, from the model) has been taken (``accepted``, its cycles)
    and not completed (``completed``, one entry per completion).  The bench's processes
    resume in any order within a cycle, so the instruction next in line counts as taken
    too (a beat in the very cycle its instruction is taken); the batch harness's monitor
    needs no such allowance."""
    def allowed(cycle) -> bool:
        return any(moves[i] for i in range(len(completed), min(len(accepted) + 1, len(moves))))
    return allowed
