"""The tile register file (seed 002; docs/design.md D7).

* Four queues T, U, M, N of 16 registers each, plus the special registers ACC
  and S.
* Relative indexing: a destination becomes ``Q#1`` of its queue; the register
  allocated before it is ``Q#2``, and so on up to ``Q#16``.  The index counts
  allocations of that queue, whether or not the older ones are still live -- so
  in the seed's example ``T#3`` still names the first TLOAD's register after the
  TADD has released it, and reading it faults.
* The ring rule: every live register stays among its queue's 16 names.  An
  allocation would make ``Q#16`` the 17th newest, which no instruction can name;
  so an allocation whose ``Q#16`` (before it) is still live faults
  ``TileAllocation``, naming that register.  (A Linx core allocates around a
  16-entry ring and stalls there; one instruction at a time, the stall never
  ends.)  A TLOAD of n outputs into one queue pushes ``Q#17-n`` .. ``Q#16`` out,
  and each must be dead.  A queue whose 16 registers are all live is the case
  where ``Q#16`` is live with no free slot; the fault says so.
* Write-once: a register is written once, by the instruction that allocated it;
  its image is read-only afterwards.
* A source read without ``.reuse`` is released when the instruction commits;
  with ``.reuse`` it stays live.  Reading a released register raises
  ``TileReleased``.
* Instructions are atomic: :meth:`TileRegisterFile.commit` checks every read
  and every allocation first (against the state before the instruction: a source
  it releases does not make room for its own destination) and changes nothing
  when one faults.
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


@dataclass(eq=False)
class _Allocation:
    image: TileImage
    line: int | None = None      # the line of the instruction that allocated it
    live: bool = True


class TileRegisterFile:
    """Architectural state of the tile registers."""

    def __init__(self, lcfr: LCFR = LCFR()):
        self.lcfr = lcfr
        # newest first, the 16 names of each queue: Q#1 .. Q#16 (fewer before 16 allocations)
        self._names: dict[str, list[_Allocation]] = {q: [] for q in TILE_QUEUES}
        self.special: dict[str, TileImage | None] = {s: None for s in SPECIAL}

    # --- queries -----------------------------------------------------------------
    def free_slots(self, queue: str) -> int:
        """Registers of ``queue`` that are not live (16 minus the live ones)."""
        return QUEUE_DEPTH - sum(a.live for a in self._names[queue])

    def allocated(self, queue: str) -> int:
        """How many of the 16 names of ``queue`` have been allocated (at most 16)."""
        return len(self._names[queue])

    def is_live(self, queue: str, index: int) -> bool:
        """Whether ``queue#index`` names a live register (False when never written)."""
        names = self._names[queue]
        return index <= len(names) and names[index - 1].live

    def room(self, queue: str) -> int:
        """How many registers ``queue`` can allocate now (the ring rule): the names newer
        than its oldest live register."""
        names = self._names[queue]
        oldest = max((k for k, a in enumerate(names, 1) if a.live), default=0)
        return QUEUE_DEPTH - oldest

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
        names = self._names[ref.queue]
        if ref.index > len(names):
            raise TileReleased("source", f"{ref.queue}#{ref.index}",
                               f"has never been written ({len(names)} allocation(s) "
                               f"in queue {ref.queue} so far)")
        alloc = names[ref.index - 1]
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
            for k, a in enumerate(self._names[q], start=1):
                if a.live:
                    out.append((f"{q}#{k}", a.image))
        out += [(s, img) for s, img in self.special.items() if img is not None]
        return out

    def _check_allocation(self, queue: str, n: int) -> None:
        """TileAllocation unless ``n`` allocations into ``queue`` push only dead registers
        out of its 16 names."""
        names = self._names[queue]
        pushed = range(QUEUE_DEPTH - n + 1, len(names) + 1)       # their names now
        blocker = max((k for k in pushed if names[k - 1].live), default=None)
        if blocker is None:
            return
        line = names[blocker - 1].line
        where = f" (allocated at line {line})" if line is not None else ""
        live = QUEUE_DEPTH - self.free_slots(queue)
        full = (f"queue {queue} is full, all {QUEUE_DEPTH} registers live: "
                if live == QUEUE_DEPTH else "")
        out = ("" if n == 1 else f"; {n} allocations push {queue}#{QUEUE_DEPTH - n + 1}.."
               f"{queue}#{QUEUE_DEPTH} out of the {QUEUE_DEPTH} names")
        raise TileAllocation(f"->{queue}", n, f"{full}{queue}#{blocker}{where} is still "
                             f"live: read it without .reuse, or release it, before "
                             f"allocating into {queue}{out}")

    # --- the one state-changing operation -----------------------------------------
    def commit(self, reads: list[TileRef], writes: list[TileImage],
               line: int | None = None) -> list[str]:
        """Atomically: check reads and allocations, allocate the writes (DstTile0
        first), then release the sources read without ``.reuse``.  ``line``: the
        instruction's line, which an allocation fault names later.

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
            self._check_allocation(q, k)
        # -- no fault past this line: apply --
        allocs = []
        for img in writes:
            img.data.flags.writeable = False       # write-once
            img.valid.flags.writeable = False
            alloc = _Allocation(img, line)
            names = self._names[img.queue]
            names.insert(0, alloc)
            del names[QUEUE_DEPTH:]                 # a dead register leaves the names
            allocs.append(alloc)
        for ref, got in resolved:
            if not ref.reuse and isinstance(got, _Allocation):
                got.live = False
        return [f"{img.queue}#{self._names[img.queue].index(a) + 1}"
                for img, a in zip(writes, allocs)]
