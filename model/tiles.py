"""The tile register file (seed 002; DESIGN.md D7).

* Four queues T, U, M, N of 16 registers each, plus the special registers ACC
  and S.
* Relative indexing: a destination takes a free slot of its queue and becomes
  ``Q#1``; the register allocated before it is ``Q#2``, and so on.  The index
  counts allocations of that queue, whether or not the older ones are still live
  -- so in the seed's example ``T#3`` still names the first TLOAD's register
  after the TADD has released it, and reading it faults.
* Write-once: a register is written once, by the instruction that allocated it;
  its image is read-only afterwards.
* A source read without ``.reuse`` is released when the instruction commits;
  with ``.reuse`` it stays live.  Reading a released register raises
  ``TileReleased``.  A queue whose 16 slots are all live cannot allocate:
  ``TileAllocation``.
* Instructions are atomic: :meth:`TileRegisterFile.commit` checks every read
  and every allocation first and changes nothing when one faults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .faults import IllegalInstruction, TileAllocation, TileReleased
from .tload import LCFR, TileImage, TILE_QUEUES

__all__ = ["TileRef", "TileRegisterFile", "QUEUE_DEPTH", "SPECIAL", "parse_tile_ref"]

QUEUE_DEPTH = 16
SPECIAL = ("ACC", "S")


@dataclass(frozen=True)
class TileRef:
    """A source operand: ``T#2``, ``T#2.reuse``, ``ACC``."""
    queue: str
    index: int | None = None     # 1..16 for the queues, None for ACC and S
    reuse: bool = False

    def __str__(self) -> str:
        s = self.queue if self.index is None else f"{self.queue}#{self.index}"
        return s + (".reuse" if self.reuse else "")


_REF = re.compile(r"^(?P<q>[TUMN])#(?P<i>\d+)(?P<r>\.reuse)?$|^(?P<s>ACC|S)(?P<r2>\.reuse)?$")


def parse_tile_ref(text: str) -> TileRef:
    """``T#2.reuse`` -> TileRef; raises ValueError naming the text otherwise."""
    m = _REF.match(text.strip())
    if not m:
        raise ValueError(f"tile register {text!r} is not of the form T#1..N#16[.reuse], ACC or S")
    if m["q"]:
        return TileRef(m["q"], int(m["i"]), bool(m["r"]))
    return TileRef(m["s"], None, bool(m["r2"]))


@dataclass
class _Allocation:
    slot: int
    image: TileImage
    live: bool = True
    serial: int = 0


class TileRegisterFile:
    """Architectural state of the tile registers."""

    def __init__(self, lcfr: LCFR = LCFR()):
        self.lcfr = lcfr
        self._slots: dict[str, list[_Allocation | None]] = {q: [None] * QUEUE_DEPTH
                                                             for q in TILE_QUEUES}
        # newest first; only the 16 newest are addressable
        self._history: dict[str, list[_Allocation]] = {q: [] for q in TILE_QUEUES}
        self.special: dict[str, TileImage | None] = {s: None for s in SPECIAL}
        self._serial = 0

    # --- queries -----------------------------------------------------------------
    def free_slots(self, queue: str) -> int:
        return sum(1 for a in self._slots[queue] if a is None or not a.live)

    def _resolve(self, ref: TileRef) -> _Allocation | TileImage:
        if ref.queue in SPECIAL:
            img = self.special[ref.queue]
            if img is None:
                raise TileReleased("source", ref.queue, "holds no tile")
            return img
        if ref.queue not in TILE_QUEUES:
            raise IllegalInstruction("tile", ref.queue, "not a tile register queue")
        if ref.index is None or not 1 <= ref.index <= QUEUE_DEPTH:
            raise IllegalInstruction(f"{ref.queue}#", ref.index,
                                     f"relative index must be 1..{QUEUE_DEPTH}")
        hist = self._history[ref.queue]
        if ref.index > len(hist):
            raise TileReleased("source", f"{ref.queue}#{ref.index}",
                               f"has never been written ({len(hist)} allocation(s) "
                               f"in queue {ref.queue} so far)")
        alloc = hist[ref.index - 1]
        if not alloc.live:
            raise TileReleased("source", f"{ref.queue}#{ref.index}",
                               "was released at the commit of an earlier instruction "
                               "that read it without .reuse")
        return alloc

    def read(self, ref: TileRef | str) -> TileImage:
        """The image a source operand names (no release: that happens at commit)."""
        ref = parse_tile_ref(ref) if isinstance(ref, str) else ref
        got = self._resolve(ref)
        return got.image if isinstance(got, _Allocation) else got

    def live(self) -> list[tuple[str, TileImage]]:
        """Every live register as (name, image), queue by queue, newest first."""
        out = []
        for q in TILE_QUEUES:
            for k, a in enumerate(self._history[q], start=1):
                if a.live:
                    out.append((f"{q}#{k}", a.image))
        out += [(s, img) for s, img in self.special.items() if img is not None]
        return out

    # --- the one state-changing operation -----------------------------------------
    def commit(self, reads: list[TileRef], writes: list[TileImage]) -> list[str]:
        """Atomically: check reads and allocations, allocate the writes (DstTile0
        first), then release the sources read without ``.reuse``.

        Returns the names the destinations have after the commit (e.g. ``T#2``
        for DstTile0 and ``T#1`` for DstTile1 of a two-output TLOAD to T).
        """
        resolved = [(r, self._resolve(r)) for r in reads]
        need: dict[str, int] = {}
        for img in writes:
            if img.queue not in TILE_QUEUES:
                raise IllegalInstruction("DstTile", img.queue, "only T, U, M, N can be allocated")
            need[img.queue] = need.get(img.queue, 0) + 1
        for q, k in need.items():
            free = self.free_slots(q)
            if free < k:
                raise TileAllocation(f"->{q}", k, f"queue {q} has {free} free slot(s) of "
                                     f"{QUEUE_DEPTH}: release registers (read them without "
                                     f".reuse) before allocating")
        # -- no fault past this line: apply --
        for img in writes:
            img.data.flags.writeable = False       # write-once
            img.valid.flags.writeable = False
            slots = self._slots[img.queue]
            slot = next(i for i, a in enumerate(slots) if a is None or not a.live)
            self._serial += 1
            alloc = _Allocation(slot, img, True, self._serial)
            slots[slot] = alloc
            hist = self._history[img.queue]
            hist.insert(0, alloc)
            del hist[QUEUE_DEPTH:]
        for ref, got in resolved:
            if not ref.reuse and isinstance(got, _Allocation):
                got.live = False
        names = []
        for img in writes:
            hist = self._history[img.queue]
            k = next(i for i, a in enumerate(hist, 1) if a.image is img)
            names.append(f"{img.queue}#{k}")
        return names
