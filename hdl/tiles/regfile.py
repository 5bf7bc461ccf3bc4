"""The tile register file (seed 002; docs/design.md D7): queues T, U, M, N of 16 registers, the
relative names that address them, and the SRAM that holds the tiles.

Architectural rules, as the golden model (``model/tiles.py``) has them:

* a destination becomes ``Q#1``; the registers allocated before it move to ``Q#2`` ..
  ``Q#16``.  The index counts allocations, live or released;
* the ring rule: every live register stays among the 16 names, so an allocation whose
  ``Q#16`` is still live cannot be made (TileAllocation); n outputs of one TLOAD into a
  queue need ``Q#17-n`` .. ``Q#16`` dead.  A queue of 16 live registers is one case of it;
* a source read without ``.reuse`` is released at commit;
* ACC and S hold no tile (the model never writes them): reading them is TileReleased.

Names to slots: a ring per queue.  Each queue keeps ``head``, the slot its next allocation
takes (its allocations so far, modulo 16), one live bit per slot, and ``wrapped``, set once
it has had 16 allocations (which tells a released name from a never-written one: ``Q#k`` was
never written iff not wrapped and ``k > head``).  ``Q#k`` is slot ``head - k`` (mod 16): a
4-bit subtraction, no table.  An allocation takes slot ``head`` -- the slot of ``Q#16``,
whose name it takes away -- so the ring rule is exactly "that slot is free", one bit read.
The n outputs of a TLOAD into one queue take slots ``head .. head + n - 1``: a running
next-slot per queue, one 4-bit increment per output, and the last is the new head.

What the rule costs: no gates (a history of 16 {slot, live} entries per queue, a shift
network and a priority encoder per output, which an allocator that takes any free slot
needs, are replaced by a 4-bit head and a subtraction), but capacity: one long-lived
register blocks its queue when it reaches ``Q#16``, however many younger ones were
released.  A core stalls there until the register is released; the model, which runs one
instruction at a time, faults.

Storage: fixed slots.  Every register of every queue owns ``slot_bytes`` (the LCFR
maximum) of one SRAM of ``64 * slot_bytes / W`` words of W bytes, byte-enabled: slot ``s``
of queue ``q`` starts at word ``(16 q + s) * slot_bytes / W``.  Allocation takes one cycle
for all 8 outputs of a TLOAD, and the address of a tile's word is a concatenation (no
adder).  The cost is capacity: the SRAM holds 64 tiles of the largest size whatever the
sizes in use (a pooled allocator would size it by the bytes live, at the price of a
free-list, compaction or fragmentation faults the model does not have).

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
#: a queue's ring: the slot its next allocation takes, whether it has had 16 allocations, and
#: which slots are live
Ring = data.StructLayout({"head": 4, "wrapped": 1, "live": QUEUE_DEPTH})


class TileRegisterFile(wiring.Component):
    """Queues T, U, M, N of 16 registers in fixed slots of ``slot_bytes`` (see module doc).

    Parameters: ``width`` W, bytes per SRAM word (32, 64 or 128); ``slot_bytes``, bytes per
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
        ring = Signal(data.ArrayLayout(Ring, NQUEUES))
        meta = Signal(data.ArrayLayout(TileMeta, NSLOTS))
        self._lookups(m, ring, meta)
        picks, heads = self._allocation(m, ring)
        self._commit(m, ring, meta, picks, heads)
        self._storage(m)
        self._live_names(m, ring)
        return m

    @staticmethod
    def _queue(m, ring, queue, name):
        """The ring of a queue given by a signal (codes 0..3; any other reads an empty ring)."""
        out = Signal(Ring, name=name)
        with m.Switch(queue):
            for k in range(NQUEUES):
                with m.Case(k):
                    m.d.comb += out.eq(ring[k])
        return out

    def _lookups(self, m, ring, meta):
        """A relative name -> its status, physical slot and meta: ``Q#k`` is slot
        ``head - k``."""
        for p in range(3):
            name, out = self.lookup[p], self.found[p]
            q = name.queue
            r = self._queue(m, ring, q, f"ring{p}")
            slot = Signal(4, name=f"slot{p}")
            m.d.comb += slot.eq(r.head - name.index)
            m.d.comb += [out.slot.eq(Cat(slot, q[:2])), out.meta.eq(meta[Cat(slot, q[:2])])]
            # ACC and S carry no index (the record's is ignored): never written
            with m.If((q >= 6) | ((q < NQUEUES)
                                  & ((name.index == 0) | (name.index > QUEUE_DEPTH)))):
                m.d.comb += out.status.eq(LookupStatus.ILLEGAL)
            with m.Elif((q >= NQUEUES) | (~r.wrapped & (name.index > r.head))):
                m.d.comb += out.status.eq(LookupStatus.NEVER)
            with m.Elif(~r.live.bit_select(slot, 1)):
                m.d.comb += out.status.eq(LookupStatus.RELEASED)
            with m.Else():
                m.d.comb += out.status.eq(LookupStatus.LIVE)

    def _allocation(self, m, ring):
        """Destination k takes its queue's next slot: ``head`` for the first into that
        queue, then ``head + 1``, ...; each must be free (the ring rule).  Returns
        [(used, queue, slot, one-hot slot)] per destination, and each queue's slot after
        them all (its new head)."""
        nxt = [ring[j].head for j in range(NQUEUES)]
        ok = []
        picks = []
        for k in range(MAX_OUTPUTS):
            q = self.alloc[k]
            used = self.alloc_n > k
            slot = Signal(4, name=f"alloc_slot{k}")
            live = Signal(QUEUE_DEPTH, name=f"alloc_live{k}")
            with m.Switch(q):
                for j in range(NQUEUES):
                    with m.Case(j):
                        m.d.comb += [slot.eq(nxt[j]), live.eq(ring[j].live)]
            ok.append(~used | ((q < NQUEUES) & ~live.bit_select(slot, 1)))
            m.d.comb += self.alloc_slots[k].eq(Cat(slot, q[:2]))
            picks.append((used, q, slot, (Const(1, QUEUE_DEPTH) << slot)[:QUEUE_DEPTH]))
            after = [Signal(4, name=f"next{j}_{k}") for j in range(NQUEUES)]
            for j in range(NQUEUES):
                m.d.comb += after[j].eq(Mux(used & (q == j), nxt[j] + 1, nxt[j]))
            nxt = after
        m.d.comb += self.alloc_ok.eq(Cat(ok).all())
        return picks, nxt

    def _commit(self, m, ring, meta, picks, heads):
        """Release the marked sources and take the destinations' slots; the head moves
        past them (``wrapped`` is set when it passes slot 0).  One cycle."""
        for q in range(NQUEUES):
            freed = []
            for p in range(2):
                f = self.found[p]
                hit = (self.release[p] & (self.lookup[p].queue == q)
                       & (f.status == LookupStatus.LIVE))
                freed.append(Mux(hit, (Const(1, QUEUE_DEPTH) << f.slot[:4])[:QUEUE_DEPTH], 0))
            taken = Const(0, QUEUE_DEPTH)
            for used, qk, _, onehot in picks:
                taken = taken | Mux(used & (qk == q), onehot, 0)
            r = ring[q]
            with m.If(self.commit):
                m.d.sync += [r.live.eq(r.live & ~freed[0] & ~freed[1] | taken),
                             r.head.eq(heads[q]),
                             r.wrapped.eq(r.wrapped | (heads[q] < r.head))]
        for used, qk, slot, _ in picks:
            with m.If(self.commit & used):
                m.d.sync += meta[Cat(slot, qk[:2])].eq(self.alloc_meta)

    def _live_names(self, m, ring):
        """``live`` by name: bit k of a queue is its slot ``head - k - 1``."""
        for q in range(NQUEUES):
            r = ring[q]
            m.d.comb += self.live[q].eq(Cat(r.live.bit_select((r.head - k - 1)[:4], 1)
                                            for k in range(QUEUE_DEPTH)))

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
