"""A distribution fed a list at once holds what it holds when fed the same values one by one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiretap.analysis import stats
from wiretap.analysis.stats import Distribution

LIMIT = 20
"""A small exact part, so that short lists cross it."""

times = st.floats(min_value=0.0, max_value=1e4, allow_nan=False) | st.sampled_from([0.0, 0.2, 0.5, 1.0])


def state(distribution: Distribution) -> tuple[object, ...]:
    quantiles = [distribution.quantile(q) for q in (0.0, 0.25, 0.5, 0.95, 1.0)]
    return distribution.count, distribution.min, distribution.max, quantiles, distribution.summary()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(times, max_size=3 * LIMIT), max_size=6))
def test_extending_with_lists_is_adding_their_values_one_by_one(chunks: list[list[float]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats, "EXACT_LIMIT", LIMIT)
        at_once, one_by_one = Distribution(), Distribution()
        for chunk in chunks:
            at_once.extend(chunk)
            for value in chunk:
                one_by_one.add(value)
        assert state(at_once) == state(one_by_one)
