"""The one rule for a question answered with a cancel the moment it arrived (a headless client)."""

from __future__ import annotations

from wiretap.analysis.headless import AT_ONCE, cancelled_at_once


def test_a_cancel_within_the_bound_with_no_poll_between_is_at_once() -> None:
    assert cancelled_at_once(1.000, 1.000 + AT_ONCE, True, [])
    assert cancelled_at_once(1.000, 1.042, True, [])


def test_a_headless_client_on_a_loaded_machine_that_takes_a_third_of_a_second_still_cancels_at_once() -> None:
    assert cancelled_at_once(5.670, 6.000, True, [])


def test_a_cancel_after_the_bound_is_a_person_declining() -> None:
    assert not cancelled_at_once(1.000, 1.001 + AT_ONCE, True, [])


def test_a_poll_inside_the_window_means_the_client_kept_the_question_open() -> None:
    assert not cancelled_at_once(1.000, 1.040, True, [1.020])


def test_an_answer_or_a_question_still_open_is_not_a_cancel_at_once() -> None:
    assert not cancelled_at_once(1.000, 1.010, False, [])
    assert not cancelled_at_once(1.000, None, True, [])
