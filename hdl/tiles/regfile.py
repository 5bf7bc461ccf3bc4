"""The tile register file (seed 002; DESIGN.md D7): queues T, U, M, N of 16 registers, the
relative names that address them, and the SRAM that holds the tiles.

Architectural rules, as the golden model (``model/tiles.py``) has them:

* a destination takes the lowest free slot of its queue and becomes ``Q#1``; the
  registers allocated before it move to ``Q#2`` .. ``Q#16``.  The index counts
  allocations, live or released (a queue's *history*: 16 entries of {slot, live}, newest
  first, and how many allocations there have been, up to 16);
* a slot is free when the allocation that holds it has been released; a queue with no
  free slot cannot allocate (TileAllocation);
* a source read without ``.reuse`` is released at commit: its history entry and its slot
  become dead;
* ACC and S hold no tile (the model never writes them): reading them is TileReleased.

Storage: fixed slots.  Every register of every queue owns ``slot_bytes`` (the LCFR
maximum) of one SRAM of ``64 * slot_bytes / W`` words of W bytes, byte-enabled: slot ``s``
of queue ``q`` starts at word ``(16 q + s) * slot_bytes / W``.  Allocation is a priority
encoder (no free list, no fragmentation, one cycle for all 8 outputs of a TLOAD), and the
address of a tile's word is a concatenation (no adder).  The cost is capacity: the SRAM
holds 64 tiles of the largest size whatever the sizes in use (a pooled allocator would size
it by the bytes live, at the price of a free-list, compaction or fragmentation faults the
model does not have).

Ports (all combinational except the SRAM reads, whose data comes the cycle after the
address):

* ``lookup`` in / ``found`` out -- three relative names resolved to {status, slot, meta}
  (:class:`~tilecosim.hdl.tiles.types.LookupStatus`): two for TADD/TSUB's sources, one for
  the debug port
* ``alloc`` in / ``alloc_ok``, ``alloc_slots`` out -- up to 8 destinations (queue codes)
  and whether they can all be allocated now, and where
* ``commit`` in -- apply: allocate ``alloc`` (with ``alloc_meta``), and release the lookups
  0 and 1 that ``release`` marks; the model's commit, in one cycle
* ``wr`` in -- the SRAM write port: {slot, word, data, be}, ``wr_en``
* ``rd`` in/out -- three SRAM read ports {slot, word} -> data (the third for debug)
* ``live`` out -- per queue, which relative names are live (bit k: ``Q#k+1``)
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.common import check_choice, check_width
from tilecosim.hdl.tiles.types import QUEUE_DEPTH, LookupStatus, TileMeta
from tilecosim.hdl.tload.types import MAX_OUTPUTS

__all__ = ["TileRegisterFile", "NQUEUES", "NSLOTS", "SLOT_SIZES"]

NQUEUES = 4
NSLOTS = NQUEUES * QUEUE_DEPTH          # 64
SLOT_SIZES = tuple(256 << k for k in range(11))     # 256 B .. 256 KB

Name = data.StructLayout({"queue": 3, "index": 5})
Found = data.StructLayout({"status": LookupStatus, "slot": 6, "meta": TileMeta})
Entry = data.StructLayout({"slot": 4, "live": 1})


class TileRegisterFile(wiring.Component):
    """Queues T, U, M, N of 16 registers in fixed slots of ``slot_bytes`` (see module doc).

    Parameters: ``width`` W, bytes per SRAM word (32 or 64); ``slot_bytes``, bytes per
    register (a power of two, 256 B..256 KB: the LCFR maximum of the system).
    """

    def __init__(self, width: int = 32, slot_bytes: int = 4096):
        check_width(width)
        check_choice("slot_bytes", slot_bytes, SLOT_SIZES)
        self.width = width
        self.slot_bytes = slot_bytes
        self.words = slot_bytes // width           # words per slot
        addr = data.StructLayout({"slot": 6, "word": range(self.words)})
        super().__init__({
            "lookup": In(data.ArrayLayout(Name, 3)),
            "found": Out(data.ArrayLayout(Found, 3)),
            "alloc": In(data.ArrayLayout(3, MAX_OUTPUTS)),
            "alloc_n": In(4),
            "alloc_meta": In(TileMeta),
            "alloc_ok": Out(1),
            "alloc_slots": Out(data.ArrayLayout(6, MAX_OUTPUTS)),
            "commit": In(1),
            "release": In(2),
            "wr": In(data.StructLayout({"at": addr, "data": 8 * width, "be": width})),
            "wr_en": In(1),
            "rd": In(data.ArrayLayout(addr, 3)),
            "rd_data": Out(data.ArrayLayout(8 * width, 3)),
            "live": Out(data.ArrayLayout(QUEUE_DEPTH, NQUEUES)),
        })

    def elaborate(self, platform):
        m = Module()
        hist = Signal(data.ArrayLayout(data.ArrayLayout(Entry, QUEUE_DEPTH), NQUEUES))
        count = Signal(data.ArrayLayout(range(QUEUE_DEPTH + 1), NQUEUES))
        slot_live = Signal(data.ArrayLayout(QUEUE_DEPTH, NQUEUES))
        meta = Signal(data.ArrayLayout(TileMeta, NSLOTS))
        self._lookups(m, hist, count, meta)
        picks = self._allocation(m, slot_live)
        self._commit(m, hist, count, slot_live, meta, picks)
        self._storage(m)
        for q in range(NQUEUES):
            m.d.comb += self.live[q].eq(Cat(hist[q][k].live for k in range(QUEUE_DEPTH)))
        return m

    def _lookups(self, m, hist, count, meta):
        """A relative name -> its status, physical slot and meta."""
        for p in range(3):
            name, out = self.lookup[p], self.found[p]
            q = name.queue
            pos = Signal(4, name=f"pos{p}")
            entry = Signal(Entry, name=f"entry{p}")
            cnt = Signal(range(QUEUE_DEPTH + 1), name=f"count{p}")
            m.d.comb += pos.eq(name.index - 1)
            with m.Switch(q):
                for k in range(NQUEUES):
                    with m.Case(k):
                        m.d.comb += [entry.eq(hist[k][pos]), cnt.eq(count[k])]
            slot = Cat(entry.slot, q[:2])
            m.d.comb += [out.slot.eq(slot), out.meta.eq(meta[slot])]
            with m.If((q >= 6) | (name.index == 0) | (name.index > QUEUE_DEPTH)):
                m.d.comb += out.status.eq(LookupStatus.ILLEGAL)
            with m.Elif((q >= NQUEUES) | (name.index > cnt)):
                m.d.comb += out.status.eq(LookupStatus.NEVER)
            with m.Elif(~entry.live):
                m.d.comb += out.status.eq(LookupStatus.RELEASED)
            with m.Else():
                m.d.comb += out.status.eq(LookupStatus.LIVE)

    def _allocation(self, m, slot_live):
        """Destination k takes the lowest slot of its queue that is free and not taken by
        destinations 0..k-1; all must find one."""
        avail = [~slot_live[q] for q in range(NQUEUES)]
        ok = []
        picks = []
        for k in range(MAX_OUTPUTS):
            q = self.alloc[k]
            used = self.alloc_n > k
            free = Signal(QUEUE_DEPTH, name=f"free{k}")
            with m.Switch(q):
                for j in range(NQUEUES):
                    with m.Case(j):
                        m.d.comb += free.eq(avail[j])
            onehot = Signal(QUEUE_DEPTH, name=f"pick{k}")
            m.d.comb += onehot.eq(free & (~free + 1))
            idx = Signal(4, name=f"slot{k}")
            for b in reversed(range(QUEUE_DEPTH)):
                with m.If(free[b]):
                    m.d.comb += idx.eq(b)
            ok.append(~used | ((q < NQUEUES) & (free != 0)))
            m.d.comb += self.alloc_slots[k].eq(Cat(idx, q[:2]))
            avail = [Mux(used & (q == j), avail[j] & ~onehot, avail[j]) for j in range(NQUEUES)]
            picks.append((used, q, idx, onehot))
        m.d.comb += self.alloc_ok.eq(Cat(ok).all())
        return picks

    def _commit(self, m, hist, count, slot_live, meta, picks):
        """Release the marked sources, then push the destinations (DstTile0 first, so the
        last one is Q#1), in one cycle."""
        for q in range(NQUEUES):
            entries = [Signal(Entry, name=f"h{q}_{j}") for j in range(QUEUE_DEPTH)]
            for j in range(QUEUE_DEPTH):
                released = Const(0)
                for p in range(2):
                    name = self.lookup[p]
                    released = released | (self.release[p] & (name.queue == q)
                                            & (name.index == j + 1))
                m.d.comb += [entries[j].slot.eq(hist[q][j].slot),
                             entries[j].live.eq(hist[q][j].live & ~released)]
            dead = Signal(QUEUE_DEPTH, name=f"dead{q}")
            terms = []
            for p in range(2):
                f = self.found[p]
                hit = (self.release[p] & (self.lookup[p].queue == q)
                       & (f.status == LookupStatus.LIVE))
                terms.append(Mux(hit, (Const(1, QUEUE_DEPTH) << f.slot[:4])[:QUEUE_DEPTH], 0))
            m.d.comb += dead.eq(terms[0] | terms[1])
            new_live = slot_live[q] & ~dead
            n_q = Const(0, range(MAX_OUTPUTS + 1))
            for used, qk, idx, onehot in picks:
                mine = used & (qk == q)
                shifted = []
                for j in range(QUEUE_DEPTH):
                    e = Signal(Entry)
                    if j == 0:
                        m.d.comb += [e.slot.eq(Mux(mine, idx, entries[0].slot)),
                                     e.live.eq(Mux(mine, 1, entries[0].live))]
                    else:
                        m.d.comb += e.eq(Mux(mine, entries[j - 1], entries[j]))
                    shifted.append(e)
                entries = shifted
                new_live = new_live | Mux(mine, onehot, 0)
                n_q = n_q + mine
            with m.If(self.commit):
                m.d.sync += [hist[q].eq(Cat(entries)), slot_live[q].eq(new_live),
                             count[q].eq(Mux(count[q] + n_q > QUEUE_DEPTH, QUEUE_DEPTH,
                                             count[q] + n_q))]
        for used, qk, idx, onehot in picks:
            with m.If(self.commit & used):
                m.d.sync += meta[Cat(idx, qk[:2])].eq(self.alloc_meta)

    def _storage(self, m):
        """One SRAM of W-byte words, byte-enabled; slot s starts at word s * words."""
        depth = NSLOTS * self.words
        m.submodules.sram = sram = memory.Memory(shape=8 * self.width, depth=depth, init=[])
        wp = sram.write_port(granularity=8)

        def address(at):
            return Cat(at.word, at.slot)
        m.d.comb += [wp.addr.eq(address(self.wr.at)), wp.data.eq(self.wr.data),
                     wp.en.eq(Mux(self.wr_en, self.wr.be, 0))]
        for p in range(3):
            rp = sram.read_port()
            m.d.comb += [rp.addr.eq(address(self.rd[p])), self.rd_data[p].eq(rp.data)]
