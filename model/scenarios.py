"""Constrained-random TLOAD scenarios (reproducible from a seed).

:func:`random_tload` draws a legal TLOAD -- every output tile made of whole
fractals, valid sizes anywhere from 0 to the tile's extent, dense or strided
sources -- and the size of a global memory that holds its whole source.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from .dtypes import DTYPES, PadValue
from .faults import Fault
from .layouts import default_fractal
from .machine import Machine
from .tiles import QUEUE_DEPTH
from .tload import LCFR, MAX_OUTPUTS, TLoadLayout, TLoadParams

__all__ = ["random_tload", "QUEUES", "random_program", "PROGRAM_FAULTS", "INT_TYPES",
           "tload_text"]

QUEUES = ("T", "U", "M", "N")


def _units(layout: TLoadLayout, esize: int) -> tuple[int, int]:
    dest = layout.dest
    return default_fractal(dest, esize) if dest.fractal else (1, 1)


def random_tload(rng: random.Random, layout: TLoadLayout | None = None, dtype: str | None = None,
                 sizes=(256, 512, 1024, 2048, 4096), n: int | None = None,
                 pad: PadValue | None = None) -> tuple[TLoadParams, int]:
    """(a legal TLOAD, bytes of memory it needs)."""
    layout = layout if layout is not None else rng.choice(list(TLoadLayout))
    dt = DTYPES[dtype or rng.choice(list(DTYPES))]
    e = dt.esize
    r_unit, c_unit = _units(layout, e)

    def col_choices(size):
        elems = size // e
        return [c for c in range(c_unit, elems + 1, c_unit)
                if elems % c == 0 and (elems // c) % r_unit == 0]

    size = rng.choice([s for s in sizes if col_choices(s)])
    n = n or rng.randint(1, 8)
    out_cols = rng.choice(col_choices(size))
    out_rows = size // e // out_cols
    row, col = (n * out_rows, out_cols) if layout.source_dn else (out_rows, n * out_cols)
    pick = lambda hi: rng.choice([hi, 1, rng.randint(0, hi), rng.randint(max(0, hi - 3), hi)])
    valid_row, valid_col = pick(row), pick(col)
    dense = (valid_row if layout.source_dn else valid_col) * e
    stride = rng.choice([None, dense, dense + e * rng.randint(0, 9), rng.randint(0, dense + 64)])
    base = rng.randint(0, 256)
    params = TLoadParams(layout=layout, dtype=dt, valid_col=valid_col, valid_row=valid_row,
                         col=col if (valid_col != col or rng.random() < 0.5) else None,
                         base=base, stride=stride,
                         pad=pad if pad is not None else rng.choice(list(PadValue)),
                         outputs=tuple((rng.choice(QUEUES), size) for _ in range(n)))
    eff = dense if stride is None else stride
    outer, inner = (valid_col, valid_row) if layout.source_dn else (valid_row, valid_col)
    span = base + max(0, outer - 1) * eff + inner * e + 1
    return params, span + rng.randint(0, 64)


# --- programs of the tile system --------------------------------------------------------

#: what :func:`random_program` can aim its program at
PROGRAM_FAULTS = ("TileAllocation/full", "TileAllocation/ring", "TileReleased/released",
                  "TileReleased/never", "IllegalInstruction/dst", "IllegalInstruction/float",
                  "IllegalParameter/lcfr", "IllegalParameter/shape", "OutOfBounds", "far",
                  "TSTORE/TileReleased", "TSTORE/DataType", "TSTORE/shape", "TSTORE/overlap",
                  "TSTORE/OutOfBounds", "TSTORE/far")
#: the tile-side layout of a register -> the TSTORE selectors that read it (D15)
STORE_SELECTORS = {"ND": (TLoadLayout.NORM,), "NZ": (TLoadLayout.ND2NZ, TLoadLayout.DN2NZ),
                   "ZN": (TLoadLayout.ND2ZN, TLoadLayout.DN2ZN)}
#: the scalar register of a strided TSTORE's RegSrc1 (its value: more than any row's bytes)
STORE_STRIDE = "t3"
INT_TYPES = ("S8", "U8", "S16", "U16", "S32", "U32", "S64", "U64", "S4x2", "U4x2")
_BASE_REGS = tuple(f"a{k}" for k in range(8)) + tuple(f"s{k}" for k in range(12))


def tload_text(p: TLoadParams, base: str, stride: str | None) -> str:
    """A TLOAD's text, its source in the registers ``base`` (and ``stride``)."""
    col = p.valid_col if p.col is None else p.col
    src = f"[{base}, {stride}]" if stride else f"[{base}]"
    dsts = ", ".join(f"{q}<{s}>" for q, s in p.outputs)
    return (f"TLOAD.{p.layout.name} <LB0:{p.valid_col}, LB1:{p.valid_row}, LB2:{col}, "
            f"{p.dtype.name}, {p.pad.name}>, {src}, ->{dsts}")


def random_program(rng: random.Random, mem_size: int = 1 << 16, length: int | None = None,
                   fault: str | None = None, layout: TLoadLayout | None = None,
                   dtype: str | None = None, pressure: bool = False, index16: bool = False,
                   lcfr_max: int = 4096, stores: float = 0.15,
                   store_layout: TLoadLayout | None = None) -> tuple[list[str], dict[str, int]]:
    """A random program of TLOAD/TADD/TSUB for the tile system: (lines, scalar registers).

    It is built against a golden Machine (``arith="integer"``) as it goes, so that its
    TADD/TSUBs mostly read live registers of matching shape.  ``length`` instructions
    (1..64, drawn when None) before an optional ``fault`` (one of :data:`PROGRAM_FAULTS`)
    that ends it; a program may also end early at a fault it runs into (a queue whose
    oldest live register is of a floating-point type, which no TSUB can release).
    ``layout``/``dtype`` steer the TLOAD shapes, ``pressure`` loads one queue until it
    is full, ``index16`` reads a source as ``Q#16``.

    TSTOREs (D15): a ``stores`` share of the random mix stores a live register, in a
    selector that reads its layout (``store_layout`` when it fits), its whole matrix or a
    part, dense or strided, kept or released, to a base that holds the footprint; after a
    third of them a TLOAD reads the first stored bytes back.
    """
    length = length if length is not None else rng.choice(
        [rng.randint(1, 8), rng.randint(4, 24), rng.randint(16, 64)])
    regs: dict[str, int] = {}
    templates = []
    for k in range(rng.randint(1, 3)):
        dt = dtype or (rng.choice(INT_TYPES) if rng.random() < 0.8 else rng.choice(list(DTYPES)))
        lay = layout if (layout is not None and (k == 0 or rng.random() < 0.5)) else None
        while True:
            p, span = random_tload(rng, lay, dt, sizes=(256, 512, 1024), n=rng.choice(
                [1, 1, 1, 2, rng.randint(1, 4), rng.randint(5, 8)]))
            if span <= mem_size // 4:
                break
        stride = None
        if p.stride is not None:
            stride = f"t{k}"
            regs[stride] = p.stride
        templates.append((p, stride, span))
    max_span = max(s for _, _, s in templates)
    bases = list(_BASE_REGS[:rng.randint(2, 8)])
    for b in bases:
        regs[b] = rng.randint(0, mem_size - max_span)
    regs[STORE_STRIDE] = 1024 + 32 * rng.randint(0, 8)
    machine = Machine(np.zeros(mem_size, np.uint8), dict(regs),
                      lcfr=LCFR(256, lcfr_max), arith="integer")
    tiles = machine.tiles
    lines: list[str] = []

    def tload_line(queue=None, template=None, fits=False):
        """A TLOAD of a template, into ``queue`` or random queues; with ``fits``, only
        into queues with room for its outputs (None when there is none)."""
        p, stride, _ = template or rng.choice(templates)
        room = {q: tiles.room(q) for q in QUEUES}
        qs = []
        for _ in p.outputs:
            if not fits:
                qs.append(queue or rng.choice(QUEUES))
                continue
            ok = [q for q in ([queue] if queue else QUEUES) if room[q] > 0]
            if not ok:
                return None
            qs.append(rng.choice(ok))
            room[qs[-1]] -= 1
        p = replace(p, outputs=tuple((q, p.outputs[0][1]) for q in qs))
        return tload_text(p, rng.choice(bases), stride)

    def groups():
        """Live registers of the queues, grouped by what TADD requires equal."""
        out: dict = {}
        for name, img in machine.tiles.live():
            if "#" in name:
                out.setdefault((img.dtype.name, img.layout, img.rows, img.cols, img.size),
                               []).append(name)
        return out

    def ew_line(fits=False):
        """A TADD/TSUB of two live registers of one shape (None when there are none); with
        ``fits``, into a queue with room for it."""
        gs = [g for key, g in groups().items() if key[0] in INT_TYPES or rng.random() < 0.05]
        dsts = [q for q in QUEUES if tiles.room(q) > 0] if fits else QUEUES
        if not gs or not dsts:
            return None
        g = rng.choice(gs)
        a, b = rng.choice(g), rng.choice(g)
        ra = ".reuse" if rng.random() < 0.5 else ""
        rb = ".reuse" if rng.random() < 0.5 else ""
        return f"{rng.choice(['TADD', 'TSUB'])} {a}{ra}, {b}{rb}, ->{rng.choice(dsts)}"

    def release_line():
        """A TSUB that releases the oldest live register of a queue short of room (so that
        a program that keeps registers live goes on), into a queue with room; None when no
        such register is of an integer type (TSUB of another faults)."""
        for q in sorted(QUEUES, key=tiles.room):
            k = QUEUE_DEPTH - tiles.room(q)
            dsts = [d for d in QUEUES if tiles.room(d) > (d == q)]
            if k and dsts and tiles.read(f"{q}#{k}").dtype.name in INT_TYPES:
                return f"TSUB {q}#{k}, {q}#{k}.reuse, ->{rng.choice(dsts)}"
        return None

    def store_line(layout=None):
        """A TSTORE of a live register (None when none is live or no base holds it)."""
        live = [(n, img) for n, img in tiles.live() if "#" in n]
        if layout is not None:
            live = [(n, img) for n, img in live if layout in STORE_SELECTORS[img.layout.value]]
        if not live:
            return None
        name, img = rng.choice(live)
        sels = STORE_SELECTORS[img.layout.value]
        sel = layout if layout in sels else rng.choice(sels)
        e = img.dtype.esize
        pick = lambda hi: rng.choice([hi, hi, 1, rng.randint(0, hi)])   # noqa: E731
        vr, vc = pick(img.rows), pick(img.cols)
        outer, inner = (vc, vr) if sel.source_dn else (vr, vc)
        stride = regs[STORE_STRIDE] if rng.random() < 0.4 else None
        step = inner * e if stride is None else stride
        span = max(0, outer - 1) * step + inner * e
        fit = [b for b in bases if regs[b] + span <= mem_size]
        if not fit:
            return None
        reuse = ".reuse" if rng.random() < 0.5 else ""
        src = f"[{rng.choice(fit)}" + (f", {STORE_STRIDE}]" if stride else "]")
        return (f"TSTORE.{sel.name} <LB0:{vc}, LB1:{vr}, LB2:{img.cols}, {img.dtype.name}>, "
                f"{name}{reuse}, {src}")

    def readback(store: str) -> str | None:
        """A TLOAD of the first bytes a TSTORE wrote (None: no queue has room)."""
        base = store.split("[")[1].split(",")[0].rstrip("]")
        ok = [q for q in QUEUES if tiles.room(q) > 0]
        if not ok:
            return None
        return (f"TLOAD.NORM <LB0:{rng.randint(1, 256)}, LB1:1, LB2:256, U8, Zero>, [{base}], "
                f"->{rng.choice(ok)}<256>")

    def emit(line) -> bool:
        """Run ``line`` on the machine; False when it faulted (the program ends)."""
        lines.append(line)
        try:
            machine.execute(line)
        except Fault:
            return False
        return True

    focus = rng.choice(QUEUES)
    while len(lines) < length:
        if pressure and tiles.free_slots(focus) > 0:
            line = tload_line(focus)
        elif index16 and tiles.allocated(focus) < QUEUE_DEPTH:
            line = tload_line(focus)
        elif index16 and tiles.is_live(focus, QUEUE_DEPTH) and rng.random() < 0.8:
            line = f"TADD {focus}#16.reuse, {focus}#1, ->{rng.choice(QUEUES)}"
            index16 = False
        else:
            # the random mix keeps within the ring rule (D7): it allocates in queues with
            # room, and releases the register in the way when none has; the allocation
            # faults come from pressure and from the aimed tails
            line = None
            if rng.random() < stores or store_layout is not None and rng.random() < 0.3:
                line = store_line(store_layout)
                if line and emit(line):
                    back = readback(line) if rng.random() < 1 / 3 else None
                    if back is None or len(lines) >= length or emit(back):
                        continue
                    return lines, regs
                if line:
                    return lines, regs
            if rng.random() < 0.5:
                line = ew_line(fits=True) or tload_line(fits=True)
            else:
                line = tload_line(focus if rng.random() < 0.3 else None, fits=True)
            line = line or release_line() or tload_line()
        if not emit(line):
            return lines, regs
    if fault:
        _fault_tail(rng, fault, machine, lines, regs, templates, bases, tload_line, emit,
                    mem_size, lcfr_max)
    return lines, regs


def _fault_tail(rng, fault, machine, lines, regs, templates, bases, tload_line, emit,
                mem_size, lcfr_max):
    """Instructions that end the program with ``fault``."""
    tiles = machine.tiles

    def load(q):                        # one 256-byte register
        return f"TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [{bases[0]}], ->{q}<256>"

    def newest_live(q):                 # its live registers are its newest (or none)
        return all(tiles.is_live(q, k) for k in range(1, QUEUE_DEPTH - tiles.room(q)))

    if fault == "TileAllocation/full":
        # single loads into a queue whose live registers are its newest fill all 16 names
        # before the oldest live one reaches Q#16
        q = rng.choice([q for q in QUEUES if newest_live(q)] or list(QUEUES))
        for _ in range(QUEUE_DEPTH + 1):
            if not emit(load(q)):
                return
    elif fault == "TileAllocation/ring":
        # two loads into a queue, the newer released and the older kept: loads then fault
        # when a live register reaches Q#16 with that dead name among the 16
        q = rng.choice(QUEUES)
        if emit(load(q)) and emit(load(q)) and emit(f"TADD {q}#1, {q}#2.reuse, ->{q}"):
            for _ in range(QUEUE_DEPTH + 1):
                if not emit(tload_line(q)):
                    return
    elif fault == "TileReleased/released":
        for _ in range(4):
            dead = [(q, k) for q in QUEUES for k in range(1, tiles.allocated(q) + 1)
                    if not tiles.is_live(q, k)]
            if dead:
                q, k = rng.choice(dead)
                other = next((n for n, _ in tiles.live() if "#" in n), f"{q}#{k}")
                emit(f"TADD {q}#{k}, {other}, ->U")
                return
            live = [n for n, _ in tiles.live() if "#" in n]
            if not live:
                if not emit(tload_line()):
                    return
                continue
            a = rng.choice(live)
            if not emit(f"TSUB {a}, {a}, ->{rng.choice(QUEUES)}"):
                return
    elif fault == "TileReleased/never":
        q = min(QUEUES, key=tiles.allocated)
        n = tiles.allocated(q)
        if n >= 16:
            emit(f"TADD ACC, ACC, ->{q}")
        else:
            emit(f"TADD {q}#{rng.randint(n + 1, 16)}, {q}#{rng.randint(n + 1, 16)}, ->T")
    elif fault == "IllegalInstruction/dst":
        if rng.random() < 0.5:
            p, stride, _ = rng.choice(templates)
            emit(tload_text(replace(p, outputs=(("ACC", p.outputs[0][1]),)),
                            rng.choice(bases), stride))
        else:
            live = [n for n, _ in tiles.live() if "#" in n]
            if not live and not emit(tload_line()):
                return
            live = [n for n, _ in tiles.live() if "#" in n]
            a = rng.choice(live)
            emit(f"TADD {a}.reuse, {a}, ->{rng.choice(['ACC', 'S'])}")
    elif fault == "IllegalInstruction/float":
        dt = rng.choice(["FP16", "FP32", "BF16", "E4M3"])
        p, span = random_tload(rng, TLoadLayout.NORM, dt, sizes=(256,), n=1)
        q = rng.choice(QUEUES)
        text = tload_text(replace(p, stride=None, outputs=((q, 256),)), rng.choice(bases), None)
        if emit(text) and emit(text):
            emit(f"TADD {q}#1, {q}#2, ->{rng.choice(QUEUES)}")
    elif fault == "IllegalParameter/lcfr":
        size = lcfr_max * 2
        emit(f"TLOAD.NORM <LB0:{size // 2}, LB1:1, S16, Zero>, [{rng.choice(bases)}], "
             f"->{rng.choice(QUEUES)}<{size}>")
    elif fault == "IllegalParameter/shape":
        q = rng.choice(QUEUES)
        if emit(f"TLOAD.NORM <LB0:128, LB1:2, S8, Zero>, [{bases[0]}], ->{q}<256>") and \
                emit(f"TLOAD.NORM <LB0:64, LB1:4, S8, Zero>, [{bases[0]}], ->{q}<256>"):
            emit(f"TADD {q}#1, {q}#2, ->{rng.choice(QUEUES)}")
    elif fault == "OutOfBounds":
        regs["t6"] = mem_size - rng.randint(0, 8)
        machine.regs["t6"] = regs["t6"]
        emit(f"TLOAD.NORM <LB0:16, LB1:4, S16, Zero>, [t6], ->{rng.choice(QUEUES)}<256>")
    elif fault.startswith("TSTORE/"):
        _store_fault(rng, fault, tiles, bases, regs, machine, emit, load, mem_size)
    elif fault == "far":             # a TLOAD whose operands span their 64-bit encodings
        p, _, _ = rng.choice(templates)

        def wide():                  # every bit of a 64-bit field, half the time
            return rng.getrandbits(64 if rng.random() < 0.5 else rng.randint(1, 64))
        while True:
            kw = {f: wide() for f in ("valid_col", "valid_row", "col") if rng.random() < 0.5}
            regs["t5"] = wide()
            regs["t6"] = wide()
            # the template's outputs, or (three times in four) eight: every size field of
            # the encoding, most of them wide (a program ends with one far TLOAD at most,
            # and a few hundred programs have a handful: each must move many bits)
            outs = [s for _, s in p.outputs]
            outs += [outs[0]] * (MAX_OUTPUTS - len(outs)) * (rng.random() < 0.75)
            sizes = [wide() if rng.random() < 0.75 else s for s in outs]
            far = replace(p, outputs=tuple((rng.choice(QUEUES), s) for s in sizes), **kw)
            if max([regs["t5"], regs["t6"], *sizes, *kw.values()]) >= 1 << 32:
                break
        machine.regs.update(t5=regs["t5"], t6=regs["t6"])
        emit(tload_text(far, "t6", "t5" if rng.random() < 0.5 else None))
    else:
        raise ValueError(f"fault={fault!r}: one of {', '.join(PROGRAM_FAULTS)}")


def _store_fault(rng, fault, tiles, bases, regs, machine, emit, load, mem_size):
    """A TSTORE that faults ``fault`` (TSTORE/...), of a fresh 256-byte U8 register."""
    q = rng.choice([q for q in QUEUES if tiles.room(q) > 0] or list(QUEUES))
    if fault == "TSTORE/TileReleased":
        n = tiles.allocated(q)
        if n and rng.random() < 0.5 and emit(load(q)) and \
                emit(f"TSTORE.NORM <LB0:16, LB1:2, LB2:128, U8>, {q}#1, [{bases[0]}]"):
            emit(f"TSTORE.NORM <LB0:16, LB1:2, LB2:128, U8>, {q}#1, [{bases[0]}]")
        else:
            emit(f"TSTORE.NORM <LB0:16, LB1:2, LB2:128, U8>, {q}#{min(16, n + 1)}, "
                 f"[{bases[0]}]")
        return
    if not emit(load(q)):
        return
    if fault == "TSTORE/DataType":
        emit(f"TSTORE.NORM <LB0:64, LB1:2, LB2:64, {rng.choice(['S16', 'U32', 'S64'])}>, "
             f"{q}#1, [{bases[0]}]")
    elif fault == "TSTORE/shape":
        emit(rng.choice([f"TSTORE.NORM <LB0:16, LB1:3, LB2:128, U8>, {q}#1, [{bases[0]}]",
                         f"TSTORE.NORM <LB0:16, LB1:1, LB2:96, U8>, {q}#1, [{bases[0]}]",
                         f"TSTORE.ND2NZ <LB0:16, LB1:8, LB2:128, U8>, {q}#1, [{bases[0]}]"]))
    elif fault == "TSTORE/overlap":
        regs["t6"] = rng.randint(0, 15)
        machine.regs["t6"] = regs["t6"]
        emit(f"TSTORE.NORM <LB0:16, LB1:2, LB2:128, U8>, {q}#1, [{bases[0]}, t6]")
    elif fault == "TSTORE/OutOfBounds":
        regs["t6"] = mem_size - rng.randint(1, 30)
        machine.regs["t6"] = regs["t6"]
        emit(f"TSTORE.NORM <LB0:32, LB1:2, LB2:128, U8>, {q}#1.reuse, [t6]")
    elif fault == "TSTORE/far":
        # operands over 32 bits, as the TLOAD's far tail: first one memory run (a row of
        # the U8 register, or of a 16 x 16 S16 ZN one) with a stride past 2**32, legal (a
        # stride moves no byte of one run), then a base past memory, with now and then an
        # extent past 32 bits too: OutOfBounds or a shape fault
        regs["t5"] = rng.randrange(1 << 32, 1 << 64)
        regs["t6"] = rng.randrange(1 << 32, 1 << 64)
        machine.regs.update(t5=regs["t5"], t6=regs["t6"])
        fit = [b for b in bases if regs[b] + 128 <= mem_size] or [bases[0]]
        if rng.random() < 0.5:
            if not emit(f"TSTORE.NORM <LB0:128, LB1:1, LB2:128, U8>, {q}#1.reuse, "
                        f"[{rng.choice(fit)}, t5]"):
                return
        else:
            z = rng.choice([z for z in QUEUES if tiles.room(z) > 0] or [q])
            if not (emit(f"TLOAD.ND2ZN <LB0:16, LB1:16, LB2:16, S16, Zero>, [{bases[0]}], "
                         f"->{z}<512>")
                    and emit(f"TSTORE.{rng.choice(['ND2ZN', 'DN2ZN'])} <LB0:16, LB1:1, "
                             f"LB2:16, S16>, {z}#1.reuse, [{rng.choice(fit)}, t5]")):
                return
        lb1 = rng.randrange(1 << 32, 1 << 64) if rng.random() < 0.3 else 2
        emit(f"TSTORE.NORM <LB0:16, LB1:{lb1}, LB2:128, U8>, {q}#1, [t6, t5]")
