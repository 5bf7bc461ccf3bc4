"""`tilecosim draw`: the seed's 4x4 example, and pictures that agree with the golden model's
TLOAD and LoadDataWithTranspose (not just with the layout functions they are drawn from)."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tilecosim.cli.draw import layout_picture, ldt_picture
from tilecosim.model.buffers import Buffer
from tilecosim.model.load_data import FRACTAL, LoadData2dTransposeParams, SQUARES, load_data_with_transpose
from tilecosim.model.tload import TLoadLayout, TLoadParams, tload

from .test_cli import run
from ..model.test_layouts import SEED_4x4


@pytest.mark.parametrize("layout", list(SEED_4x4))
def test_the_seeds_4x4_example(layout):
    r = run("draw", layout, "--rows", "4", "--cols", "4", "--fractal", "2x2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    memory_order = [int(x) for x in lines[lines.index("") + 2].split()]
    assert memory_order == SEED_4x4[layout]


@pytest.mark.parametrize("layout", ["NORM", "ND2NZ", "ND2ZN", "DN2NZ", "DN2ZN"])
def test_tload_pictures_agree_with_the_tload_model(layout):
    """Panel 1 numbers each element by its memory position, panel 2 by its tile position:
    the model's TLOAD of a ramp (element k holds k) must put k at that tile position."""
    rows, cols = 32, 32
    src, dst = (p.numbers for p in layout_picture(layout, "U16", rows, cols))
    lay = TLoadLayout[layout]
    mem = np.arange(rows * cols, dtype="<u2").view(np.uint8)
    p = TLoadParams(lay, "U16", valid_col=cols, valid_row=rows, outputs=(("T", rows * cols * 2),))
    img = tload(mem, p)[0]
    tile = img.data.view("<u2")
    assert (tile[dst.ravel()] == src.ravel()).all()


@pytest.mark.parametrize("dtype", ["int8", "half", "float"])
def test_ldt_picture_agrees_with_the_model(dtype):
    l1_panel, l0_panel = ldt_picture(dtype)
    sq = SQUARES[{"int8": 8, "half": 16, "float": 32}[dtype]]
    n = sq.side * sq.side
    kind = {8: "<u1", 16: "<u2", 32: "<u4"}[sq.bits]
    # the L1 square holds its element positions (mod 256 for int8)
    elems = (np.arange(n) % (1 << sq.bits)).astype(kind)
    l1 = Buffer("L1", elems.view(np.uint8).copy())
    l0 = Buffer("L0A", np.zeros(sq.nfrac * FRACTAL, np.uint8))
    load_data_with_transpose(l1, l0, LoadData2dTransposeParams(dtype, repeat_times=1))
    from tilecosim.model.load_data import squares_of
    before = squares_of(l1.data.reshape(1, sq.nfrac, FRACTAL), sq)[0]
    after = squares_of(l0.data.reshape(1, sq.nfrac, FRACTAL), sq)[0]
    assert (before == l1_panel.numbers % (1 << sq.bits)).all()
    assert (after == l0_panel.numbers % (1 << sq.bits)).all()


def test_svg_and_png(tmp_path):
    svg = tmp_path / "zz.svg"
    r = run("draw", "ZZ", "--rows", "4", "--cols", "4", "--fractal", "2x2", "--out", str(svg))
    assert r.returncode == 0, r.stderr
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}rect")) == 1 + 16 + 16            # background + two panels
    texts = [t.text for t in root.findall(f"{ns}text")]
    assert {str(k) for k in range(17)} <= set(texts)
    colours = {r.get("fill") for r in root.findall(f"{ns}rect")[1:17]}
    assert len(colours) == 4                                         # four 2x2 fractals
    png = tmp_path / "ldt.png"
    r = run("draw", "load-data-with-transpose", "--dtype", "half", "--out", str(png))
    assert r.returncode == 0, r.stderr
    from PIL import Image
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size[0] > 16 * 22 and im.size[1] > 2 * 16 * 22


@pytest.mark.parametrize("args,needle", [
    (["XX", "--rows", "4", "--cols", "4"], "LAYOUT 'XX': unknown layout; one of ND, DN"),
    (["NOPE"], "LAYOUT 'NOPE': unknown layout"),
    (["NZ", "--rows", "4", "--cols", "4"], "NZ needs whole fractals of 16x16"),
    (["ZZ", "--rows", "4"], "give the matrix with --rows R --cols C"),
    (["ZZ", "--rows", "4", "--cols", "4", "--fractal", "2y2"], "expected ROWSxCOLS"),
    (["ND", "--rows", "4", "--cols", "4", "--out", "x.gif"], "must end in .svg or .png"),
    (["ND", "--rows", "4", "--cols", "4", "--out", "/nonexistent/x.svg"], "does not exist"),
    (["load-data-with-transpose", "--dtype", "FP16"], "--dtype 'FP16': one of int4b"),
    (["load-data-with-transpose", "--rows", "4"], "set by --dtype"),
    (["ND", "--dtype", "FP99", "--rows", "4", "--cols", "4"], "--dtype 'FP99'"),
    (["ND", "--rows", "100", "--cols", "100"], "--rows '100' must be in 1..64"),
    (["ND", "--rows", "1", "--cols", "4096", "--out", "/nonexistent/wide.png"], "--cols '4096' must be in 1..64"),
])
def test_draw_errors(args, needle):
    r = run("draw", *args)
    assert r.returncode == 2 and needle in r.stderr


def test_architecture_picture(tmp_path):
    out = tmp_path / "a.svg"
    r = run("draw", "architecture", "--out", str(out))
    assert r.returncode == 0, r.stderr
    root = ET.parse(out).getroot()
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for name in ("TLoadDecoder", "SquareTranspose", "PadMerge", "L0A / L0B", "distribution",
                 "Icarus (cocotb)", "Verilator (cocotb)", "model/ (numpy)"):
        assert name in texts
    r = run("draw", "architecture")
    assert r.returncode == 2 and "give --out FILE.svg" in r.stderr


# --- issue 13: bounded pictures, titles inside the canvas, legends that say what colours mean

@pytest.mark.parametrize("layout,dtype", [("ND", "FP16"), ("ZN", "S8"), ("DN2ZN", "FP32"),
                                          ("ND2NZ", "FP16")])
def test_the_largest_picture_is_bounded(layout, dtype, tmp_path):
    from PIL import Image
    out = tmp_path / "big.png"
    r = run("draw", layout, "--dtype", dtype, "--rows", "64", "--cols", "64", "--out", str(out))
    assert r.returncode == 0, r.stderr
    with Image.open(out) as im:
        assert im.size[0] <= 3000 and im.size[1] <= 8000, im.size   # Pillow opens it whole
        im.load()


def _ink_right_edge(im, y0, y1):
    """The rightmost column with a non-white pixel in rows y0..y1."""
    px = np.asarray(im.convert("L"))[y0:y1]
    cols = np.nonzero((px < 200).any(axis=0))[0]
    return int(cols.max())


@pytest.mark.parametrize("args", [["ZZ", "--rows", "4", "--cols", "4", "--fractal", "2x2"],
                                  ["ND", "--rows", "1", "--cols", "2"],
                                  ["load-data-with-transpose", "--dtype", "int8"]])
def test_png_titles_end_inside_the_canvas(args, tmp_path):
    from PIL import Image
    out = tmp_path / "t.png"
    r = run("draw", *args, "--out", str(out))
    assert r.returncode == 0, r.stderr
    with Image.open(out) as im:
        assert _ink_right_edge(im, 0, 28) < im.size[0] - 8       # the first title's band


def _text_width(text: str, size: float, bold: bool) -> float:
    """The width of ``text`` in the font the SVGs ask for (DejaVu Sans), measured by
    FreeType; Pillow's own sans font, 10 % wider, where DejaVu is not installed."""
    from PIL import ImageFont
    try:
        return ImageFont.truetype("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf",
                                  size).getlength(text)
    except OSError:
        return 1.1 * ImageFont.load_default(size=size).getlength(text)


def test_svg_canvas_is_wider_than_its_titles(tmp_path):
    out = tmp_path / "zz.svg"
    r = run("draw", "ZZ", "--rows", "4", "--cols", "4", "--fractal", "2x2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    root = ET.parse(out).getroot()
    width = float(root.get("width"))
    for t in root.iter("{http://www.w3.org/2000/svg}text"):
        if t.get("font-weight") == "bold":
            assert float(t.get("x")) + _text_width(t.text, 14, True) <= width, t.text


def test_nd_and_dn_legends_name_their_bands():
    (p,) = layout_picture("ND", "FP16", 16, 16)[:1]
    assert "no fractals; colour = band of 8 rows" in p.title
    p = layout_picture("DN", "FP16", 16, 16)[0]
    assert "colour = band of 8 columns" in p.title
    assert (p.colours[:, :8] == 0).all() and (p.colours[:, 8:] == 1).all()


def test_every_architecture_arrow_connects_boxes():
    """Each engine's boxes are chained left to right and every simulator feeds regress."""
    from tilecosim.cli.draw import architecture_svg
    root = ET.fromstring(architecture_svg())
    ns = "{http://www.w3.org/2000/svg}"
    rects = [(float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
             for r in root.iter(ns + "rect") if r.get("rx")]
    lines = [tuple(float(l.get(k)) for k in ("x1", "y1", "x2", "y2")) for l in root.iter(ns + "line")]

    def box_at(x, y):
        return [b for b in rects if b[0] - 1 <= x <= b[0] + b[2] + 1 and b[1] - 1 <= y <= b[1] + b[3] + 1]
    into = {b: 0 for b in rects}
    for x1, y1, x2, y2 in lines:
        for b in box_at(x2, y2):
            into[b] += 1
    engine_boxes = [b for b in rects if b[1] < 380]
    assert all(into[b] == 1 for b in engine_boxes)              # one arrow into every stage
    regress = max((b for b in rects if b[1] > 380), key=lambda b: b[0])
    assert into[regress] == 3                                   # from each simulator
    for t in root.iter(ns + "text"):                            # sub-labels fit their boxes
        if t.get("font-size") == "10" and t.get("text-anchor") == "middle":
            x = float(t.get("x"))
            inside = [b for b in rects if b[0] < x < b[0] + b[2] and b[1] < float(t.get("y")) < b[1] + b[3]]
            if inside:
                assert _text_width(t.text, 10, False) <= inside[0][2] - 4, t.text
