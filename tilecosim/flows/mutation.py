"""Mutation testing of the HDL: does the golden-vs-HDL suite catch single-point bugs?

Each mutant is one textual change to one HDL source (an address off by one in a layout, the
nibble order swapped, a wrong pad value, a dropped ready, a wrong fault code, a missing
guard, ...).  For each, the installed layout (tilecosim/ with hdl/ and model/ inside it) is
copied to a temporary directory with the tests, the change is applied to the copy of the
gateware (the original text must occur exactly once), and the comparison suite runs there
(its directory and ``PYTHONPATH`` put the mutated ``tilecosim.hdl`` first): the tests its
operation names in the registry first, then every gateware test if those pass.  A mutant
is *killed* when a test fails; a survivor means a missing test.

    tilecosim mutation [--only ID[,ID...]] [--jobs J] [--json FILE] [--list]
                       [--tier test|check]

``--tier test`` runs only the tests ``make test`` runs (those not marked ``slow``): the
measure that the inner loop alone still kills every mutant.

``--tier regress`` (D17) runs no test at all: a mutant is killed only when ``tilecosim
regress`` fails on the mutated gateware -- what a design from elsewhere meets, since it never
meets this project's tests.  It runs regress on Amaranth's simulator (no Verilog build per
mutant) for each operation whose engine holds the mutated file (:func:`ops_of`), at the
default count, on the seeds :data:`REGRESS_SEEDS`, and reports the operation, seed and
scenario index of each kill.

``make mutation`` runs them all and writes ``build/mutation.json``.
"""

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tilecosim.version import stamp
from tilecosim.cleanup import write_whole
from tilecosim import ops

from . import mutagen

__all__ = ["Mutant", "MUTANTS", "ROOT", "TIERS", "apply", "run_mutant", "select", "run_all"]

ROOT = Path(__file__).resolve().parents[2]      # the repository (running needs its tests/)
#: the gateware the mutants change: the installed ``tilecosim.hdl`` (hdl/ of a checkout)
HDL = Path(importlib.util.find_spec("tilecosim.hdl").submodule_search_locations[0])
# then every test of the gateware layer
ALL_HDL_TESTS = sorted(p.relative_to(ROOT).as_posix()
                       for p in (ROOT / "tests" / "hdl").glob("test_*.py"))


#: the test tiers: the pytest marker expression of each (``make test`` runs the ``test``
#: tier, ``make check`` and CI the ``check`` tier, which is every test); the ``regress``
#: tier runs no test but ``tilecosim regress`` (D17)
TIERS = {"test": "not slow", "check": None, "regress": None}
#: the seeds of the regress tier (docs/verification.md): a mutant survives only when regress
#: passes on each, at the default count
REGRESS_SEEDS = (1, 2, 3)
REGRESS_COUNT = 200


def ops_of(file: str) -> list[str]:
    """The operations ``regress`` draws whose engine holds ``file`` (under hdl/): those
    with a unit defined in it, else those with a unit in its folder, else (a file every
    engine shares) every one."""
    drawn = [op for op in ops.REGISTRY if op.regress]
    mine = [op.name for op in drawn if any(u.file == file for u in op.units)]
    folder = file.rpartition("/")[0]
    near = [op.name for op in drawn
            if folder and any(u.file.rpartition("/")[0] == folder for u in op.units)]
    return mine or near or [op.name for op in drawn]


def tests_of(file: str) -> list[str]:
    """The tests a mutant of ``file`` (under hdl/) runs first, from the registry: the unit
    tests of the units defined in it and the comparison tests of their operations; for a
    file no unit names, the comparison tests of the operations with units in its folder."""
    units = [(u, op) for op in ops.REGISTRY for u in op.units]
    mine = [(u, op) for u, op in units if u.file == file]
    if mine:
        found = [t for u, op in mine for t in u.tests + op.tests]
    else:
        folder = file.rpartition("/")[0]
        found = [t for u, op in units if u.file.rpartition("/")[0] == folder for t in op.tests]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str            # under hdl/
    old: str
    new: str
    what: str
    tests: tuple = ()    # run first (the hand-written list: tests_of(file))
    site: object = None  # a generated mutant: its mutagen.Site (applied at its position)


MUTANTS = [
    # --- TLOAD address generator: an address off by one in each layout -----------------------
    Mutant("addr-norm", "tload/addrgen.py", "w.line_off.eq((q << log2_run_bytes)[:log2_w]),",
           "w.line_off.eq(((q << log2_run_bytes) + 1)[:log2_w]),", "NORM: line offset off by one byte"),
    Mutant("addr-nd2nz", "tload/addrgen.py",
           "log2_block_lines = Mux(dn, cur.log2_cols, cur.log2_rows)",
           "log2_block_lines = Mux(dn, cur.log2_cols, cur.log2_rows + 1)",
           "ND2NZ: the fractal blocks' rows off by one"),
    Mutant("addr-dn2zn", "tload/addrgen.py",
           "log2_block_lines = Mux(dn, cur.log2_cols, cur.log2_rows)",
           "log2_block_lines = Mux(dn, cur.log2_cols + 1, cur.log2_rows)",
           "DN2ZN: the fractal blocks' columns off by one"),
    # ND2ZN and DN2NZ share _walk_squares: the fault is made in one layout's instance only
    Mutant("addr-nd2zn", "tload/addrgen.py",
           "w.minor.eq(tile_minor + (group_in_block << log2_group_elems)),",
           "w.minor.eq(tile_minor + (group_in_block << log2_group_elems) + (layout == 'nd2zn')),",
           "ND2ZN: element off by one"),
    Mutant("addr-dn2nz", "tload/addrgen.py",
           "w.minor.eq(tile_minor + (group_in_block << log2_group_elems)),",
           "w.minor.eq(tile_minor + (group_in_block << log2_group_elems) + (layout == 'dn2nz')),",
           "DN2NZ: element off by one"),
    Mutant("addr-esize", "tload/addrgen.py", "o.addr.eq(cur.base + major * cur.stride + (minor << log2_esize)),",
           "o.addr.eq(cur.base + major * cur.stride + minor),",
           "element index not scaled by the element size"),
    Mutant("valid-rows", "tload/addrgen.py", 'Mux(w.major < cur.valid_major, w.valid_lines, 0))',
           'Mux(w.major <= cur.valid_major, w.valid_lines, 0))', "one valid row/column too many"),
    Mutant("bubble-guard", "tload/addrgen.py",
           "compatible = ~have_last | same_kind | self.idle",
           "compatible = 1",
           "no drain between direct and transposing instructions (missing bubble guard)"),
    Mutant("fault-order", "tload/addrgen.py", "m.d.comb += self.fault.valid.eq(self.idle & ~busy)",
           "m.d.comb += self.fault.valid.eq(~busy)",
           "a fault completes before the instructions in flight"),
    # --- TLOAD decoder, pads, pad/merge, engine ---------------------------------------------
    Mutant("fault-code-oob", "tload/decode.py", "(out_of_bounds, FaultCode.OutOfBounds)",
           "(out_of_bounds, FaultCode.IllegalParameter)",
           "OutOfBounds reported as IllegalParameter"),
    Mutant("pad-bf16-max", "tload/dtype_rom.py", "5:  (1, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80),",
           "5:  (1, 0x7F7E, 0xFF7F, 0x7F80, 0xFF80),", "wrong Max pad for BF16"),
    Mutant("pad-hif8-neginf", "tload/dtype_rom.py", "6:  (0, 0x6E, 0xEE, 0x6F, 0xEF),",
           "6:  (0, 0x6E, 0xEE, 0x6F, 0xEE),", "wrong -inf pad for HiF8 (ieee-inf profile)"),
    Mutant("pad-byte-order", "tload/padmerge.py", "i.pattern.word_select(b % e, 8)",
           "i.pattern.word_select((b + 1) % e, 8)", "pad pattern bytes in the wrong order"),
    Mutant("null-writes", "tload/padmerge.py", "be = Cat(i.valid[b] | ~i.null for b in range(nbytes))",
           "be = Cat(i.valid[b] | i.null for b in range(nbytes))",
           "Null padding writes the pad, other pads do not"),
    Mutant("padmerge-ready", "tload/padmerge.py",
           "m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)",
           "m.d.comb += self.i.ready.eq(1)", "pad/merge drops its ready (ignores back-pressure)"),
    Mutant("resp-ready", "tload/engine.py", "self.resp.ready.eq(consume & head_reads)]",
           "self.resp.ready.eq(consume)]", "a response is popped for a run that read nothing"),
    Mutant("keep-mask", "tload/engine.py", 'keep = _byte_mask(m, head.read_bytes, "keep", W)',
           'keep = _byte_mask(m, head.read_bytes + 1, "keep", W)',
           "one byte past the run taken from the response"),
    Mutant("chunk-step", "tload/engine.py",
           '_line_meta(m, "chunk_meta", cm.tile, cm.line + (c << cm.log2_step),',
           '_line_meta(m, "chunk_meta", cm.tile, cm.line + c,',
           "W > 32: the chunk transposer's columns written to consecutive lines"),
    Mutant("stack-odd-rows", "tload/decode.py", "& ((valid_major & ((1 << g) - 1)) == 0))",
           ")", "rows read G at a time though the valid rows are not a multiple of G"),
    Mutant("stack-row-step", "tload/addrgen.py",
           "w.row_in_square.eq((q & _mask(log2_runs_per_group)) << cur.log2_stack),",
           "w.row_in_square.eq((q & _mask(log2_runs_per_group))"
           " << (cur.log2_stack if layout == 'dn2nz' else 0)),",
           "ND2ZN: stacked runs step one source row instead of G"),
    Mutant("chunk-pair-order", "tload/engine.py",
           "order = [(k % 2) * 2 + k // 2 for k in range(P)] if chunk.paired else list(range(P))",
           "order = list(range(P))",
           "W = 128: a stacked chunk run's fractal lines not paired before the chunk transposer"),
    Mutant("lane-valid", "tload/engine.py",
           "p.valid.eq(Cat(Mux(first + j < g.valid_lines, av, 0) for j in range(P))),",
           "p.valid.eq(Cat(Mux(first < g.valid_lines, av, 0) for j in range(P))),",
           "W > 32: every transpose lane takes lane 0's valid columns"),
    # --- transpose unit ------------------------------------------------------------------------
    Mutant("nibble-order", "transpose.py", "m.d.comb += out.eq(Cat(self.rows[b].word_select(t, e)",
           "m.d.comb += out.eq(Cat(self.rows[b].word_select(t ^ (e == 4), e)",
           "b4: the two nibbles of a byte swapped on read"),
    Mutant("slot-free", "transpose.py", "slot_free = (~r_full | (w_slot < r_slot)",
           "slot_free = (~r_full | (w_slot <= r_slot)",
           "a slot overwritten while it is still to be read"),
    # --- L1 -> L0 engine -------------------------------------------------------------------------
    Mutant("ldt-fault-align", "l1l0/engine.py", "(misaligned, FaultCode.Alignment)",
           "(misaligned, FaultCode.OutOfBounds)", "Alignment reported as OutOfBounds"),
    Mutant("ldt-second-fractal", "l1l0/engine.py",
           "m.d.comb += frac_addr.eq(cur.src + sq_index * (c_nfrac * frac) + j * frac)",
           "m.d.comb += frac_addr.eq(cur.src + sq_index * (c_nfrac * frac))",
           "V1: every fractal of a square read from the first"),
    Mutant("ldt-src-frac-gap", "l1l0/engine.py",
           "frac_addr.eq(cur.src + (sq_index + j * (cur.src_frac_gap[:16] + 1)) * frac)",
           "frac_addr.eq(cur.src + (sq_index + j * cur.src_frac_gap[:16]) * frac)",
           "V2: srcFracGap off by one"),
    Mutant("ldt-addr-mode", "l1l0/engine.py",
           "c_step = Mux(cur.addr_mode, -cur.src_stride[:16], cur.src_stride[:16])",
           "c_step = cur.src_stride[:16]", "addrMode ignored (squares always ascend)"),
    Mutant("ldt-b32-order", "l1l0/engine.py",
           "g.dst_base + g.quarter[1] * g.frac_step + Cat(line[:3], g.quarter[0]) * 32",
           "g.dst_base + g.quarter[0] * g.frac_step + Cat(line[:3], g.quarter[1]) * 32",
           "b32: the four 8x8 sub-squares placed in the wrong order"),
    Mutant("ldt-lane-lines", "l1l0/engine.py", "m.d.comb += line.eq(tr.o.payload.index * P)",
           "m.d.comb += line.eq(tr.o.payload.index)",
           "W > 32: the lanes' P lines written one line apart instead of P"),
    Mutant("lane-columns", "transpose.py", "data.word_select((g * U + s) * C + p + P * j, e)",
           "data.word_select((g * U + s) * C + p * (C // P) + j, e)",
           "W > 32: each transpose lane takes adjacent columns, not every P-th"),
    # --- LoadAlign / StoreAlign ------------------------------------------------------------------
    Mutant("align-addr-reg", "align/common.py", "m.d.comb += ea.eq(Mux(is_reg, addr + scaled, addr))",
           "m.d.comb += ea.eq(addr)", "AddrReg offset ignored"),
    Mutant("align-oob", "align/common.py", "oob = (ea < 0) | (ea + nbytes > ub_size)",
           "oob = (ea < 0) | (ea + nbytes > ub_size + 1)", "UB bound off by one"),
    Mutant("align-post-update", "align/common.py",
           "m.d.comb += nxt.eq(Mux(is_post, addr + scaled, addr))",
           "m.d.comb += nxt.eq(Mux(is_post, addr + value, addr))",
           "PostUpdate stride not scaled by sizeof(T)"),
    Mutant("store-mask", "align/store.py",
           "bes.append(Const(1) if lane is None else op.mask[lane])", "bes.append(Const(1))",
           "StoreAlign ignores the mask"),
    Mutant("store-fault-writes", "align/store.py",
           "self.ub_wen.eq(ok), self.ub_waddr.eq(ea[:32]),",
           "self.ub_wen.eq(1), self.ub_waddr.eq(ea[:32]),", "a faulting StoreAlign writes UB"),
    # --- the tile system: register file, elementwise unit, issue ------------------------------
    Mutant("tiles-reuse", "tiles/system.py",
           "rf.release.eq(Cat(~p.src[0].reuse, ~p.src[1].reuse))",
           "rf.release.eq(Cat(1, 1))", ".reuse ignored: every source released"),
    Mutant("tiles-relative-index", "tiles/regfile.py",
           "m.d.comb += slot.eq(r.head - name.index)",
           "m.d.comb += slot.eq(r.head - name.index - 1)", "Q#k resolves to the register "
           "allocated before it"),
    Mutant("tiles-ring", "tiles/regfile.py",
           "ok.append(~used | ((q < NQUEUES) & ~live.bit_select(slot, 1)))",
           "ok.append(~used | (q < NQUEUES))", "the ring rule unchecked: an allocation over "
           "a live Q#16 (a full queue among them) goes ahead"),
    Mutant("tiles-ring-outputs", "tiles/regfile.py",
           "ok.append(~used | ((q < NQUEUES) & ~live.bit_select(slot, 1)))",
           "ok.append(~used | ((q < NQUEUES) & (Const(k > 0) | ~live.bit_select(slot, 1))))",
           "only DstTile0's slot is checked: the later outputs of a TLOAD go over live "
           "registers"),
    Mutant("tiles-output-slots", "tiles/regfile.py",
           "m.d.comb += [slot.eq(nxt[j]), live.eq(ring[j].live)]",
           "m.d.comb += [slot.eq(ring[j].head), live.eq(ring[j].live)]",
           "every output of a TLOAD into one queue takes the same slot"),
    Mutant("tiles-never-written", "tiles/regfile.py",
           "r.wrapped.eq(r.wrapped | (heads[q] < r.head))", "r.wrapped.eq(r.wrapped)",
           "a queue never wraps: a released name past 16 allocations reads as never "
           "written"),
    Mutant("tiles-slot-freed", "tiles/regfile.py",
           "r.live.eq(r.live & ~freed[0] & ~freed[1] | taken)", "r.live.eq(r.live | taken)",
           "a released register's slot is never freed"),
    Mutant("tiles-veto", "tiles/system.py", "eng.veto.eq(~rf.alloc_ok)]", "eng.veto.eq(0)]",
           "a TLOAD into a full queue is not vetoed"),
    Mutant("tiles-tsub", "tiles/elementwise.py", "m.d.comb += s.eq(a - b)",
           "m.d.comb += s.eq(b - a)", "TSUB subtracts the wrong way round"),
    Mutant("tiles-shape-check", "tiles/system.py", "(differ, FaultCode.IllegalParameter),",
           "(Const(0), FaultCode.IllegalParameter),",
           "TADD of sources of different shapes not faulted"),
    Mutant("tiles-wait", "tiles/system.py",
           "with m.If(pend.valid & ~is_tload & (outstanding == 0)):",
           "with m.If(pend.valid & ~is_tload):",
           "TADD/TSUB does not wait for the TLOADs before it"),
    Mutant("tiles-write-map", "tiles/system.py", "with m.If(count + 1 == head.beats):",
           "with m.If(count == head.beats):",
           "an instruction's slots are kept one write too long"),
    # --- the TSTORE engine ----------------------------------------------------------------
    Mutant("tstore-esize-rule", "tstore/engine.py",
           "esize_differs = d.log2_esize != ins.src_log2_esize", "esize_differs = Const(0)",
           "a TSTORE of another element size than its source's is not faulted (D15)"),
    Mutant("tstore-overlap-rule", "tstore/engine.py", "& (d.stride < inner_bytes)",
           "& (d.stride <= inner_bytes)", "rows that just touch in memory are faulted as "
           "overlapping"),
    Mutant("tstore-fault-writes", "tstore/engine.py",
           "state.eq(Mux((fault != FaultCode.NONE) | empty, _State.DONE,",
           "state.eq(Mux(empty, _State.DONE,", "a faulting TSTORE writes its footprint"),
    Mutant("tstore-byte-enables", "tstore/engine.py",
           "wr.be.eq((Const(1, W + 1) << meta.bytes) - 1),", "wr.be.eq(-1),",
           "a direct write enables all W bytes: bytes past a partial row change"),
    Mutant("tstore-lane", "tstore/engine.py",
           "meta.lane.eq(w.tile_off[:log2_w]),", "meta.lane.eq(0),",
           "a direct segment is taken from lane 0 of the word read, not from its offset"),
    Mutant("tstore-row-stride", "tstore/engine.py",
           "w.run_addr.eq(w.run_addr + d.stride)]", "w.run_addr.eq(w.run_addr + w.minor_bytes)]",
           "a direct walk ignores RegSrc1: rows are stored dense"),
    Mutant("tstore-fractal-line", "tstore/engine.py",
           "line = (w.seg << w.log2_block) | w.major", "line = (w.major << w.log2_block) | w.seg",
           "ND2NZ/DN2ZN read the tile line of the transposed fractal"),
    Mutant("tstore-square-stride", "tstore/engine.py",
           "w.run_addr.eq(w.run_addr + (d.stride << w.log2_side))]",
           "w.run_addr.eq(w.run_addr + d.stride)]",
           "the next row of squares starts one memory run on, not S"),
    Mutant("tstore-group-bytes", "tstore/engine.py",
           "group.bytes.eq(Mux(left > group_bytes, group_bytes, left)),",
           "group.bytes.eq(group_bytes),",
           "a partial group (squares, chunks) writes all W bytes of each column"),
    Mutant("tstore-column-addr", "tstore/engine.py",
           "col_addr = Mux(col.index == 0, head.addr, acc)",
           "col_addr = Mux(col.index == 0, head.addr, head.addr)",
           "every column of a group goes to its first column's address"),
    Mutant("tstore-interleave", "tstore/engine.py",
           "lanes[i % P].o.payload.data.word_select(i // P, e)",
           "lanes[(i + 1) % P].o.payload.data.word_select(i // P, e)",
           "W > 32: the transpose lanes' elements interleaved from the wrong lane"),
    Mutant("tstore-chunk-runs", "tstore/engine.py",
           "w.tile_off.eq(((chunk_seg << w.log2_block) | major0) << LOG2_LINE)",
           "w.tile_off.eq(((chunk_seg << w.log2_block) | w.major) << LOG2_LINE)",
           "W > 32: a chunked group reads the runs of group n at run n, not n x P"),
    Mutant("tstore-done-early", "tstore/engine.py",
           "with m.If((state == _State.DRAIN) & last_seen):", "with m.If(state == _State.DRAIN):",
           "the completion leaves before the last writes"),
    Mutant("tstore-oob", "tstore/engine.py", "dec.mem_size.eq(self.mem_size),",
           "dec.mem_size.eq(-1),", "a footprint past the end of memory is not faulted"),
]


def generated(count: int, seed: int) -> list[Mutant]:
    """``count`` mutants generated from the gateware's AST with ``seed``
    (:mod:`.mutagen`)."""
    out = []
    for site in mutagen.sample(HDL, count, seed):
        out.append(Mutant(site.id, site.file, site.old, site.new, site.what,
                          tuple(tests_of(site.file)), site=site))
    return out


def apply(mutant: Mutant, hdl_dir: Path) -> None:
    """Apply ``mutant`` to the copy of the hdl package in ``hdl_dir``."""
    if mutant.site is not None:
        mutagen.apply_site(mutant.site, hdl_dir)
        return
    path = hdl_dir / mutant.file
    text = path.read_text()
    n = text.count(mutant.old)
    if n != 1:
        raise RuntimeError(f"mutant {mutant.id}: the original text occurs {n} times in "
                           f"hdl/{mutant.file} (the source changed: update the mutant)")
    path.write_text(text.replace(mutant.old, mutant.new))


def _pytest(files, tree: Path, jobs: int, timeout: int, tier: str = "check"):
    """pytest in the copied tree: its directory comes first on sys.path (and PYTHONPATH, for
    the subprocesses the tests start), so the mutated ``tilecosim.hdl`` is the one imported;
    only the tests of ``tier`` (:data:`TIERS`)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    marks = ["-m", TIERS[tier]] if TIERS[tier] else []
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-n", str(jobs), *marks, *files]
    try:
        out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    failed = [ln.split(" ", 1)[1].split(" - ")[0] for ln in out.stdout.splitlines()
              if ln.startswith("FAILED ")]
    return out.returncode, failed[0] if failed else out.stdout.strip().splitlines()[-1:]


def _regress(tree: Path, ops_: list[str], jobs: int, timeout: int):
    """``tilecosim regress`` on the mutated copy ``tree``, each operation and seed of the
    regress tier in turn until one fails: (operation, seed, first mismatch's index or
    None, what it said), or None when every run passed."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    for op in ops_:
        for seed in REGRESS_SEEDS:
            out = tree / "regress" / f"{op}-{seed}"
            cmd = [sys.executable, "-m", "tilecosim", "regress", "--ops", op, "--backend",
                   "amaranth", "--count", str(REGRESS_COUNT), "--seed", str(seed), "--jobs",
                   str(jobs), "--fail-fast", "--no-waves", "--json", "--out", str(out)]
            try:
                r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                return op, seed, None, "regress timed out"
            if r.returncode == 0:
                continue
            try:
                report = json.loads(r.stdout.splitlines()[-1])
                first = report["failures"][0]
                return op, seed, first["index"], first["problem"]
            except (IndexError, KeyError, ValueError):
                tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
                return op, seed, None, f"regress exit {r.returncode}: {tail}"
    return None


@contextlib.contextmanager
def mutated_tree(mutant: Mutant):
    """A temporary copy of the installed layout with ``mutant`` applied (and checked to be
    the ``tilecosim.hdl`` imported there)."""
    safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in mutant.id)
    with tempfile.TemporaryDirectory(prefix=f"mutant-{safe}-") as tmp:
        # the installed layout, built from the repository's folders: tilecosim/{hdl,model}
        # sit inside the package, so the copy (first on sys.path) is what every import finds
        ignore = shutil.ignore_patterns("__pycache__")
        for src, dst in (("tilecosim", "tilecosim"), ("hdl", "tilecosim/hdl"),
                         ("model", "tilecosim/model"), ("tests", "tests"),
                         ("cocotb_tests", "cocotb_tests")):
            shutil.copytree(ROOT / src, Path(tmp) / dst, ignore=ignore)
        shutil.copy(ROOT / "pyproject.toml", Path(tmp) / "pyproject.toml")
        apply(mutant, Path(tmp) / "tilecosim" / "hdl")
        imported = subprocess.run([sys.executable, "-c",
                                   "import tilecosim.hdl; print(tilecosim.hdl.__file__)"],
                                  cwd=tmp, env=dict(os.environ, PYTHONPATH=tmp),
                                  capture_output=True, text=True).stdout.strip()
        if not imported.startswith(str(Path(tmp).resolve())) and not imported.startswith(tmp):
            raise RuntimeError(f"the mutated copy is not the one imported ({imported})")
        yield Path(tmp)


def run_mutant(mutant: Mutant, jobs: int = 2, timeout: int = 1800,
               tier: str = "check") -> dict:
    """Apply one mutant to a copy of ``hdl`` and run the suite (the tests of ``tier``, or
    for the ``regress`` tier regress alone); the outcome as a dict."""
    t0 = time.perf_counter()
    with mutated_tree(mutant) as tmp:
        if tier == "regress":
            kill = _regress(tmp, ops_of(mutant.file), jobs, timeout)
            out = {"id": mutant.id, "killed": kill is not None,
                   "by": None if kill is None else
                   (f"regress --ops {kill[0]} --seed {kill[1]}"
                    + (f" #{kill[2]}" if kill[2] is not None else "") + f": {kill[3]}"),
                   "seconds": round(time.perf_counter() - t0, 1)}
            if kill is not None:
                out.update(op=kill[0], seed=kill[1], scenario=kill[2])
            return out
        first = list(mutant.tests) or tests_of(mutant.file)
        for files in (first, [f for f in ALL_HDL_TESTS if f not in first]):
            if not files:
                continue
            code, by = _pytest(files, tmp, jobs, timeout, tier)
            if code in (1, 2) and isinstance(by, str):      # a test failed (2: -x stopped)
                return {"id": mutant.id, "killed": True, "by": by,
                        "seconds": round(time.perf_counter() - t0, 1)}
            if code not in (0, 5):                # errors, timeout: say so
                return {"id": mutant.id, "killed": True, "by": f"pytest exit {code}: {by}",
                        "seconds": round(time.perf_counter() - t0, 1)}
    return {"id": mutant.id, "killed": False, "by": None,
            "seconds": round(time.perf_counter() - t0, 1)}


def select(only: list[str] | None, generate: int = 0, seed: int = 1,
           hand_written: bool = True) -> list[Mutant]:
    """The hand-written mutants (unless ``hand_written`` is false) and ``generate``
    generated ones, or those of them named in ``only``; ValueError naming the unknown ones,
    or one whose original text no longer occurs exactly once in the gateware."""
    pool = (MUTANTS if hand_written else []) + generated(generate, seed)
    todo = pool
    if only:
        unknown = [i for i in only if i not in {m.id for m in pool}]
        if unknown:
            raise ValueError(f"--only: unknown mutant(s) {', '.join(unknown)} (see --list)")
        todo = [m for m in pool if m.id in only]
    for m in todo:                          # every mutant must still apply before any runs
        if m.site is not None:
            continue                        # checked where it is applied
        text = (HDL / m.file).read_text()
        if text.count(m.old) != 1:
            raise ValueError(f"mutant {m.id}: the original text occurs {text.count(m.old)} "
                             f"times in hdl/{m.file} (the source changed: update the mutant)")
    return todo


def _summary(rows: list[dict], todo: list[Mutant]) -> dict:
    """The JSON summary: the hand-written mutants' fields as before, and ``generated``."""
    hand = [r for r, m in zip(rows, todo) if m.site is None]
    gen = [r for r, m in zip(rows, todo) if m.site is not None]
    survivors = [r["id"] for r in hand if not r["killed"]]
    summary = {"mutants": len(hand), "killed": len(hand) - len(survivors),
               "survivors": survivors}
    if gen:
        killed = [r for r in gen if r["killed"]]
        equivalent = [r["id"] for r in gen if not r["killed"] and r["id"] in mutagen.EQUIVALENT]
        survived = [r["id"] for r in gen if not r["killed"] and r["id"] not in equivalent]
        judged = len(gen) - len(equivalent)
        summary["generated"] = {
            "mutants": len(gen), "killed": len(killed), "survived": len(survived),
            "equivalent": len(equivalent),
            "kill_rate": round(len(killed) / judged, 4) if judged else None,
            "survivors": survived, "equivalents": equivalent}
    return summary


def run_all(todo: list[Mutant], jobs: int, json_path: str | None,
            tier: str = "check") -> int:
    """Run the mutants one after the other against the tests of ``tier``, print a line each
    and the summary (and the JSON file, when asked for, once all have run); exit status 1
    when a mutant survives that is not argued equivalent in :data:`.mutagen.EQUIVALENT`."""
    rows = []
    width = max([20] + [len(m.id) for m in todo])
    print(f"{'mutant':{width}} {'file':22} {'result':10} {'seconds':>7}  killed by / what")
    for m in todo:
        r = run_mutant(m, jobs, tier=tier)
        r["generated"] = m.site is not None
        r["what"] = m.what
        rows.append(r)
        result = ("killed" if r["killed"] else
                  "equivalent" if m.id in mutagen.EQUIVALENT else "SURVIVED")
        r["result"] = result
        print(f"{m.id:{width}} {m.file:22} {result:10} {r['seconds']:>7}  "
              f"{r['by'] if r['killed'] else m.what}", flush=True)
    summary = dict(_summary(rows, todo), tier=tier)
    if json_path:                    # whole, at the end: a stopped run writes none
        write_whole(json_path, json.dumps(stamp(dict(summary, rows=rows)), indent=1))
    print(json.dumps(stamp(summary)))
    bad = summary["survivors"] + summary.get("generated", {}).get("survivors", [])
    return 1 if bad else 0
