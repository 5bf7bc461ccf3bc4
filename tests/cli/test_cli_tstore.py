"""TSTORE on the command line: ``run`` with a kernel that stores and reads back, ``run
--out``, and ``asm``.  Expected values come from numpy arithmetic on the input memory, not
from the model."""

import json

import numpy as np

from .test_cli import run

KREGS = ["--reg", "a0=0", "--reg", "a1=2048", "--reg", "a2=8192"]


def test_the_kernel_stores_a_plus_b_and_reads_it_back(tmp_path):
    out = tmp_path / "state.npz"
    r = run("run", "examples/kernel.s", *KREGS, "--mem-seed", "5", "--mem-size", "16384",
            "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert [s["stored_bytes"] for s in obj["steps"]] == [None, None, None, 2048, None]
    assert obj["out"] == str(out)
    st = np.load(out)
    mem = np.random.default_rng(5).integers(0, 256, 16384, dtype=np.uint8)
    a = mem[0:2048].view(np.int16)
    b = mem[2048:4096].view(np.int16)
    want = mem.copy()
    want[8192:10240] = (a + b).astype(np.int16).view(np.uint8)     # wrapping S16 add
    assert np.array_equal(st["memory"], want)
    assert sorted(st.keys()) == ["T#1", "T#1.valid", "memory", "memory.valid"]
    assert st["memory.valid"].all()
    assert np.array_equal(st["T#1"], want[8192:10240]) and st["T#1.valid"].all()


def test_the_memory_generator_is_the_one_the_test_assumes(tmp_path):
    """The test above builds --mem-seed's bytes itself; this holds it to the CLI's."""
    out = tmp_path / "m.npz"
    r = run("run", "-", "--reg", "a0=0", "--mem-seed", "5", "--mem-size", "16384",
            "--out", str(out), stdin="TLOAD.NORM <LB0:256, U8>, [a0], ->T<256>\n")
    assert r.returncode == 0, r.stderr
    mem = np.random.default_rng(5).integers(0, 256, 16384, dtype=np.uint8)
    assert np.array_equal(np.load(out)["memory"], mem)


def test_text_output_says_what_a_tstore_wrote_and_the_fault_changes_nothing(tmp_path):
    prog = ("TLOAD.NORM <LB0:16, LB1:16, S16>, [a0], ->T<512>\n"
            "TSTORE.NORM <LB0:16, LB1:16, S16>, T#1.reuse, [a2]\n"
            "TSTORE.NORM <LB0:16, LB1:16, S8>, T#1, [a2]\n")
    out = tmp_path / "s.npz"
    r = run("run", "-", *KREGS, "--out", str(out), stdin=prog)
    assert r.returncode == 3, r.stderr
    assert "line 2: TSTORE.NORM <LB0:16, LB1:16, LB2:16, S16>, T#1.reuse, [a2]  ->  " \
           "wrote 512 bytes in 0x2000..0x21ff" in r.stdout
    assert r.stderr.startswith("line 3: IllegalParameter: DataType=S8: 1-byte elements, but "
                               "the source T#1 was written with 2-byte elements (S16)")
    st = np.load(out)                         # the state after line 2: T#1 still live
    assert np.array_equal(st["memory"][8192:8704], st["memory"][0:512])
    assert "T#1" in st


def test_asm_prints_the_tstore_block():
    r = run("asm", "TSTORE.ND2ZN <LB0: a2+12, LB1: 13, LB2: a1, FP32> T#1, [a1, a3], ->d",
            "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["insn"] == "TSTORE.ND2ZN <LB0:a2+12, LB1:13, LB2:a1, FP32>, T#1, [a1, a3], ->d"
    assert obj["block"][0] == "BSTART.TMA TSTORE, FP32" and obj["block"][5] == "B.IOT last, T#1"


def test_the_kernel_on_the_rtl_tile_system_matches_after_every_instruction():
    r = run("run", "examples/kernel.s", *KREGS, "--backend", "amaranth", "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    obj = json.loads(r.stdout.splitlines()[-1])
    assert obj["match"] is True and obj["mismatches"] == [] and obj["cycles"] > 0
    assert [s["stored_bytes"] for s in obj["steps"]] == [None, None, None, 2048, None]


def test_a_tstore_bug_is_a_memory_mismatch_naming_the_footprint(monkeypatch, capsys):
    """A planted bug: the engine reads the neighbouring word of its source (word k ^ 1), so
    it writes the right addresses with the wrong tile bytes.  Exit 1; the report names the
    TSTORE's line, the memory byte, and its row, element and byte in the footprint."""
    from tilecosim.cli import main
    import tilecosim.hdl.tstore.engine as eng
    real = eng.TStoreEngine._read_data

    def broken(self, m, w, wq, rq):
        real(self, m, w, wq, rq)
        m.d.comb += self.tile_rd.word.eq((w.tile_off >> self.log2_w) ^ 1)    # the last wins
    monkeypatch.setattr(eng.TStoreEngine, "_read_data", broken)
    code = main(["run", "examples/kernel.s", *KREGS, "--backend", "amaranth"])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    assert "amaranth (W=32): MISMATCH" in out
    assert ("after line 10 (TSTORE.ND2NZ <LB0:32, LB1:32, LB2:32, S16>, U#1, [a2]): global "
            "memory byte 0x") in out
    assert "(row 0, element " in out
