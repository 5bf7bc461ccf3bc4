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
    (["XX", "--rows", "4", "--cols", "4"], "LAYOUT 'XX': one of ND, DN"),
    (["NZ", "--rows", "4", "--cols", "4"], "NZ needs whole fractals of 16x16"),
    (["ZZ", "--rows", "4"], "give the matrix with --rows R --cols C"),
    (["ZZ", "--rows", "4", "--cols", "4", "--fractal", "2y2"], "expected ROWSxCOLS"),
    (["ND", "--rows", "4", "--cols", "4", "--out", "x.gif"], "must end in .svg or .png"),
    (["ND", "--rows", "4", "--cols", "4", "--out", "/nonexistent/x.svg"], "does not exist"),
    (["load-data-with-transpose", "--dtype", "FP16"], "--dtype 'FP16': one of int4b"),
    (["load-data-with-transpose", "--rows", "4"], "set by --dtype"),
    (["ND", "--dtype", "FP99", "--rows", "4", "--cols", "4"], "--dtype 'FP99'"),
    (["ND", "--rows", "100", "--cols", "100"], "at most 4096 elements"),
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
