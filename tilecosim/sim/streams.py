"""Stream drivers of the simulator-neutral bench (:mod:`tilecosim.sim.api`): one class each,
in the cocotbext-axi shape, with seeded idle and back-pressure.

* :class:`Source` presents payloads on a stream, idling before each with probability
  ``1 - p_valid``;
* :class:`Sink` takes beats from a stream, dropping ``ready`` with probability
  ``1 - p_ready`` each cycle;
* :class:`Monitor` watches a stream it does not drive;
* :class:`Responder` answers a request stream on a response stream, in order, after a fixed
  latency (a memory port), with seeded stalls on both.

A driver is itself a bench process (``await driver(port)``).  Each owns its random
generator, so a pattern does not depend on the order in which a simulator resumes the
processes within a cycle, and ends when ``state["done"]`` is set.  ``state["cycle"]`` is the
watchdog's cycle count (:func:`tilecosim.sim.api.watchdog`); a handshake at the edge that
ends cycle ``c`` is recorded as ``c``.
"""

import random
from collections import deque

__all__ = ["Source", "Sink", "Monitor", "Responder"]


class Source:
    """Presents ``payloads`` (flat bit vectors) on ``<name>__valid/__payload``, one by one,
    idling a cycle with probability ``1 - p_valid`` before each; the cycle of every
    handshake is appended to ``accepted``."""

    def __init__(self, name: str, payloads, state: dict, *, rng: random.Random,
                 p_valid: float = 1.0, accepted: list | None = None):
        self.name, self.payloads, self.state = name, list(payloads), state
        self.rng, self.p_valid = rng, p_valid
        self.accepted = [] if accepted is None else accepted

    async def send(self, port, payloads) -> None:
        valid, ready, payload = (f"{self.name}__{f}" for f in ("valid", "ready", "payload"))
        for pl in payloads:
            while self.rng.random() > self.p_valid:
                port.set(valid, 0)
                await port.tick()
            port.set(payload, pl)
            port.set(valid, 1)
            while not self.state["done"]:
                v, r = await port.tick(valid, ready)
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
    """Takes beats from the stream ``name``: ``ready`` is high with probability ``p_ready``
    each cycle (drawn from ``rng``; always high without one), ``on_beat(payload, cycle)``
    for every handshake."""

    def __init__(self, name: str, state: dict, on_beat, *, rng: random.Random | None = None,
                 p_ready: float = 1.0):
        super().__init__(name, state, on_beat)
        self.rng, self.p_ready = rng, p_ready

    async def __call__(self, port) -> None:
        ready = f"{self.name}__ready"
        names = tuple(f"{self.name}__{f}" for f in ("valid", "ready", "payload"))
        port.set(ready, 1)
        while not self.state["done"]:
            if self.rng is not None:
                port.set(ready, self.rng.random() < self.p_ready)
            v, r, bits = await port.tick(*names)
            if v and r:
                self.on_beat(bits, self.state["cycle"] - 1)
        port.set(ready, 0)


class Responder:
    """A memory port: takes requests from the stream ``req`` (``ready`` with probability
    ``p_ready``), and presents ``answer(request payload)`` on the stream ``resp`` in order,
    ``latency`` cycles later at the earliest (``valid`` with probability ``p_valid`` once
    due).  While ``state["in_reset"]`` the pending responses are dropped."""

    def __init__(self, req: str, resp: str, state: dict, answer, *, rng: random.Random,
                 latency: int = 2, p_ready: float = 1.0, p_valid: float = 1.0):
        self.req, self.resp, self.state, self.answer = req, resp, state, answer
        self.rng, self.latency, self.p_ready, self.p_valid = rng, latency, p_ready, p_valid

    async def __call__(self, port) -> None:
        pending: deque = deque()
        state, rng = self.state, self.rng
        req, resp = self.req, self.resp
        while not state["done"]:
            now = state["cycle"]
            port.set(f"{req}__ready", rng.random() < self.p_ready)
            show = bool(pending) and pending[0][0] <= now and rng.random() < self.p_valid
            port.set(f"{resp}__valid", show)
            if show:
                port.set(f"{resp}__payload", pending[0][1])
            qv, qr, qp, sv, sr = await port.tick(f"{req}__valid", f"{req}__ready",
                                                 f"{req}__payload", f"{resp}__valid",
                                                 f"{resp}__ready")
            if state.get("in_reset"):
                pending.clear()
                continue
            if qv and qr:
                pending.append((now + self.latency, self.answer(qp)))
            if sv and sr:
                pending.popleft()
