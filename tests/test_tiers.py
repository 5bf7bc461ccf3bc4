"""The test tiers: ``make test`` runs every test not marked ``slow`` (the inner loop), ``make
check`` runs them all (CI); the mutation runner's ``--tier test`` meets exactly the tests
``make test`` runs, so that measuring the inner loop's kill power measures the right set."""

import re
import shutil
from pathlib import Path

from tilecosim.flows.mutation import TIERS, _pytest

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str) -> str:
    """The first recipe line of a Makefile target."""
    m = re.search(rf"^{target}:.*\n\t(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert m, f"the Makefile has no target {target}"
    return m.group(1)


def test_make_test_runs_the_test_tier_and_make_check_everything():
    assert f'-m "{TIERS["test"]}"' in recipe("test")
    assert TIERS["check"] is None and not re.search(r"pytest.* -m ", recipe("check"))
    assert "pytest" in recipe("test") and "pytest" in recipe("check")


def test_ci_runs_make_check_which_readme_shows():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "make check" in ci
    readme = (ROOT / "README.md").read_text()
    assert "$ make check" in readme and "$ make test" in readme


def test_the_mutation_runners_tier_leaves_out_the_slow_tests(tmp_path):
    """A slow test that fails kills a mutant in the check tier, not in the test tier."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "test_probe.py").write_text(
        "import pytest\n\n"
        "def test_quick():\n    assert True\n\n"
        "@pytest.mark.slow\ndef test_long():\n    assert False\n")
    code, by = _pytest(["test_probe.py"], tmp_path, 1, 120, "test")
    assert code == 0, by
    code, by = _pytest(["test_probe.py"], tmp_path, 1, 120, "check")
    assert code in (1, 2) and by == "test_probe.py::test_long"      # 2: -x stopped the run
