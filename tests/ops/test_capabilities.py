"""The capabilities a design from elsewhere may declare (D16): every scenario a generator
draws has, for each capability key, a value its coverage bins allow -- so that a bin judged
not applicable to a subset is one no scenario inside the subset can hit."""

import random

import pytest

from tilecosim import ops


@pytest.mark.parametrize("name", [op.name for op in ops.REGISTRY
                                  if op.contract_module and op.regress])
def test_every_scenario_has_the_traits_its_bins_allow(name):
    op = ops.get(name)
    rng = random.Random(name)
    bins = op.bins()
    for k in range(600):
        item, fault, hit = op.draw(rng, bins[k % len(bins)] if k % 2 else None)
        traits = op.traits(item, fault)
        for key, value in traits.items():
            assert value in op.capabilities[key], (key, value)
        for b in hit:
            for key, allowed in op.bin_traits(b).items():
                if key in traits:
                    assert traits[key] in allowed, (b, key, traits[key], allowed)
