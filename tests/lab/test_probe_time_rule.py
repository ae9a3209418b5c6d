"""The rule the lab's real-peer tests hold wiretap's times to against a peer's own log."""

from __future__ import annotations

import pytest
from support.lab_probe_runs import CLOSE, HOP, assert_close

LOGGED = [0.3244, 1.4902, 1.6911, 1.8907]


def test_one_hop_a_busy_machine_delayed_passes_of_two_times_and_of_many() -> None:
    assert_close([0.325, 1.502], LOGGED[:2])
    assert_close([0.325, 1.502, 1.692, 1.891], LOGGED)


def test_an_offset_in_every_time_fails_even_when_each_is_within_a_hop() -> None:
    with pytest.raises(AssertionError, match="time 1: reported"):
        assert_close([t + 2 * CLOSE for t in LOGGED], LOGGED)


def test_a_single_time_further_than_a_hop_fails() -> None:
    with pytest.raises(AssertionError, match="poll 3"):
        assert_close([*LOGGED[:3], LOGGED[3] + HOP + 0.001], LOGGED, ["poll 0", "poll 1", "poll 2", "poll 3"])


def test_a_time_the_report_lacks_fails() -> None:
    with pytest.raises(AssertionError, match="reported None"):
        assert_close([0.325, None], LOGGED[:2])
