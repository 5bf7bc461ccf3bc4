"""Pictures of the layouts (``tilecosim draw``): how a logical matrix lands in a tile, and a
LoadDataWithTranspose square before and after.

A picture is a list of panels; a panel is a grid of numbered, coloured cells with a title.
The numbers and colours come from the golden model (:func:`model.layouts.tile_offsets`,
:data:`model.load_data.SQUARES`); rendering is text (the terminal), SVG (written here) or
PNG (Pillow).

* a storage layout (ND, DN, ZZ, ZN, NZ, NN): panel 1 is the logical matrix, each element
  numbered by its position in the tile and coloured by its fractal; panel 2 is the tile in
  memory order, each position holding the logical element's number (row-major from 1, as in
  the seed's 4x4 example);
* a TLOAD layout (NORM, ND2NZ, ND2ZN, DN2NZ, DN2ZN): panel 1 numbers each element by its
  position in global memory (the ND or DN source block), panel 2 by its position in the
  destination tile, coloured by destination fractal;
* ``load-data-with-transpose``: one square in L1 and the same square in L0, each cell
  numbered by the element's position in the L1 square and coloured by its L1 fractal.
"""

import argparse
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from tilecosim.model.dtypes import DTYPES
from tilecosim.model.layouts import Layout, default_fractal, tile_offsets
from tilecosim.model.load_data import LDT_DTYPES, SQUARES
from tilecosim.model.tload import TLoadLayout

from .common import EXIT_OK, FMT, UsageError, check_writable, int_arg, write_file

__all__ = ["Panel", "layout_picture", "ldt_picture", "to_text", "to_svg", "write_png",
           "STORAGE", "TLOAD_LAYOUTS", "add_parsers"]

STORAGE = [lay.value for lay in Layout]
TLOAD_LAYOUTS = [lay.name for lay in TLoadLayout]
MAX_SIDE = 64              # rows and columns of a picture: every panel stays readable

# colour-blind-safe light fills (Okabe-Ito, lightened), cycled over fractals
PALETTE = ["#f6c28b", "#9fd3f1", "#8fd6b9", "#f3ea96", "#8ab6dd", "#f0a878", "#e3b3cf",
           "#c9c9c9"]


@dataclass
class Panel:
    title: str
    numbers: np.ndarray          # (rows, cols) ints
    colours: np.ndarray          # (rows, cols) palette indices
    row_label: str = "row"
    col_label: str = "column"


def _fractal_ids(layout: Layout, offsets: np.ndarray, fractal) -> np.ndarray:
    if fractal is None:                                  # ND / DN: bands of 8 rows / columns
        r, c = np.indices(offsets.shape)
        return (r // 8) if layout is Layout.ND else (c // 8)
    return offsets // (fractal[0] * fractal[1])


def _fractal_for(layout: Layout, esize: int, fractal):
    if not layout.fractal:
        return None
    return fractal or default_fractal(layout, esize)


def _legend(layout: Layout, fractal) -> str:
    if fractal:
        return f"{fractal[0]}x{fractal[1]} fractals; colour = fractal"
    band = "8 rows" if layout is Layout.ND else "8 columns"
    return f"no fractals; colour = band of {band}"


def _check_shape(rows, cols, fractal, what):
    if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
        raise ValueError(f"--rows/--cols {rows}x{cols}: each must be in 1..{MAX_SIDE} (a "
                         f"picture shows at most {MAX_SIDE}x{MAX_SIDE} elements)")
    if fractal and (rows % fractal[0] or cols % fractal[1]):
        raise ValueError(f"--rows/--cols {rows}x{cols}: {what} needs whole fractals of "
                         f"{fractal[0]}x{fractal[1]} elements")


def layout_picture(name: str, dtype: str, rows: int, cols: int,
                   fractal: tuple[int, int] | None = None) -> list[Panel]:
    """The panels for a storage layout or a TLOAD layout (module doc)."""
    if dtype not in DTYPES:
        raise ValueError(f"--dtype {dtype!r}: one of {', '.join(DTYPES)}")
    esize = DTYPES[dtype].esize
    if name.upper() in TLOAD_LAYOUTS:
        tl = TLoadLayout[name.upper()]
        dest = tl.dest
        fr = _fractal_for(dest, esize, fractal)
        _check_shape(rows, cols, fr, f"{tl.name} (into {dest.value})")
        r, c = np.indices((rows, cols))
        src = c * rows + r if tl.source_dn else r * cols + c
        off = tile_offsets(dest, rows, cols, esize=esize, fractal=fr)
        ids = _fractal_ids(dest, off, fr)
        src_name = "DN (column-major)" if tl.source_dn else "ND (row-major)"
        return [Panel(f"TLOAD.{tl.name} {dtype} {rows}x{cols}: position in global memory "
                      f"({src_name} source)", src, ids),
                Panel(f"position in the {dest.value} tile ({_legend(dest, fr)})", off, ids)]
    try:
        lay = Layout(name.upper())
    except ValueError:
        raise ValueError(f"LAYOUT {name!r}: one of {', '.join(STORAGE + TLOAD_LAYOUTS)} or "
                         f"load-data-with-transpose") from None
    fr = _fractal_for(lay, esize, fractal)
    _check_shape(rows, cols, fr, lay.value)
    off = tile_offsets(lay, rows, cols, esize=esize, fractal=fr)
    ids = _fractal_ids(lay, off, fr)
    element = np.arange(1, rows * cols + 1).reshape(rows, cols)
    order = np.empty(rows * cols, dtype=np.int64)
    order[off.ravel()] = element.ravel()
    order_ids = np.empty(rows * cols, dtype=np.int64)
    order_ids[off.ravel()] = ids.ravel()
    n = rows * cols
    width = n if n <= 16 else min(cols, 16 if n <= 1024 else 32)
    strip_rows = -(-n // width)
    strip = np.full(strip_rows * width, -1, dtype=np.int64)
    strip[:n] = order
    strip_ids = np.full(strip_rows * width, -1, dtype=np.int64)
    strip_ids[:n] = order_ids
    return [Panel(f"{lay.value} {dtype} {rows}x{cols}: position of each element in the tile "
                  f"({_legend(lay, fr)})", off, ids),
            Panel(f"the tile in memory order: element number (row-major from 1), {width} per "
                  f"line", strip.reshape(strip_rows, width), strip_ids.reshape(strip_rows, width),
                  row_label="line", col_label="position")]


def ldt_picture(dtype: str) -> list[Panel]:
    """One LoadDataWithTranspose square in L1 and in L0 (module doc)."""
    if dtype not in LDT_DTYPES:
        raise ValueError(f"--dtype {dtype!r}: one of {', '.join(LDT_DTYPES)}")
    sq = SQUARES[LDT_DTYPES[dtype]]
    r0, c0 = sq.frac_shape
    r, c = np.indices((sq.side, sq.side))
    if sq.side_by_side:                     # b32: fractals are the left and right halves
        frac = c // c0
        pos = frac * (r0 * c0) + r * c0 + c % c0
    else:
        frac = r // r0
        pos = r * sq.side + c
    return [Panel(f"LoadDataWithTranspose {dtype}: a {sq.side}x{sq.side} square in L1 "
                  f"({sq.nfrac} fractal(s) of {r0}x{c0}; number = position in the square, "
                  f"colour = L1 fractal)", pos, frac),
            Panel("the same square in L0 after the transpose: element (i, j) of L1 at (j, i)",
                  pos.T, frac.T)]


def to_text(panels: list[Panel]) -> str:
    out = []
    for p in panels:
        w = max(2, len(str(int(p.numbers.max()))))
        out.append(p.title)
        for row in p.numbers:
            out.append("  " + " ".join(("." * w if v < 0 else str(int(v)).rjust(w)) for v in row))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _geometry(p: Panel):
    rows, cols = p.numbers.shape
    digits = len(str(int(max(p.numbers.max(), 1))))
    cell = max(22, 8 * digits + 8)
    return rows, cols, cell


def to_svg(panels: list[Panel]) -> str:
    """An SVG document: the panels stacked, each cell a rectangle with its number."""
    parts, y, width = [], 10, 0
    for p in panels:
        rows, cols, cell = _geometry(p)
        parts.append(f'<text x="10" y="{y + 14}" font-size="14" font-weight="bold">'
                     f'{_esc(p.title)}</text>')
        y += 30
        x0 = 40
        for j in range(cols):
            parts.append(f'<text x="{x0 + j * cell + cell / 2}" y="{y - 4}" font-size="9" '
                         f'text-anchor="middle" fill="#666">{j}</text>')
        for i in range(rows):
            parts.append(f'<text x="{x0 - 6}" y="{y + i * cell + cell / 2 + 3}" font-size="9" '
                         f'text-anchor="end" fill="#666">{i}</text>')
            for j in range(cols):
                v = int(p.numbers[i, j])
                if v < 0:
                    continue
                fill = PALETTE[int(p.colours[i, j]) % len(PALETTE)]
                parts.append(f'<rect x="{x0 + j * cell}" y="{y + i * cell}" width="{cell}" '
                             f'height="{cell}" fill="{fill}" stroke="#555" stroke-width="0.5"/>'
                             f'<text x="{x0 + j * cell + cell / 2}" '
                             f'y="{y + i * cell + cell / 2 + 4}" font-size="11" '
                             f'text-anchor="middle">{v}</text>')
        width = max(width, x0 + cols * cell + 20, 20 + _svg_text_width(p.title))
        y += rows * cell + 20
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'font-family="DejaVu Sans, Arial, sans-serif">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(parts) + "\n</svg>\n")


def _svg_text_width(text: str, size: int = 14) -> int:
    """An upper bound of the width of bold DejaVu Sans / Arial text: 0.7 em per character
    (the widest capitals of DejaVu Sans Bold are 0.8 em, its average is under 0.65)."""
    return int(0.7 * size * len(text)) + 1


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_png(panels: list[Panel], path) -> None:
    """The same picture as :func:`to_svg`, rasterized with Pillow (``path``: a file name or
    a binary file object)."""
    font = ImageFont.load_default()
    sizes = [_geometry(p) for p in panels]
    width = max(max(40 + cols * cell + 20, 20 + int(font.getlength(p.title)) + 1)
                for p, (_, cols, cell) in zip(panels, sizes))
    height = sum(50 + rows * cell for rows, _, cell in sizes) + 10
    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    y = 10
    for p, (rows, cols, cell) in zip(panels, sizes):
        d.text((10, y), p.title, fill="black", font=font)
        y += 30
        x0 = 40
        for j in range(cols):
            d.text((x0 + j * cell + cell / 2, y - 8), str(j), fill="#666666", font=font,
                   anchor="mm")
        for i in range(rows):
            d.text((x0 - 6, y + i * cell + cell / 2), str(i), fill="#666666", font=font,
                   anchor="rm")
            for j in range(cols):
                v = int(p.numbers[i, j])
                if v < 0:
                    continue
                box = (x0 + j * cell, y + i * cell, x0 + (j + 1) * cell, y + (i + 1) * cell)
                d.rectangle(box, fill=PALETTE[int(p.colours[i, j]) % len(PALETTE)],
                            outline="#555555")
                d.text((box[0] + cell / 2, box[1] + cell / 2), str(v), fill="black", font=font,
                       anchor="mm")
        y += rows * cell + 20
    img.save(path, format="PNG")


# --- the architecture picture (README) -------------------------------------------------------

def _box(x, y, w, h, label, fill="#9fd3f1", sub=""):
    out = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" '
           f'stroke="#333"/>',
           f'<text x="{x + w / 2}" y="{y + h / 2 + (0 if sub else 4)}" font-size="12" '
           f'text-anchor="middle" font-weight="bold">{_esc(label)}</text>']
    if sub:
        out.append(f'<text x="{x + w / 2}" y="{y + h / 2 + 15}" font-size="10" '
                   f'text-anchor="middle">{_esc(sub)}</text>')
    return out


def _arrow(x1, y1, x2, y2, label=""):
    out = [f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.4" '
           f'marker-end="url(#arrow)"/>']
    if label:
        out.append(f'<text x="{(x1 + x2) / 2}" y="{(y1 + y2) / 2 - 5}" font-size="10" '
                   f'text-anchor="middle" fill="#444">{_esc(label)}</text>')
    return out


ARCH_BOX, ARCH_STEP, ARCH_WIDTH = 160, 215, 1330     # box width, box pitch, picture width


def architecture_svg() -> str:
    """The engines (one row each) and the verification flow, as an SVG document."""
    P, M, V = "#9fd3f1", "#f3ea96", "#8fd6b9"       # pipeline stage, memory model, checking
    s = []
    rows = [
        ("TLOAD engine (hdl/tload/)", 30, [
            ("TLoadDecoder", "1 cycle, faults"), ("FractalAddress", "Generator: runs"),
            ("global memory", "req -> resp, W B", M), ("line assembly /", "SquareTranspose"),
            ("PadMerge", "pad, Null = no BE"), ("tiles", "write {tile, offset}", M)],
         ["instr", "params", "req", "resp", "lines", "write"]),
        ("L1 -> L0 engine (hdl/l1l0/)", 150, [
            ("op check", "faults in model order"), ("square", "addresses"),
            ("L1", "rd -> rd_data, 32 B", M), ("SquareTranspose", "b4..b64, b32 as 4x 8x8"),
            ("L0A / L0B", "wr, 32 B", M)],
         ["op", "params", "rd", "rd_data", "wr"]),
        ("LoadAlign / StoreAlign units (hdl/align/)", 270, [
            ("address_stage", "PostUpdate/AddrReg, faults"), ("UB", "sync port, 2*VL B", M),
            ("distribution", "mux per mode"), ("res", "dst0, dst1 / next_addr", M)],
         ["op", "ub_addr", "ub_data", "res"]),
    ]
    for title, y, boxes, arrows in rows:
        s.append(f'<text x="20" y="{y}" font-size="13" font-weight="bold">{_esc(title)}</text>')
        x = 70
        for k, b in enumerate(boxes):
            fill = b[2] if len(b) > 2 else P
            s += _box(x, y + 15, ARCH_BOX, 50, b[0], fill, b[1])
            s += _arrow(x - (ARCH_STEP - ARCH_BOX), y + 40, x, y + 40, arrows[k])
            x += ARCH_STEP
    y = 400
    s.append(f'<text x="20" y="{y}" font-size="13" font-weight="bold">Verification</text>')
    s += _box(70, y + 15, 170, 55, "model/ (numpy)", V, "golden TLOAD, LDT, LoadAlign")
    s += _box(330, y + 15, 200, 55, "benches (tilecosim/sim/)", V,
              "drivers, memories, scoreboard")
    s += _box(620, y - 15, 150, 40, "Amaranth simulator", P)
    s += _box(620, y + 32, 150, 40, "Icarus (cocotb)", P)
    s += _box(620, y + 79, 150, 40, "Verilator (cocotb)", P)
    s += _box(900, y + 15, 210, 55, "regress / bench / mutation", V,
              "every op of tilecosim/ops/")
    s += _arrow(240, y + 42, 330, y + 42, "expected")
    for yy in (y + 5, y + 52, y + 99):
        s += _arrow(530, y + 42, 620, yy)
        s += _arrow(770, yy, 900, y + 42)
    s.append(f'<text x="835" y="{y + 110}" font-size="10" text-anchor="middle" '
             f'fill="#444">results, cycles</text>')
    s.append(f'<text x="330" y="{y + 135}" font-size="10">one bench body on every simulator; '
             f'same results and the same cycle counts asserted; bulk harness: memories inside '
             f'the design</text>')
    height = y + 150
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{ARCH_WIDTH}" height="{height}" '
            'font-family="DejaVu Sans, Arial, sans-serif">\n'
            '<defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" '
            'orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker></defs>\n'
            '<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(s) + "\n</svg>\n")


# --- the subcommand ---------------------------------------------------------------------------

DRAW_HELP = """\
Draw how a logical matrix lands in a tile, or a LoadDataWithTranspose square before and
after.  LAYOUT is a storage layout (ND, DN, ZZ, ZN, NZ, NN), a TLOAD layout (NORM, ND2NZ,
ND2ZN, DN2NZ, DN2ZN) or load-data-with-transpose (or architecture: the picture
of the engines and the verification flow, SVG only).  Fractals are the 512 B ones of --dtype
unless --fractal RxC says otherwise.  Without --out the picture is printed as numbers.

examples:
  tilecosim draw ZZ --rows 4 --cols 4 --fractal 2x2          # the seed's 4x4 example
  tilecosim draw ND2NZ --dtype FP16 --rows 32 --cols 32 --out nd2nz.svg
  tilecosim draw load-data-with-transpose --dtype half --out ldt.png
"""

def _fractal_arg(text):
    try:
        r, c = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected ROWSxCOLS, e.g. 2x2") from None
    if r < 1 or c < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: both sides must be at least 1")
    return r, c


def add_parsers(sub) -> dict:
    p = sub.add_parser("draw", help="pictures of the layouts (text, SVG or PNG)",
                       description=DRAW_HELP, formatter_class=FMT)
    p.add_argument("layout", metavar="LAYOUT",
                   help="one of " + ", ".join(LAYOUT_NAMES) + " (case does not matter)")
    p.add_argument("--dtype", default=None, help="data type (default FP16; for "
                   "load-data-with-transpose one of its types, default half)")
    p.add_argument("--rows", type=int_arg("--rows", 1, MAX_SIDE), default=None, metavar="R",
                   help=f"rows of the logical matrix (1..{MAX_SIDE}; not for "
                        f"load-data-with-transpose)")
    p.add_argument("--cols", type=int_arg("--cols", 1, MAX_SIDE), default=None, metavar="C",
                   help=f"columns of the logical matrix (1..{MAX_SIDE})")
    p.add_argument("--fractal", type=_fractal_arg, default=None, metavar="RxC",
                   help="fractal shape in elements (default: 512 B fractals of --dtype)")
    p.add_argument("--out", metavar="FILE.svg|FILE.png", help="write a picture")
    return {"draw": cmd_draw}


LAYOUT_NAMES = STORAGE + TLOAD_LAYOUTS + ["load-data-with-transpose", "architecture"]


def cmd_draw(args) -> int:
    name = args.layout.lower()
    if name not in {n.lower() for n in LAYOUT_NAMES}:
        raise UsageError(f"LAYOUT {args.layout!r}: unknown layout; one of "
                         + ", ".join(LAYOUT_NAMES))
    if name == "architecture":
        check_writable("--out", args.out, (".svg",), "the architecture picture is SVG only")
        if not args.out:
            raise UsageError("draw architecture: give --out FILE.svg")
        text = architecture_svg().encode()
        write_file("--out", args.out, lambda f: f.write(text))
        print(f"wrote {args.out}")
        return EXIT_OK
    check_writable("--out", args.out, (".svg", ".png"))
    try:
        if name == "load-data-with-transpose":
            if args.rows or args.cols or args.fractal:
                raise UsageError("--rows/--cols/--fractal: the square of "
                                 "load-data-with-transpose is set by --dtype")
            panels = ldt_picture(args.dtype or "half")
        else:
            if args.rows is None or args.cols is None:
                raise UsageError(f"draw {args.layout}: give the matrix with --rows R --cols C")
            panels = layout_picture(args.layout, args.dtype or "FP16", args.rows, args.cols,
                                    args.fractal)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not args.out:
        print(to_text(panels), end="")
        return EXIT_OK
    if args.out.lower().endswith(".svg"):
        text = to_svg(panels).encode()
        write_file("--out", args.out, lambda f: f.write(text))
    else:
        write_file("--out", args.out, lambda f: write_png(panels, f))
    print(f"wrote {args.out}: " + "; ".join(p.title for p in panels))
    return EXIT_OK
