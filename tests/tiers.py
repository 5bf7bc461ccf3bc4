"""The test tiers (docs/verification.md): ``make test`` runs every test not marked ``slow``;
``make check`` (and CI) runs them all.  A case goes to the slow tier when another case of the
test tier already exercises the same code on the same simulator (a wider beat of a harness
whose sequencing does not depend on W, a second simulator of a flow both run alike, a
Verilator build that no fast test needs), never when it is the only check of something;
every test under tests/hdl/ -- the tests the mutation runner meets -- stays in the test tier.
"""

import pytest

SLOW = pytest.mark.slow


def slow(*values, **kw):
    """One case of a ``parametrize`` list, in the slow tier."""
    return pytest.param(*values, marks=SLOW, **kw)


def tiered(values, is_slow):
    """The cases ``values`` (tuples for several arguments), each in the slow tier when
    ``is_slow(*case)``."""
    out = []
    for v in values:
        args = v if isinstance(v, tuple) else (v,)
        out.append(pytest.param(*args, marks=SLOW) if is_slow(*args) else pytest.param(*args))
    return out
