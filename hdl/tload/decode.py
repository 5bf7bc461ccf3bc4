"""TLOAD decoder: checks an instruction and derives its geometry, in one cycle.

Every output tile of a legal TLOAD holds R_out x C_out elements with
R_out * C_out * esize = Size, and Size is a power of two -- so R_out and the row
width C_out * esize are powers of two too (D3, D6).  The decoder therefore needs
no divider: it finds p with ``Col*esize == n << p`` (ND source) or
``Col*esize == 1 << p`` (DN source) with a bank of comparators, and everything
downstream works with log2 sizes (shifts and masks).

Checks, with the fault the golden model raises for them (D8), in priority order:

* IllegalInstruction -- n outside 1..8, a destination queue other than T/U/M/N, an
  unknown data-type code;
* IllegalParameter -- a Size that is not a power of two >= 256 inside the LCFR
  range, Sizes that differ, Col = 0, ValidCol > Col, Row not a whole number or a
  band split that does not divide, ValidRow > Row, the NZ/ZN shape rule per tile;
* OutOfBounds -- the last byte of the valid block at or past ``mem_size``.

Latency 1 cycle (registered output) or 0 (``registered=False``: combinational, as the
engine uses it, the address generator registering the result); one instruction per cycle;
``i.ready`` follows ``o.ready``.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from tilecosim.hdl.tload.dtype_rom import DTYPE_ROM, pad_pattern
from tilecosim.hdl.tload.types import MAX_OUTPUTS, FaultCode, PadValue, TLoadInstr, TLoadLayout, TileQueue

__all__ = ["TLoadDecoder", "Decoded", "MAX_LOG_SIZE", "check_config"]

MAX_LOG_SIZE = 18            # 256 KB

Decoded = data.StructLayout({
    "layout": TLoadLayout,
    "le": 2,                 # log2 element bytes
    "pattern": 64,           # pad element pattern (little-endian, esize bytes used)
    "null": 1,               # PadValue Null: leave padded bytes unwritten
    "n": 4,
    "lr": 5,                 # log2 rows of each output tile
    "lc": 5,                 # log2 columns of each output tile
    "lq": 5,                 # log2 runs per output tile
    "ll": 3,                 # log2 lines per transpose group / log2 bytes per NORM run
    "vmaj": 23,              # valid extent along the source's major axis (rows of ND, cols of DN)
    "vmin": 23,              # valid extent along the minor axis
    "base": 64,
    "stride": 64,
    "fault": FaultCode,
})


def _log2_of_pow2(m, value, width, name):
    """log2 of a one-hot value (a priority encoder)."""
    out = Signal(range(width + 1), name=name)
    for b in range(width):
        with m.If(value[b]):
            m.d.comb += out.eq(b)
    return out


def check_config(profile: str, lcfr: tuple[int, int]) -> None:
    """Raise ValueError naming a bad ``profile`` or ``lcfr`` parameter."""
    if profile not in ("finite", "ieee-inf"):
        raise ValueError(f"profile={profile!r}: choose 'finite' or 'ieee-inf'")
    lo, hi = lcfr
    if not (256 <= lo <= hi <= 1 << MAX_LOG_SIZE) or lo & (lo - 1) or hi & (hi - 1):
        raise ValueError(f"lcfr={lcfr!r}: need powers of two with 256 <= MIN <= MAX <= 256 KB")


class TLoadDecoder(wiring.Component):
    """Checks and decodes one TLOAD per cycle (see module doc)."""

    def __init__(self, profile: str = "finite", lcfr: tuple[int, int] = (256, 256 * 1024),
                 registered: bool = True):
        check_config(profile, lcfr)
        self.registered = registered
        self.profile = profile
        self.lcfr = lcfr
        super().__init__({
            "i": In(stream.Signature(TLoadInstr)),
            "o": Out(stream.Signature(Decoded)),
            "mem_size": In(64),
        })

    def elaborate(self, platform):
        m = Module()
        ins = self.i.payload
        lo, hi = self.lcfr

        # --- data type ---------------------------------------------------------------
        le = Signal(2)
        known = Signal()
        pattern = Signal(64)
        with m.Switch(ins.dtype):
            for code, (lg, *_rest) in DTYPE_ROM.items():
                with m.Case(code):
                    m.d.comb += [le.eq(lg), known.eq(1)]
                    with m.Switch(ins.pad):
                        for pad in range(4):
                            with m.Case(pad):
                                m.d.comb += pattern.eq(pad_pattern(code, pad, self.profile))
        e = Signal(4)
        m.d.comb += e.eq(1 << le)

        # --- instruction-level checks -------------------------------------------------
        n = ins.n
        n_ok = (n >= 1) & (n <= MAX_OUTPUTS)
        queue_bad, size_bad, size_differs = [], [], []
        for k in range(MAX_OUTPUTS):
            used = n > k
            size = ins.sizes[k]
            pow2 = (size & (size - 1)) == 0
            queue_bad.append(used & (ins.queues[k].as_value() >= TileQueue.ACC.value))
            size_bad.append(used & (~pow2 | (size < lo) | (size > hi)))
            size_differs.append(used & (size != ins.sizes[0]))
        queue_bad = Cat(queue_bad).any()
        size_bad = Cat(size_bad).any()
        size_differs = Cat(size_differs).any()
        illegal_instruction = ~n_ok | queue_bad | ~known

        # --- geometry: Col*e = n << p (ND) or 1 << p (DN) -------------------------------
        s = _log2_of_pow2(m, ins.sizes[0], MAX_LOG_SIZE + 1, "log_size")
        dn = (ins.layout == TLoadLayout.DN2NZ) | (ins.layout == TLoadLayout.DN2ZN)
        colbytes = Signal(68)
        m.d.comb += colbytes.eq(ins.col << le)
        scale = Mux(dn, 1, n)
        p = Signal(range(MAX_LOG_SIZE + 1))
        p_found = Signal()
        for cand in range(MAX_LOG_SIZE + 1):
            with m.If(colbytes == (scale << cand)):
                m.d.comb += [p.eq(cand), p_found.eq(1)]
        geometry_ok = p_found & (p <= s) & (p >= le)
        lc = Signal(5)
        lr = Signal(5)
        m.d.comb += [lc.eq(p - le), lr.eq(s - p)]
        row = Signal(23)
        m.d.comb += row.eq(Mux(dn, n << lr, 1 << lr))

        ls = Signal(3)
        m.d.comb += ls.eq(5 - le)
        nz = (ins.layout == TLoadLayout.ND2NZ) | (ins.layout == TLoadLayout.DN2NZ)
        zn = (ins.layout == TLoadLayout.ND2ZN) | (ins.layout == TLoadLayout.DN2ZN)
        shape_bad = ((nz & ((lr < 4) | (lc < ls))) | (zn & ((lr < ls) | (lc < 4))))

        illegal_parameter = (size_bad | size_differs | (ins.col == 0) | (ins.valid_col > ins.col)
                             | ~geometry_ok | (ins.valid_row > row) | shape_bad)

        # --- memory range of the valid block ---------------------------------------------
        vr, vc = ins.valid_row, ins.valid_col
        vmaj = Mux(dn, vc, vr)
        vmin = Mux(dn, vr, vc)
        stride = Signal(64)
        m.d.comb += stride.eq(Mux(ins.stride_given, ins.stride, (vmin << le)[:64]))
        last = Signal(96)
        m.d.comb += last.eq(ins.base + (vmaj - 1) * stride + ((vmin - 1) << le) + e - 1)
        out_of_bounds = (vr != 0) & (vc != 0) & (last >= self.mem_size)

        fault = Signal(FaultCode)
        with m.If(illegal_instruction):
            m.d.comb += fault.eq(FaultCode.IllegalInstruction)
        with m.Elif(illegal_parameter):
            m.d.comb += fault.eq(FaultCode.IllegalParameter)
        with m.Elif(out_of_bounds):
            m.d.comb += fault.eq(FaultCode.OutOfBounds)

        # --- runs per tile ----------------------------------------------------------------
        lcb = lc + le
        lrl = Mux(lcb < 5, lcb, 5)                         # NORM: bytes per run (log2)
        lq = Signal(5)
        ll = Signal(3)
        with m.Switch(ins.layout):
            with m.Case(TLoadLayout.NORM):
                m.d.comb += [lq.eq(s - lrl), ll.eq(lrl)]
            with m.Case(TLoadLayout.ND2NZ, TLoadLayout.DN2ZN):
                m.d.comb += [lq.eq(s - 5), ll.eq(0)]
            with m.Case(TLoadLayout.ND2ZN):
                lL = Mux(lc < ls, lc, ls)
                m.d.comb += [lq.eq(lr + lc - lL), ll.eq(lL)]
            with m.Case(TLoadLayout.DN2NZ):
                lL = Mux(lr < ls, lr, ls)
                m.d.comb += [lq.eq(lr + lc - lL), ll.eq(lL)]

        # --- output: one pipeline register, or straight through ------------------------
        decoded = Signal(Decoded)
        m.d.comb += [
            decoded.layout.eq(ins.layout), decoded.le.eq(le), decoded.pattern.eq(pattern),
            decoded.null.eq(ins.pad == PadValue.Null), decoded.n.eq(n), decoded.lr.eq(lr),
            decoded.lc.eq(lc), decoded.lq.eq(lq), decoded.ll.eq(ll),
            decoded.vmaj.eq(Mux(vmaj > (1 << 22), 1 << 22, vmaj)),
            decoded.vmin.eq(Mux(vmin > (1 << 22), 1 << 22, vmin)),
            decoded.base.eq(ins.base), decoded.stride.eq(stride), decoded.fault.eq(fault),
        ]
        if not self.registered:
            m.d.comb += [self.o.valid.eq(self.i.valid), self.o.payload.eq(decoded),
                         self.i.ready.eq(self.o.ready)]
            return m
        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.eq(decoded)]
        return m
