"""``tilecosim regress``: constrained-random, coverage-driven regression of every engine against
the golden model.

Scenarios are drawn from one seed, per operation, before anything runs: each draw aims at a
bin of :mod:`tilecosim.flows.coverage` that is still empty (a random one among them), trying up to 200
candidates for one that hits it; once every bin is hit, draws are plain random.  About one
draw in eight is a faulting operation.  The scenarios then run in batches -- back to back
through one engine, with or without random back-pressure (every other batch) -- on the
chosen backend, in ``--jobs`` processes.  A batch that fails is re-run one scenario at a time
to name the culprit; every failure prints a one-line command that reproduces it alone, and a
hang (the bench's watchdog) is re-run with a waveform.

Memory images come from the seed too: global memory (TLOAD), L1 (LoadDataWithTranspose) and
UB (LoadAlign) are written to the output directory so the reproduce commands can read them.
"""

import dataclasses
import json
import os
import random
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from tilecosim.model.buffers import Buffer
from tilecosim.model.display import seeded_memory
from tilecosim.model.dtypes import DTYPES, PadValue
from tilecosim.model.faults import Fault
from tilecosim.model.load_align import WIDTHS, Addressing, LoadDist, load_align
from tilecosim.model.load_data import (LDT_DTYPES, SQUARES, LoadData2dTransposeParams as V1,
                             LoadData2dTransposeParamsV2 as V2, plan_ldt)
from tilecosim.model.scenarios import random_tload
from tilecosim.model.tload import TLoadLayout, TLoadParams, plan

from . import coverage as cov
from tilecosim.sim.benches.align import AlignCase
from tilecosim.sim.benches.load_data_with_transpose import LdtCall

__all__ = ["Scenario", "draw_scenarios", "run_regress", "main_args"]

MEM_SIZE = 1 << 16          # TLOAD global memory
L1_SIZE = 1 << 15
L0_SIZE = 1 << 14
UB_SIZE = 1 << 12
VL = 256
BATCH = {"amaranth": {"tload": 8, "load-data-with-transpose": 10, "load-align": 40},
         "verilog": {"tload": 24, "load-data-with-transpose": 24, "load-align": 120}}
ESIZE_TYPES = {}
for _name, _dt in DTYPES.items():
    ESIZE_TYPES.setdefault(cov.esize_name(_dt), []).append(_name)


@dataclasses.dataclass
class Scenario:
    op: str
    index: int
    item: object                 # TLoadParams, LdtCall or AlignCase
    fault: str | None            # the model's fault kind, or None
    bins: list


# --- drawing -------------------------------------------------------------------------------

def _fault_of(call, *args):
    """(the model's fault or None, what ``call`` returned)."""
    try:
        return None, call(*args)
    except Fault as f:
        return f, None


def _split_hint(hint: str | None, fault_point: str):
    """(point, value, fault kind asked for or None) of a bin name."""
    point, _, value = (hint or "").partition(":")
    return point, value, value if point == fault_point else None


def _tload_model(p):
    return _fault_of(plan, p, MEM_SIZE)


def _gen_tload(rng: random.Random, hint: str | None):
    point, value, kind = _split_hint(hint, "tload.fault")
    layout = dtype = pad = n = None
    if point in ("tload.shape", "tload.outputs", "tload.region", "tload.source"):
        parts = value.split("/")
        layout = TLoadLayout[parts[0]]
        if point == "tload.shape":
            dtype = rng.choice(ESIZE_TYPES[parts[1]])
            pad = PadValue[parts[2]]
        elif point == "tload.outputs":
            n = {"1": 1, "2": 2}.get(parts[1]) or rng.randint(3, 8)
    while True:
        p, span = random_tload(rng, layout, dtype, sizes=(256, 512, 1024, 2048), n=n, pad=pad)
        if span <= MEM_SIZE:
            break
    if kind == "IllegalInstruction":
        outs = list(p.outputs)
        outs[rng.randrange(len(outs))] = (rng.choice(["ACC", "S"]), outs[0][1])
        p = dataclasses.replace(p, outputs=tuple(outs))
    elif kind == "IllegalParameter":
        col = p.valid_col if p.col is None else p.col
        p = dataclasses.replace(p, col=col, valid_col=col + rng.randint(1, 4))
    elif kind == "OutOfBounds":
        p = dataclasses.replace(p, valid_row=max(1, p.valid_row), valid_col=max(1, p.valid_col),
                                base=MEM_SIZE - rng.randint(0, 8))
    fault, pl = _tload_model(p)
    return p, fault, cov.tload_bins(p, fault, pl)


def _ldt_model(c: LdtCall):
    return _fault_of(plan_ldt, c.params, Buffer("L1", L1_SIZE), Buffer(c.dst_name, L0_SIZE),
                     c.dst, c.src)[0]


def _gen_ldt(rng: random.Random, hint: str | None):
    point, value, kind = _split_hint(hint, "ldt.fault")
    parts = value.split("/") if point in ("ldt.form", "ldt.gaps", "ldt.repeat") else []
    dtype = parts[0] if parts else rng.choice(list(LDT_DTYPES))
    v2 = (parts[1] == "V2") if point == "ldt.form" else (dtype != "int4b" and rng.random() < 0.3)
    addr_mode = (parts[2] == "1") if point == "ldt.form" else rng.random() < 0.25
    repeat = rng.randint(1 if v2 else 0, 4)
    if point == "ldt.repeat":
        repeat = {"0": 0, "1": 1}.get(parts[1], rng.randint(2, 6))
        if repeat == 0:
            v2 = False
    gaps = rng.random() < 0.6
    if point == "ldt.gaps":
        gaps = parts[1] == "nonzero"
    kw = dict(repeatTimes=repeat, srcStride=rng.randint(0, 3) if repeat > 1 else rng.randint(0, 2),
              dstGap=rng.randint(0, 3) if gaps else 0,
              dstFracGap=rng.randint(0, 3) if gaps else 0, addrMode=addr_mode)
    sq = SQUARES[LDT_DTYPES[dtype]]
    kw["startIndex"] = (kw["srcStride"] * max(0, repeat - 1) + rng.randint(0, 2)) if addr_mode \
        else rng.randint(0, 3)
    if v2:
        p = V2(dtype, srcFracGap=rng.randint(0, 2) if gaps else 0, **kw)
    else:
        p = V1(dtype, **kw)
    dst_name = "L0B" if (v2 or dtype == "int4b" or rng.random() < 0.5) else "L0A"
    dst, src = rng.randint(0, 3) * 512, rng.randint(0, 8) * 32
    if kind == "IllegalParameter":
        p, dst_name = (V2("half", repeatTimes=1), "L0A") if rng.random() < 0.5 else \
            (V1("int4b", repeatTimes=1), "L0A")
    elif kind == "Alignment":
        src = src + rng.choice([1, 2, 16]) if rng.random() < 0.5 else src
        dst = dst + 32 if src % 32 == 0 else dst
    elif kind == "OutOfBounds":
        p = dataclasses.replace(p, startIndex=L1_SIZE // sq.bytes + rng.randint(0, 4),
                                addrMode=False, repeatTimes=max(1, repeat))
    elif kind == "ParameterRange":
        p = dataclasses.replace(p, repeatTimes=256 + rng.randint(0, 10))
    c = LdtCall(p, dst_name, dst, src)
    fault = _ldt_model(c)
    return c, fault, cov.ldt_bins(p, fault)


def _la_model(c: AlignCase):
    return _fault_of(load_align, Buffer("UB", UB_SIZE), c.addr, c.dist, c.t, c.how, VL,
                     c.reg_trait)[0]


def _gen_la(rng: random.Random, hint: str | None):
    point, value, kind = _split_hint(hint, "la.fault")
    dist = rng.choice(list(LoadDist))
    t = rng.choice([w for w in WIDTHS if cov.la_legal(dist, w)])
    how_kind = rng.choice(cov.ADDRESSING)
    trait = 1
    if point == "la.mode":
        d, t = value.split("/")
        dist = LoadDist[d]
    elif point == "la.addressing":
        d, how_kind = value.split("/")
        dist = LoadDist[d]
        t = rng.choice([w for w in WIDTHS if cov.la_legal(dist, w)])
    elif point == "la.trait":
        dist, t, trait = LoadDist.DIST_NORM, value, 2
        how_kind = rng.choice(["plain", "post_update"])
    w = WIDTHS[t]
    how = Addressing() if how_kind == "plain" else \
        Addressing(how_kind, rng.randint(-2, 8) * 32 // w)
    addr = rng.randint(0, UB_SIZE // 32 - 20) * 32
    if kind == "IllegalParameter":
        dist, t = rng.choice([d for d in LoadDist if d is not LoadDist.DIST_NORM]), "b64"
    elif kind == "Alignment":
        t, how = "b8", Addressing("post_update", rng.choice([1, 3, 17]))
        dist = LoadDist.DIST_DINTLV_B8
    elif kind == "OutOfBounds":
        addr = UB_SIZE - rng.randint(1, 4) * 32
        dist, how = LoadDist.DIST_NORM, Addressing()
    c = AlignCase(dist.name, t, addr, how, trait)
    fault = _la_model(c)
    return c, fault, cov.la_bins(c, fault)


GEN = {"tload": _gen_tload, "load-data-with-transpose": _gen_ldt, "load-align": _gen_la}


def draw_scenarios(op: str, count: int, seed: int) -> list[Scenario]:
    """``count`` scenarios of ``op`` from ``seed``, aimed at the bins still empty."""
    rng = random.Random(f"{op}/{seed}")
    gen = GEN[op]
    hits = {b: 0 for b in cov.all_bins(op)}
    out = []
    faults = [b for b in hits if ".fault:" in b]
    for k in range(count):
        empty = [b for b, n in hits.items() if n == 0]
        hint = rng.choice(empty) if empty else None
        want_fault = None
        if hint is None:                     # everything hit: one draw in eight faults
            want_fault = rng.random() < 0.125
            hint = rng.choice(faults) if want_fault else None
        pick = None
        for _ in range(200):
            item, fault, bins = gen(rng, hint)
            if (hint in bins) if hint else (fault is None) == (not want_fault):
                pick = (item, fault, bins)
                break
            if pick is None and any(hits.get(b) == 0 for b in bins):
                pick = (item, fault, bins)
        if pick is None:
            pick = (item, fault, bins)
        item, fault, bins = pick
        for b in bins:
            hits[b] = hits.get(b, 0) + 1
        out.append(Scenario(op, k, item, type(fault).__name__ if fault else None, bins))
    return out


# --- running -------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    op: str
    index: int
    ok: bool
    problem: str = ""
    repro: str = ""


@dataclasses.dataclass
class BatchResult:
    outcomes: list
    cycles: int = 0              # stall-free batches only
    ideal: int = 0
    waveform: str | None = None


def _images(seed: int):
    return {"tload": seeded_memory(seed, MEM_SIZE),
            "load-data-with-transpose": seeded_memory(seed + 1, L1_SIZE),
            "load-align": seeded_memory(seed + 2, UB_SIZE)}


def image_files(out_dir: Path, seed: int) -> dict:
    """Write the memory images the reproduce commands read; returns op -> path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"load-data-with-transpose": out_dir / f"l1-seed{seed}.bin",
             "load-align": out_dir / f"ub-seed{seed}.bin"}
    images = _images(seed)
    for op, path in paths.items():
        images[op].tofile(path)
    return paths


def repro(sc: Scenario, backend: str, seed: int, files: dict, stall: float, bseed: int) -> str:
    import shlex
    if sc.op == "tload":
        from tilecosim.sim.benches.tload import SimConfig, repro_command
        p_ok = 1 - stall
        cfg = SimConfig(seed=bseed, p_req_ready=p_ok, p_resp_valid=p_ok, p_write_ready=p_ok,
                        p_instr_valid=p_ok, backend=backend)
        return repro_command(sc.item, cfg, seed, MEM_SIZE)
    if sc.op == "load-data-with-transpose":
        c, p = sc.item, sc.item.params
        parts = ["tilecosim", "load-data-with-transpose", "--dtype", p.dtype, "--repeat-times",
                 str(p.repeatTimes), "--start-index", str(p.startIndex), "--src-stride",
                 str(p.srcStride), "--dst-gap", str(p.dstGap), "--dst-frac-gap", str(p.dstFracGap),
                 "--addr-mode", str(int(bool(p.addrMode)))]
        if p.version == 2:
            parts += ["--v2", "--src-frac-gap", str(p.srcFracGap)]
        parts += ["--dst", c.dst_name, "--src", shlex.quote(str(files[sc.op])), "--dst-bytes",
                  str(L0_SIZE), "--src-addr", str(c.src), "--dst-addr", str(c.dst),
                  "--backend", backend, "--seed", str(bseed)]
        return " ".join(parts + (["--stall", f"{stall:g}"] if stall else []))
    c = sc.item
    parts = ["tilecosim", "load-align", "--dist", c.dist, "--dtype", c.t, "--ub",
             shlex.quote(str(files[sc.op])), "--addr", str(c.addr), "--vl", str(VL)]
    if c.how.kind == "post_update":
        parts += ["--post-update", str(c.how.value)]
    elif c.how.kind == "addr_reg":
        parts += ["--addr-reg", str(c.how.value)]
    if c.reg_trait == 2:
        parts += ["--reg-trait", "2"]
    return " ".join(parts + ["--backend", backend])


def _run_tload(scs, backend, image, bseed, stall):
    from tilecosim.sim.benches.tload import SimConfig, compare, simulate_tload
    p_ok = 1 - stall
    cfg = SimConfig(seed=bseed, p_req_ready=p_ok, p_resp_valid=p_ok, p_write_ready=p_ok,
                    p_instr_valid=p_ok, backend=backend)
    plist = [s.item for s in scs]
    res = simulate_tload(plist, image, cfg)
    problems = {}
    for i, p in enumerate(plist):
        code, mism = compare(p, image, res, instr=i)
        got = res.faults[i] if i < len(res.faults) else None
        if got != (code or 0):
            problems[i] = f"fault code {got} from the engine, {code or 0} from the model"
        elif mism:
            problems[i] = f"{mism[0]} ({len(mism)} elements differ)" if len(mism) > 1 else str(mism[0])
    ideal = sum(len(p.outputs) * p.outputs[0][1] // 32 for s, p in zip(scs, plist) if not s.fault)
    return problems, res.waveform if res.timed_out else None, res.cycles or 0, ideal


def _run_ldt(scs, backend, image, bseed, stall):
    from tilecosim.sim.benches.load_data_with_transpose import run_and_compare_l1l0
    calls = [s.item for s in scs]
    res, problems = run_and_compare_l1l0(calls, image, np.zeros(L0_SIZE, np.uint8), seed=bseed,
                                         stall=stall, backend=backend)
    by_index = {}
    for line in problems:
        m = re.match(r"call (\d+): (.*)", line)
        if m:
            by_index[int(m[1])] = m[2]
        else:
            by_index[-1] = line                     # the L0 image: not attributable yet
    ideal = sum(c.params.repeatTimes * SQUARES[LDT_DTYPES[c.params.dtype]].bytes // 32
                for s, c in zip(scs, calls) if not s.fault)
    return by_index, res.waveform if res.timed_out else None, res.cycles or 0, ideal


def _run_la(scs, backend, image, bseed, stall):
    from tilecosim.sim.benches.align import compare_load_align, simulate_load_align
    cases = [s.item for s in scs]
    res = simulate_load_align(cases, image, VL, seed=bseed, p_op=1 - stall, p_ready=1 - stall,
                              backend=backend)
    by_index = {}
    for line in compare_load_align(cases, image, res, VL):
        m = re.match(r"op (\d+) (.*)", line)
        by_index[int(m[1]) if m else -1] = m[2] if m else line
    cycles = res.out[-1] - res.accept[0] + 1 if res.out and res.accept else 0
    return by_index, res.waveform if res.timed_out else None, cycles, len(cases)


RUN = {"tload": _run_tload, "load-data-with-transpose": _run_ldt, "load-align": _run_la}


def run_batch(op, scs, backend, seed, bseed, stall, files) -> BatchResult:
    """Run one batch; on a failure, run each scenario alone to find the culprits."""
    image = _images(seed)[op]
    run = RUN[op]
    try:
        problems, waveform, cycles, ideal = run(scs, backend, image, bseed, stall)
    except AssertionError as e:                  # the bench caught the design misbehaving
        problems, waveform, cycles, ideal = {-1: str(e).splitlines()[0]}, None, 0, 0
    if waveform:                                 # run_bench re-ran the hang with a waveform
        problems[-1] = f"the engine hung (watchdog); waveform: {waveform}"
    if not problems:
        return BatchResult([Outcome(op, s.index, True) for s in scs],
                           cycles if not stall else 0, ideal if not stall else 0)
    outcomes = []
    for i, s in enumerate(scs):
        if len(scs) > 1 and -1 in problems:      # not attributable: run the scenario alone
            try:
                alone, w_alone, _, _ = run([s], backend, image, bseed, stall)
            except AssertionError as e:
                alone, w_alone = {-1: str(e).splitlines()[0]}, None
            msg = alone.get(0) or alone.get(-1) or (f"hung; waveform: {w_alone}" if w_alone else "")
            if not msg:
                msg = "fails only back to back with its batch: " + problems[-1]
                msg = msg if i == len(scs) - 1 else ""
        else:
            msg = problems.get(i) or (problems.get(-1) if len(scs) == 1 else "")
        outcomes.append(Outcome(op, s.index, not msg, msg,
                                repro(s, backend, seed, files, stall, bseed) if msg else ""))
    if all(o.ok for o in outcomes):             # a batch-level problem nobody reproduces alone
        o = outcomes[-1]
        outcomes[-1] = Outcome(op, o.index, False, problems.get(-1, "batch failed"),
                               repro(scs[-1], backend, seed, files, stall, bseed))
    return BatchResult(outcomes, 0, 0, waveform)


def _batch_job(args):
    return run_batch(*args)


def run_regress(backend: str, ops, count: int, seed: int, jobs: int, out_dir: Path,
                progress=None):
    """Draw and run; returns (scenarios by op, outcomes, per-op cycles/ideal, elapsed)."""
    files = image_files(out_dir, seed)
    os.environ.setdefault("TILECOSIM_WAVES_DIR", str(Path(out_dir).resolve()))   # hang waveforms
    kind = "amaranth" if backend == "amaranth" else "verilog"
    drawn = {op: draw_scenarios(op, count, seed) for op in ops}
    work = []
    for op in ops:
        size = BATCH[kind][op]
        scs = drawn[op]
        if op == "load-data-with-transpose":     # one destination buffer per batch
            scs = sorted(scs, key=lambda s: (s.item.dst_name, s.index))
        for b, start in enumerate(range(0, len(scs), size)):
            batch = scs[start:start + size]
            if op == "load-data-with-transpose" and len({s.item.dst_name for s in batch}) > 1:
                split = [[s for s in batch if s.item.dst_name == n] for n in ("L0A", "L0B")]
                for k, part in enumerate(split):
                    work.append((op, part, backend, seed, seed * 1000 + 2 * b + k,
                                 0.2 * ((b + k) % 2), files))
                continue
            work.append((op, batch, backend, seed, seed * 1000 + b, 0.2 * (b % 2), files))
    total = sum(len(w[1]) for w in work)
    outcomes, perf, done, bad = [], {op: [0, 0] for op in ops}, 0, 0
    t0 = time.perf_counter()
    if jobs > 1:
        pool = ProcessPoolExecutor(max_workers=jobs)
        results = pool.map(_batch_job, work)
    else:
        pool, results = None, map(_batch_job, work)
    try:
        for w, r in zip(work, results):
            outcomes += r.outcomes
            perf[w[0]][0] += r.cycles
            perf[w[0]][1] += r.ideal
            done += len(w[1])
            bad += sum(not o.ok for o in r.outcomes)
            if progress:
                progress(done, total, bad)
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return drawn, outcomes, perf, time.perf_counter() - t0


# --- reporting (used by the CLI) -----------------------------------------------------------

def summarize(drawn, outcomes, perf):
    hits = {}
    for op, scs in drawn.items():
        for b in cov.all_bins(op):
            hits[b] = 0
        for s in scs:
            for b in s.bins:
                hits[b] = hits.get(b, 0) + 1
    rows = []
    for op, scs in drawn.items():
        mism = sum(1 for o in outcomes if o.op == op and not o.ok)
        faults = sum(1 for s in scs if s.fault)
        cyc, ideal = perf[op]
        bins = cov.all_bins(op)
        rows.append({"op": op, "scenarios": len(scs), "mismatches": mism, "faults_checked": faults,
                     "cycles": cyc, "ideal_cycles": ideal,
                     "bins": len(bins), "covered": sum(1 for b in bins if hits[b])})
    uncovered = [b for b, n in hits.items() if n == 0]
    return rows, hits, uncovered


def main_args(args) -> int:
    """The ``regress`` subcommand (arguments parsed by :mod:`tilecosim.cli.main`)."""
    out_dir = Path(args.out)
    tty = sys.stderr.isatty()
    last = {"t": 0.0}

    def progress(done, total, bad):
        now = time.perf_counter()
        if done < total and now - last["t"] < (0.2 if tty else 10):
            return
        last["t"] = now
        width = 30
        fill = width * done // total
        line = (f"regress [{'#' * fill}{'.' * (width - fill)}] {done}/{total} scenarios, "
                f"{bad} mismatches")
        print(("\r" + line) if tty else line, end="" if tty and done < total else "\n",
              file=sys.stderr, flush=True)

    drawn, outcomes, perf, elapsed = run_regress(args.backend, args.ops, args.count, args.seed,
                                                 args.jobs, out_dir, progress)
    rows, hits, uncovered = summarize(drawn, outcomes, perf)
    fails = [o for o in outcomes if not o.ok]
    for o in fails[:50]:
        print(f"MISMATCH {o.op} #{o.index}: {o.problem}\n  reproduce: {o.repro}")
    if len(fails) > 50:
        print(f"... and {len(fails) - 50} more mismatches")
    print(f"\n{'op':26} {'scenarios':>9} {'mismatches':>10} {'faults':>7} "
          f"{'cycles/ideal':>12} {'bins':>9}")
    for r in rows:
        ratio = f"{r['cycles'] / r['ideal_cycles']:.2f}" if r["ideal_cycles"] else "-"
        print(f"{r['op']:26} {r['scenarios']:>9} {r['mismatches']:>10} {r['faults_checked']:>7} "
              f"{ratio:>12} {r['covered']:>4}/{r['bins']:<4}")
    print(f"backend {args.backend}, seed {args.seed}, {sum(r['scenarios'] for r in rows)} "
          f"scenarios in {elapsed:.0f} s ({args.jobs} jobs); cycles/ideal over the batches "
          f"without back-pressure; faults = faulting scenarios whose fault code was checked")
    if uncovered:
        print(f"uncovered bins ({len(uncovered)}): " + ", ".join(uncovered[:20])
              + (" ..." if len(uncovered) > 20 else ""))
    else:
        print(f"coverage: all {len(hits)} bins hit")
    if args.json:
        print(json.dumps({"backend": args.backend, "seed": args.seed,
                          "scenarios": sum(r["scenarios"] for r in rows),
                          "mismatches": len(fails),
                          "faults_checked": sum(r["faults_checked"] for r in rows),
                          "seconds": round(elapsed, 1), "ops": rows,
                          "coverage": hits, "uncovered": uncovered,
                          "failures": [dataclasses.asdict(o) for o in fails]}))
    return 1 if fails else 0


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))
