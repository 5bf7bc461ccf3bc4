"""Every command of README.md and docs/*.md runs as written, and prints what the page shows.

A command is a line of a ```console block that starts with ``$ `` (a trailing ``\\`` joins
the next line). The lines after it, up to the next command, are its output as shown: each
shown line without ``...`` must be a line of what the command prints (stdout or stderr); a
``...`` line elides. The command must exit 0, or the status its comment names
(``# exit 3``). ``tilecosim`` commands run in a scratch folder that holds the repository's
``examples/``, so what they write stays out of the repository; ``make`` commands are checked
with ``make -n`` (the targets exist and their recipes expand) -- ``make test`` cannot run
itself. The pages must also stand alone: no path outside the repository, and every relative
link resolves.
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from .cli.test_cli import _command
from .tiers import tiered

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _commands():
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        in_block = False
        cmd = None
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                if in_block and cmd:
                    found.append(cmd)
                cmd = None
                in_block = line.strip() == "```console"
                continue
            if not in_block:
                continue
            if cmd and cmd["text"].endswith("\\"):
                cmd["text"] = cmd["text"][:-1] + " " + line.strip()
                continue
            if line.startswith("$ "):
                if cmd:
                    found.append(cmd)
                cmd = {"page": page.relative_to(ROOT), "line": n, "text": line[2:].strip(),
                       "shown": []}
            elif cmd is not None:
                cmd["shown"].append(line.rstrip())
    return found


COMMANDS = _commands()


def test_the_pages_have_commands():
    pages = {str(c["page"]) for c in COMMANDS}
    assert "README.md" in pages and "docs/cli.md" in pages
    assert len(COMMANDS) >= 30


#: a command that starts a Verilog simulator, writes or lints the Verilog of every top, starts a
#: Dask cluster, runs the formal tools or regresses the W = 128 engines is in the slow tier
#: (tests/tiers.py): each takes from several seconds to a minute, and its flow has fast tests
#: of its own in make test
SLOW_WORDS = ("icarus", "verilator", "tilecosim verilog", "--cluster", "--coverage",
              "tilecosim formal", "--width 128")


def is_slow(text: str) -> bool:
    return any(w in text for w in SLOW_WORDS) and "--list" not in text


@pytest.mark.parametrize("cmd", tiered(COMMANDS, lambda c: is_slow(c["text"])),
                         ids=[f"{c['page']}:{c['line']}" for c in COMMANDS])
def test_a_documented_command_runs_as_written(cmd, tmp_path):
    text = cmd["text"]
    m = re.search(r"#\s*exit (\d+)\s*$", text)
    want = int(m.group(1)) if m else 0
    argv = shlex.split(text, comments=True)
    if argv[0] == "make":
        r = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return
    assert argv[0] == "tilecosim", f"{cmd['page']}:{cmd['line']}: not a tilecosim command"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, COLUMNS="100")
    r = subprocess.run(_command() + argv[1:], cwd=tmp_path, capture_output=True, text=True,
                       timeout=900, env=env)
    where = f"{cmd['page']}:{cmd['line']}: {text}"
    assert r.returncode == want, f"{where}\nexit {r.returncode}\n{r.stdout[-2000:]}{r.stderr}"
    printed = {line.rstrip() for line in (r.stdout + r.stderr).splitlines()}
    for line in cmd["shown"]:
        if "..." in line or not line.strip():
            continue
        assert line in printed, f"{where}\nshown but not printed: {line!r}\n{r.stdout[-3000:]}"


def test_the_pages_point_inside_the_repository():
    for page in PAGES:
        text = page.read_text()
        assert "../shared" not in text and "/work/" not in text, page
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: link to {target} is broken"


def test_the_docs_name_their_public_sources():
    model = (ROOT / "docs" / "model.md").read_text()
    for source in ("Linx", "TLOAD", "Tile register", "LoadDataWithTranspose", "LoadAlign",
                   "PTO"):
        assert source in model, source
    design = (ROOT / "docs" / "design.md").read_text()
    for d in range(1, 17):
        assert f"**D{d} " in design and f"| D{d} |" in design, f"D{d}"


def test_every_decision_cited_is_in_the_design_page():
    """The code and the pages cite decisions as "D<n>" of docs/design.md; none cites a
    design file outside the repository (upper-case, as the workplace's was named)."""
    design = (ROOT / "docs" / "design.md").read_text()
    for path in [*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), ROOT / "pyproject.toml",
                 *(p for d in ("model", "hdl", "tilecosim", "tests") for p in
                   (ROOT / d).rglob("*.py"))]:
        text = path.read_text()
        assert "DESIGN" + ".md" not in text, path
        for n in set(re.findall(r"docs/design\.md D(\d+)", text)):
            assert f"**D{n} " in design, f"{path}: D{n}"


def _help_examples():
    import argparse
    from tilecosim.cli import build_parser
    top, _ = build_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    texts = [("tilecosim", top.description)] + [(n, p.description or "")
                                               for n, p in sub.choices.items()]
    found = []
    for name, text in texts:
        cmd = None
        for line in text.splitlines():
            if cmd is not None and cmd.endswith("\\"):
                cmd = cmd[:-1] + " " + line.strip()
                continue
            if cmd is not None:
                found.append((name, cmd))
                cmd = None
            stripped = line.strip()
            if stripped.startswith("tilecosim ") and line.startswith("  "):
                cmd = stripped
        if cmd is not None:
            found.append((name, cmd))
    return found


#: a help example that a page also shows runs once, as the page's command
HELP_EXAMPLES = [(n, t) for n, t in _help_examples()
                 if t not in {c["text"] for c in COMMANDS}]


@pytest.mark.parametrize("name,text", tiered(HELP_EXAMPLES, lambda n, t: is_slow(t)),
                         ids=[f"{n}:{k}" for k, (n, _) in enumerate(HELP_EXAMPLES)])
def test_a_help_example_runs_as_written(name, text, tmp_path):
    """The examples in ``--help`` run too (long ones -- regress, bench, mutation, formal -- are
    cut short by their own options in the example, or listed only)."""
    argv = shlex.split(text, comments=True)
    argv += {"regress": ["--count", "2"], "bench": ["--only", "golden"],
             "mutation": ["--list"], "formal": ["--only", "transpose-64-b64"]
             }.get(argv[1], [])                             # the last of an option wins
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    r = subprocess.run(_command() + argv[1:], cwd=tmp_path, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode in (0, 3), f"{name} --help: {text}\n{r.stdout[-2000:]}{r.stderr}"
