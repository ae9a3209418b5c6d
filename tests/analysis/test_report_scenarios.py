"""``wiretap report`` against scenarios of known truth, recorded through the real wiretap.

The scenarios (tests/scenarios/: mcp_task_client.py + mcp_task_server.py over ``wiretap tap``,
a2a_client.py + a2a_agent.py over ``wiretap proxy``) send every message at a known recording time; their
docstrings give the schedules. Each truth below is written from those schedules, not from the report,
and is checked twice: on the recording shipped in recordings/ (made by make_recordings.py; fast), and
on one recorded live while the tests run (the long ones are marked slow; every live recording is made
at once, in the background, so the whole file takes about as long as the longest scenario, 52 s).

On a shipped recording (whose schedule was kept to 10 ms) a time is within ``TOL`` of the schedule. On a
live one the schedule is only what the peers aimed at: a loaded machine makes them late. So the truth of a
live recording is what its client actually did, measured on its own side of the wire: for each time of
the schedule, the window in which that event certainly happened (from just before the bytes were sent to
when their answer, or the event in the recording, was seen; scenario_clock.py). A reported time must lie
in its window (give or take ``EPS``, the report's rounding); an interval, gap or latency between two
windows' differences; a median, minimum or maximum of intervals between those of the windows' bounds;
each figure of an interval pattern between its intervals' windows. That arithmetic is this file's own,
not wiretap's analysis. On a quiet machine a window is a few milliseconds wide; on a busy one it widens
as much as the machine was late, and the test still fails on a report that is wrong. States, finding
codes and counts are categorical and the same for both.

Where the report disagrees with the truth, the test says so and is marked xfail(strict=True).
"""

from __future__ import annotations

import json
import re
import stat
import statistics
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from scenarios import make_recordings
from support import paths
from support.report_schema import valid_report

from wiretap.analysis.report import build_report

REPO = paths.REPO
SHIPPED = REPO / "recordings"
TOL = 0.020
"""Seconds: how far a reported time or interval of a shipped recording may be from its schedule."""
EPS = 0.002
"""Seconds: how far a reported time of a live recording may be outside its measured window (the report
rounds to the millisecond, and an interval is the difference of two rounded times)."""
QUICK = 0.050
"""A cancel this soon after the question is "right after the question (headless client)"."""


@dataclass(frozen=True)
class Span:
    """A truth: the time or interval lies between ``lo`` and ``hi``, give or take ``tol`` (on a shipped
    recording ``lo == hi``, the schedule, and ``tol`` is ``TOL``)."""

    lo: float
    hi: float
    tol: float

    def __sub__(self, other: Span) -> Span:
        return Span(self.lo - other.hi, self.hi - other.lo, max(self.tol, other.tol))

    def holds(self, value: float, rounding: float = 0.0) -> bool:
        """``rounding``: the report printed the value to that many seconds either way."""
        tol = max(self.tol, EPS + rounding)
        return self.lo - tol <= value <= self.hi + tol

    def __str__(self) -> str:
        middle = f"{self.lo:.3f}" if self.lo == self.hi else f"[{self.lo:.4f}, {self.hi:.4f}]"
        return f"{middle} ± {self.tol}"


Truth = float | Span


def span(truth: Truth) -> Span:
    return truth if isinstance(truth, Span) else Span(truth, truth, TOL)


def near(actual: float | None, expected: Truth, what: str = "time", rounding: float = 0.0) -> None:
    truth = span(expected)
    assert actual is not None and truth.holds(actual, rounding), f"{what}: got {actual}, expected {truth}"


def all_near(actual: list[float], expected: list[Truth], what: str = "times") -> None:
    truths = [span(e) for e in expected]
    assert len(actual) == len(truths) and all(t.holds(a) for a, t in zip(actual, truths, strict=True)), (
        f"{what}: got {actual}, expected {[str(t) for t in truths]}"
    )


# -- the test's own arithmetic on truths ---------------------------------------------------------------


def gaps(times: list[Span]) -> list[Span]:
    return [b - a for a, b in pairwise(times)]


def least(spans: list[Span]) -> Span:
    return Span(min(s.lo for s in spans), min(s.hi for s in spans), max(s.tol for s in spans))


def most(spans: list[Span]) -> Span:
    return Span(max(s.lo for s in spans), max(s.hi for s in spans), max(s.tol for s in spans))


def middle(spans: list[Span]) -> Span:
    """The median of values each in its span lies between the medians of the bounds (a median, like any
    order statistic, never falls when one value rises)."""
    lo, hi = statistics.median(s.lo for s in spans), statistics.median(s.hi for s in spans)
    return Span(lo, hi, max(s.tol for s in spans))


def upper(spans: list[Span]) -> Span:
    """A quantile above the median (p95) lies between the median and the maximum."""
    return Span(middle(spans).lo, most(spans).hi, max(s.tol for s in spans))


def only(items: list[dict[str, Any]], what: str = "item") -> dict[str, Any]:
    assert len(items) == 1, f"expected exactly one {what}, got {len(items)}: {items}"
    return items[0]


def codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def states(task: dict[str, Any]) -> list[str]:
    return [s["state"] for s in task["states"]]


def runs(pattern: str) -> list[tuple[float, int]]:
    """A report's interval pattern ("1.00, 2.00, 4.00, 5.00 ×7 s") as (interval, repeats), with
    neighbours within TOL of each other merged (a few ms of jitter may show as 5.01 among 5.00s)."""
    merged: list[tuple[float, int]] = []
    for part in pattern.removesuffix(" s").split(", "):
        if part == "…":
            continue
        value, _, count = part.partition(" ×")
        interval, repeats = float(value), int(count or 1)
        if merged and abs(merged[-1][0] - interval) <= TOL:
            merged[-1] = (merged[-1][0], merged[-1][1] + repeats)
        else:
            merged.append((interval, repeats))
    return merged


def runs_near(pattern: str, expected: list[tuple[float, int]]) -> None:
    got = runs(pattern)
    assert [n for _, n in got] == [n for _, n in expected], f"pattern {pattern!r}: expected {expected}"
    all_near([v for v, _ in got], [v for v, _ in expected], f"pattern {pattern!r}")


def jitter(interval: float) -> float:
    """How far an interval may be from the first of its run in a pattern (the report's rule: 5 %, at least 5 ms)."""
    return max(0.005, 0.05 * interval)


def pattern_fits(pattern: str, intervals: list[Span]) -> None:
    """A live pattern ("1.00, 2.00, 4.00, 5.00 ×7 s") fits the intervals that happened: its runs cover
    every interval in order; a run's intervals can be within ``jitter`` of its first, and the next run's
    first can be further; each figure (one of its run's intervals) lies within them."""
    parts = [part.partition(" ×") for part in pattern.removesuffix(" s").split(", ")]
    counts = [int(count or 1) for _, _, count in parts]
    assert "…" not in pattern and sum(counts) == len(intervals), f"pattern {pattern!r}: {len(intervals)} intervals"
    start = 0
    for (value, _, _), count in zip(parts, counts, strict=True):
        run, first, slack = intervals[start : start + count], intervals[start], 2 * intervals[start].tol
        for member in run[1:]:
            closest = max(member.lo - first.hi, first.lo - member.hi, 0.0)
            assert closest <= jitter(first.hi) + slack, f"pattern {pattern!r}: {member} cannot join a run from {first}"
        if start + count < len(intervals):
            after = intervals[start + count]
            furthest = max(after.hi - first.lo, first.hi - after.lo)
            assert furthest + slack > jitter(first.lo), f"pattern {pattern!r}: {after} would join the run of {first}"
        near(float(value), Span(least(run).lo, most(run).hi, first.tol), f"pattern {pattern!r}", rounding=0.005)
        start += count


def ratio(verdict: str) -> float:
    """The "N.NN× the requested interval" of a poll verdict."""
    match = re.search(r"([0-9.]+)× the requested interval", verdict)
    assert match, verdict
    return float(match.group(1))


def ratio_near(verdict: str, median: Span, requested_s: float) -> None:
    got = ratio(verdict)
    assert median.lo / requested_s - 0.01 <= got <= median.hi / requested_s + 0.01, f"{verdict}: median {median}"


# -- recordings: shipped, or made live -------------------------------------------------------------


class LiveRecordings:
    """Every live recording this run needs, made at once in the background (long ones first)."""

    def __init__(self, directory: Path, names: list[str]) -> None:
        names = sorted(names, key=lambda name: name not in make_recordings.LONG)
        self.pool = ThreadPoolExecutor(max_workers=6)
        # Once each: however late the machine made the peers, their summary says when things happened.
        self.futures: dict[str, Future[dict[str, Any]]] = {
            name: self.pool.submit(make_recordings.record, name, directory / f"{name}.jsonl") for name in names
        }

    def get(self, name: str) -> dict[str, Any]:
        return self.futures[name].result(timeout=300)


@pytest.fixture(scope="module")
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRecordings]:
    wanted = {
        item.callspec.params["case"][0]
        for item in request.session.items
        if item.module is request.module
        and hasattr(item, "callspec")
        and isinstance(item.callspec.params.get("case"), tuple)
        and item.callspec.params["case"][1] == "live"
    }
    recordings = LiveRecordings(tmp_path_factory.mktemp("live"), list(wanted))
    yield recordings
    recordings.pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class Case:
    name: str
    report: dict[str, Any]
    path: Path
    actual: dict[str, list[float]] | None
    """A live recording's windows of what happened, by the scheduled time (None for a shipped one)."""

    @property
    def live(self) -> bool:
        return self.actual is not None

    def at(self, t: float) -> Span:
        """The truth of what the scenario schedules at ``t``."""
        if self.actual is None:
            return Span(t, t, TOL)
        window = self.actual.get(f"{t:.3f}")
        assert window is not None, f"{self.name}: the scenario did not say when its {t:.3f} s event happened"
        return Span(window[0], window[1], EPS)

    def each(self, times: list[float]) -> list[Span]:
        return [self.at(t) for t in times]

    def pattern(self, pattern: str, intervals: list[Span], shipped: list[tuple[float, int]]) -> None:
        """A shipped recording shows the schedule's runs; a live one, runs that fit what happened."""
        if self.live:
            pattern_fits(pattern, intervals)
        else:
            runs_near(pattern, shipped)


def scenario(name: str) -> pytest.MarkDecorator:
    """Run a test on the shipped recording of ``name`` and on a live one (slow if the scenario is long)."""
    live_marks = [pytest.mark.slow] if name in make_recordings.LONG else []
    return pytest.mark.parametrize(
        "case",
        [
            pytest.param((name, "shipped"), id="shipped"),
            pytest.param((name, "live"), id="live", marks=live_marks),
        ],
        indirect=True,
    )


@pytest.fixture
def case(request: pytest.FixtureRequest) -> Case:
    name, source = request.param
    if source == "shipped":
        path = SHIPPED / f"{name}.jsonl"
        return Case(name, valid_report(build_report(path).to_dict()), path, None)
    summary = request.getfixturevalue("live").get(name)
    path = Path(summary["recording"])
    return Case(name, valid_report(build_report(path).to_dict()), path, summary["actual"])


def shipped(name: str) -> dict[str, Any]:
    return valid_report(build_report(SHIPPED / f"{name}.jsonl").to_dict())


# -- 1. Claude Code 2.1.310 and the 2026-07-28 tasks extension ------------------------------------


@scenario("cc-ext-polling")
def test_claude_code_polls_the_extension_task_every_3_s_as_the_server_asked(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["protocol"], task["design"], task["tool"]) == ("mcp", "mcp-tasks-extension", "run_migration")
    assert (task["requested_poll_ms"], task["applied_poll_ms"]) == (3000, 3000)
    created, polls = case.at(0.32), case.each([3.32, 6.32, 9.32, 12.32, 15.32])
    intervals = gaps(polls)
    near(task["created_at"], created, "created")
    all_near(task["polls"], polls, "polls")
    near(task["first_poll_after"], polls[0] - created, "first poll after")
    assert task["intervals"]["count"] == 4
    for key, truth in (("min", least), ("median", middle), ("p95", upper), ("max", most)):
        near(task["intervals"][key], truth(intervals), f"interval {key}")
    case.pattern(task["pattern"], intervals, [(3.00, 4)])
    assert states(task) == ["working", "completed"]
    near(task["states"][1]["t"], polls[-1], "completed")
    assert (task["final_state"], task["terminal"], task["live_at_client_exit"]) == ("completed", True, False)
    verdict = r["verdicts"]["poll_intervals"]
    near(verdict["median_interval"], middle(intervals), "median interval")
    assert verdict["requested_poll_ms"] == 3000
    ratio_near(verdict["verdict"], middle(intervals), 3.0)
    assert r["questions"] == [] and r["findings"] == []
    assert r["client_exit"]["how"] == "stdin closed"
    near(r["client_exit"]["t"], case.at(15.50), "client exit")
    assert r["verdicts"]["cancel_on_exit"]["live_tasks"] == []


def test_the_interval_pattern_reads_3_00_x4_when_every_interval_is_3_00_to_a_few_ms() -> None:
    task = only(shipped("cc-ext-polling")["tasks"], "task")
    intervals = [b - a for a, b in zip(task["polls"], task["polls"][1:], strict=False)]
    all_near(intervals, [3.00] * 4, "intervals")  # the truth: every interval is 3.00 s
    if all(f"{interval:.2f}" == "3.00" for interval in intervals):
        pytest.skip("no interval of this recording rounds away from 3.00: nothing to show")
    assert task["pattern"] == "3.00 ×4 s"


def test_a_live_truth_rejects_a_figure_outside_what_the_peers_measured() -> None:
    polls = [Span(t, t + 0.004, EPS) for t in (0.80, 1.80, 3.80, 7.80, 12.80)]  # sent .. answered, 4 ms apart
    intervals = gaps(polls)
    pattern_fits("1.00, 2.00, 4.00, 5.00 s", intervals)
    for wrong in ("1.00, 2.00, 4.00 ×2 s", "1.00, 2.00, 4.00, 5.02 s", "1.00, 2.00, 4.00 s", "1.00, 2.00 ×2, 5.00 s"):
        with pytest.raises(AssertionError):
            pattern_fits(wrong, intervals)
    near(3.002, middle(intervals), "median")
    near(5.0, most(intervals), "max")
    for wrong, truth in ((3.01, middle(intervals)), (0.81, polls[0]), (0.79, polls[0]), (0.98, least(intervals))):
        with pytest.raises(AssertionError):
            near(wrong, truth)


@scenario("cc-ext-form")
def test_while_the_form_was_open_claude_code_did_not_poll_for_39_98_s_and_answered_with_one_tasks_update(
    case: Case,
) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["design"], task["requested_poll_ms"], task["applied_poll_ms"]) == ("mcp-tasks-extension", 3000, 3000)
    working, form, update, done = case.each([5.80, 8.80, 48.78, 51.78])
    all_near(task["polls"], [working, form, done], "polls")
    assert states(task) == ["working", "input_required", "completed"]
    all_near([s["t"] for s in task["states"]], [case.at(2.80), form, done], "state times")
    assert [a["via"] for a in task["answers"]] == ["tasks/update"]
    near(task["answers"][0]["t"], update, "tasks/update")
    question = only(r["questions"], "question")
    assert (question["kind"], question["task"]) == ("task_input_required", task["id"])
    near(question["opened"], form, "question opened")
    near(question["closed"], update, "question closed")
    assert question["polls_inside"] == []
    near(question["longest_gap"], update - form, "longest gap")
    all_near(question["longest_gap_between"], [form, update], "longest gap between")
    near(question["cadence_outside"], form - working, "cadence outside")
    assert (question["answered_by"], question["cancelled_instead"]) == ("tasks/update", False)
    verdict = r["verdicts"]["elicitation_gaps"]
    near(verdict["longest_gap"], update - form, "verdict longest gap")
    assert "with 0 polls inside" in verdict["verdict"] and "answered by tasks/update" in verdict["verdict"]
    assert r["findings"] == []
    near(r["client_exit"]["t"], case.at(52.00), "client exit")


def test_the_poll_interval_verdict_of_the_interactive_session_is_the_3_s_cadence_not_the_form_gap() -> None:
    verdict = shipped("cc-ext-form")["verdicts"]["poll_intervals"]
    near(verdict["median_interval"], 3.00, "median interval")
    assert abs(ratio(verdict["verdict"]) - 1.00) <= 0.01


def test_the_open_form_is_listed_with_its_two_input_request_keys() -> None:
    question = only(shipped("cc-ext-form")["questions"], "question")
    assert sorted(question["keys"]) == ["confirm_downtime", "environment"]


@scenario("cc-ext-headless")
def test_headless_claude_code_cancels_the_task_in_the_same_tick_as_the_input_required_poll(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    form, cancelled = case.at(6.32), case.at(6.325)
    all_near(task["polls"], [case.at(3.32), form], "polls")
    assert states(task) == ["working", "input_required"]
    cancel = only(task["cancels"], "cancel")
    assert cancel["via"] == "tasks/cancel"
    input_required_at = task["states"][1]["t"]
    near(input_required_at, form, "input_required")
    question = only(r["questions"], "question")
    near(question["opened"], form, "question opened")
    assert question["closed"] is not None and question["cancelled_instead"] is True and question["polls_inside"] == []
    reaction = cancelled - form
    if case.live:  # the client cancels as soon as the answer is in: how soon is what the machine allowed
        near(cancel["t"] - input_required_at, reaction, "cancel after input_required")
        near(question["closed"] - question["opened"], reaction, "question open for")
    else:
        assert 0 <= cancel["t"] - input_required_at < 0.010, (cancel, input_required_at)
        assert question["closed"] - question["opened"] < 0.010
    assert cancel["t"] >= input_required_at
    right_after = "tasks/cancel, right after the question (headless client)"
    if reaction.hi + reaction.tol <= QUICK:
        assert question["answered_by"] == right_after
    elif reaction.lo - reaction.tol > QUICK:
        assert question["answered_by"] == "tasks/cancel"
    else:  # the client's reaction straddles the threshold: either reading is true to what happened
        assert question["answered_by"] in (right_after, "tasks/cancel")
    exits = r["verdicts"]["cancel_on_exit"]
    # The cancel was sent and answered before the exit: the task was over, and the cancel answered the question.
    assert task["live_at_client_exit"] is False
    assert (exits["live_tasks"], exits["cancelled"], exits["sent"]) == ([], [], None)
    assert "the moment a question opened" in exits["verdict"] and "on its way out" not in exits["verdict"]
    assert "cancelled at once by tasks/cancel" in r["verdicts"]["elicitation_gaps"]["verdict"]
    near(r["client_exit"]["t"], case.at(6.50), "client exit")
    assert r["findings"] == []


# -- 2, 3. A2A polling ------------------------------------------------------------------------------


@scenario("a2a-backoff")
def test_an_a2a_client_backing_off_0_5_1_2_4_then_5_s_shows_that_pattern(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["protocol"], task["design"]) == ("a2a", "a2a-1.0")
    assert (task["requested_poll_ms"], task["applied_poll_ms"]) == (None, None)
    created = case.at(0.30)
    polls = case.each([0.80, 1.80, 3.80, 7.80, 12.80, 17.80, 22.80, 27.80, 32.80, 37.80, 42.80])
    intervals = gaps(polls)
    near(task["created_at"], created, "created")
    near(task["first_poll_after"], polls[0] - created, "first poll after")
    all_near(task["polls"], polls, "polls")
    case.pattern(task["pattern"], intervals, [(1.00, 1), (2.00, 1), (4.00, 1), (5.00, 7)])
    assert task["intervals"]["count"] == 10
    near(task["intervals"]["min"], least(intervals), "min interval")
    near(task["intervals"]["median"], middle(intervals), "median interval")
    near(task["intervals"]["max"], most(intervals), "max interval")
    assert states(task) == ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    all_near([s["t"] for s in task["states"]], [created, polls[0], polls[-1]], "state times")
    near(r["verdicts"]["poll_intervals"]["median_interval"], middle(intervals), "verdict median")
    assert r["findings"] == []
    assert r["client_exit"]["how"] == "last connection closed"
    near(r["client_exit"]["t"], case.at(43.00), "client exit")


@scenario("a2a-rejected-loop")
def test_polling_a_rejected_a2a_task_8_more_times_is_one_poll_after_terminal_finding_counting_8(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    polls = case.each([round(0.80 + 0.5 * n, 2) for n in range(9)])
    all_near(task["polls"], polls, "polls")
    assert states(task) == ["TASK_STATE_SUBMITTED", "TASK_STATE_REJECTED"]
    near(task["states"][1]["t"], polls[0], "rejected")
    assert task["terminal"] is True
    assert codes(r) == ["poll-after-terminal", "task-rejected"]
    rejected = r["findings"][1]
    assert (rejected["severity"], rejected["task"]) == ("warning", task["id"])
    assert "I only book travel" in rejected["message"]
    near(rejected["times"][0], polls[0], "rejected finding")
    finding = r["findings"][0]
    assert (finding["severity"], finding["count"], finding["task"]) == ("error", 8, task["id"])
    all_near(finding["times"], [polls[1], polls[-1]], "finding times")


# -- 4. MCP 2025-11-25 core tasks --------------------------------------------------------------------


@scenario("core-tasks")
def test_core_tasks_are_followed_from_params_task_through_the_elicitation_to_completion(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["design"], task["requested_poll_ms"], task["applied_poll_ms"]) == ("mcp-2025-11-25", 1000, 1000)
    created, first, form, asked, answered, done = case.each([0.30, 1.30, 2.30, 2.40, 5.40, 5.90])
    near(task["created_at"], created, "created")
    all_near(task["polls"], [first, form], "polls")
    assert states(task) == ["working", "input_required", "working", "completed"]
    all_near([s["t"] for s in task["states"]], [created, form, answered, done], "state times")
    assert [a["via"] for a in task["answers"]] == ["elicitation accept"]
    near(task["answers"][0]["t"], answered, "answer")
    assert (task["final_state"], task["live_at_client_exit"]) == ("completed", False)
    question = only(r["questions"], "question")
    assert (question["kind"], question["task"]) == ("task_input_required", task["id"])
    near(question["opened"], form, "question opened")
    near(question["closed"], answered, "question closed")
    assert question["polls_inside"] == []
    near(question["longest_gap"], answered - form, "longest gap")
    near(question["cadence_outside"], form - first, "cadence outside")
    assert question["answered_by"] == "elicitation accept"
    latency = {row["method"]: row for row in r["latency"]}
    assert latency["elicitation/create"]["count"] == 1  # the string id "task-<id>-1" was paired
    near(latency["elicitation/create"]["p50_ms"] / 1000, answered - asked, "elicitation answered after")
    near(latency["tasks/result"]["p50_ms"] / 1000, done - asked, "tasks/result answered after")
    assert r["findings"] == []


# -- 5. Cancel on exit -------------------------------------------------------------------------------


@scenario("exit-no-cancel")
def test_a_client_that_closes_stdin_with_a_working_task_did_not_cancel_it_and_the_server_left_0_30_s_later(
    case: Case,
) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["final_state"], task["live_at_client_exit"], task["cancels"]) == ("working", True, [])
    assert r["client_exit"]["how"] == "stdin closed"
    near(r["client_exit"]["t"], case.at(1.50), "client exit")
    assert (r["server_exit"]["how"], r["server_exit"]["status"]) == ("exited with code 0", 0)
    near(r["server_exit"]["after_client_exit"], case.at(1.80) - case.at(1.50), "server exit after the client's")
    verdict = r["verdicts"]["cancel_on_exit"]
    assert (verdict["live_tasks"], verdict["cancelled"], verdict["sent"]) == ([task["id"]], [], False)
    assert "cancelled none" in verdict["verdict"]
    assert r["findings"] == []


@scenario("exit-cancel")
def test_a_client_that_cancels_its_task_before_closing_stdin_is_seen_cancelling_it(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert task["cancels"] == [{"t": task["cancels"][0]["t"], "via": "tasks/cancel"}]
    near(task["cancels"][0]["t"], case.at(1.50), "tasks/cancel")
    assert states(task) == ["working", "cancelled"]
    near(r["client_exit"]["t"], case.at(1.60), "client exit")
    assert r["findings"] == []


def test_the_cancel_on_exit_verdict_credits_a_cancel_sent_just_before_exiting() -> None:
    r = shipped("exit-cancel")
    task = only(r["tasks"], "task")
    verdict = r["verdicts"]["cancel_on_exit"]
    assert (verdict["cancelled"], verdict["sent"]) == ([task["id"]], True)


# -- 6. Findings, each reproduced once -----------------------------------------------------------------


@scenario("a2a-unspecified")
def test_an_unspecified_a2a_state_is_an_unknown_task_state_finding(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert states(task) == ["TASK_STATE_SUBMITTED", "TASK_STATE_UNSPECIFIED", "TASK_STATE_COMPLETED"]
    assert codes(r) == ["unknown-task-state"]
    finding = r["findings"][0]
    assert finding["task"] == task["id"] and "TASK_STATE_UNSPECIFIED" in finding["message"]
    all_near(finding["times"], [case.at(0.80)], "finding times")


@scenario("a2a-03-in-10")
def test_each_a2a_0_3_state_name_inside_a_1_0_exchange_is_a_finding(case: Case) -> None:
    r = case.report
    assert codes(r) == ["a2a-0.3-state-in-1.0"] * 3
    for finding, state, t in zip(r["findings"], ("submitted", "working", "completed"), (0.30, 0.80, 1.30), strict=True):
        assert f"'{state}'" in finding["message"]
        all_near(finding["times"], [case.at(t)], f"{state} finding times")
    assert only(r["tasks"], "task")["terminal"] is True


@scenario("a2a-terminal")
def test_a_message_and_a_cancel_sent_to_a_completed_a2a_task_are_requests_to_a_terminal_task(case: Case) -> None:
    r = case.report
    assert codes(r) == ["request-to-terminal-task"] * 2
    message, cancel = r["findings"]
    assert "SendMessage" in message["message"] and "-32004" in message["message"]
    all_near(message["times"], case.each([1.30, 1.30]), "SendMessage finding")
    assert "CancelTask" in cancel["message"] and "-32002" in cancel["message"]
    all_near(cancel["times"], case.each([1.80, 1.80]), "CancelTask finding")


@scenario("task-without-support")
def test_a_task_returned_to_a_client_that_did_not_declare_the_extension_is_a_finding(case: Case) -> None:
    r = case.report
    assert codes(r) == ["task-without-client-support"]
    finding = r["findings"][0]
    assert (finding["severity"], finding["task"]) == ("error", "tsk-unasked")
    all_near(finding["times"], case.each([0.30, 0.30]), "finding times")


@scenario("unknown-task")
def test_polling_on_after_task_not_found_is_a_polling_unknown_task_finding(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    all_near(task["polls"], case.each([0.80, 1.30, 1.80]), "polls")
    assert task["failed_polls"] == 2
    assert codes(r) == ["polling-unknown-task"]
    all_near(r["findings"][0]["times"], case.each([1.30, 1.80]), "finding times")


def test_a_task_the_server_no_longer_knows_is_not_live_when_the_client_exits() -> None:
    r = shipped("unknown-task")
    assert only(r["tasks"], "task")["live_at_client_exit"] is False
    assert r["verdicts"]["cancel_on_exit"]["live_tasks"] == []


@scenario("repeat-after-unknown")
def test_repeating_a_tools_call_after_a_timeout_error_is_a_finding(case: Case) -> None:
    r = case.report
    assert r["tasks"] == []
    assert codes(r) == ["repeated-after-unknown-outcome"]
    all_near(r["findings"][0]["times"], case.each([0.30, 3.30]), "finding times")


@scenario("slow-poll")
def test_a_poll_answered_after_15_10_s_is_a_slow_poll_finding(case: Case) -> None:
    r = case.report
    assert codes(r) == ["slow-poll"]
    finding = r["findings"][0]
    asked, answered = case.each([0.50, 15.60])
    all_near(finding["times"], [asked, answered], "finding times")
    waited = re.search(r"answered after ([0-9.]+) s", finding["message"])
    assert waited, finding["message"]
    near(float(waited.group(1)), answered - asked, "answered after", rounding=0.005)


@scenario("failed-poll-run")
def test_three_failed_polls_in_a_row_are_a_failed_poll_run_finding(case: Case) -> None:
    r = case.report
    task = only(r["tasks"], "task")
    assert (task["failed_polls"], task["final_state"]) == (3, "completed")
    assert codes(r) == ["failed-poll-run"]
    all_near(r["findings"][0]["times"], case.each([0.80, 1.80]), "finding times")


@scenario("unanswered")
def test_requests_never_answered_in_either_direction_are_findings(case: Case) -> None:
    r = case.report
    assert codes(r) == ["unanswered-request"] * 3
    messages = [f["message"] for f in r["findings"]]
    assert messages == [
        "tools/call #5 never got a response",
        "roots/list #roots-1 never got a response",
        "resources/read #6 never got a response",
    ]
    all_near([f["times"][0] for f in r["findings"]], case.each([0.30, 0.30, 0.50]), "finding times")


# -- the command line, and the shipped files -----------------------------------------------------------


def wiretap_report(path: Path, *options: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "report", str(path), *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_wiretap_report_format_json_prints_the_same_report_for_ci() -> None:
    path = SHIPPED / "cc-ext-form.jsonl"
    printed = json.loads(wiretap_report(path, "--format", "json"))
    assert printed == build_report(path).to_dict()
    near(printed["questions"][0]["longest_gap"], 39.98, "longest gap")


def markdown_row(markdown: str, first_cell: str) -> list[str]:
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row starting {first_cell!r} in:\n{markdown}")


def test_wiretap_report_format_markdown_shows_the_open_form_and_the_findings() -> None:
    form = wiretap_report(SHIPPED / "cc-ext-form.jsonl", "--format", "markdown")
    assert form.startswith("## wiretap report: cc-ext-form (stdio, ")
    assert "**Polling while a question was open.** While a question was open" in form
    assert "### Open questions" in form and "### Tasks" in form
    _, task, opened, closed, inside, gap, _between, cadence, answered = markdown_row(form, "task_input_required")
    assert task == "tsk-8a41e07b" and inside == "0" and answered == "tasks/update"
    for cell, expected in ((opened, 8.80), (closed, 48.78), (gap, 39.98), (cadence, 3.00)):
        near(float(cell), expected, f"markdown cell {cell}")
    loop = wiretap_report(SHIPPED / "a2a-rejected-loop.jsonl", "--format", "markdown")
    _, code, times, *_ = markdown_row(loop, "error")
    assert code == "poll-after-terminal" and times.endswith("(×8)")
    all_near([float(t) for t in times.removesuffix(" (×8)").split(", ")], [1.30, 4.80], "markdown times")


def test_wiretap_report_text_is_the_default_and_states_the_verdicts() -> None:
    text = wiretap_report(SHIPPED / "exit-no-cancel.jsonl")
    assert "Cancel on exit: The client went away at 1.50 s (stdin closed) with 1 live task and cancelled none" in (text)
    assert "task task-exit-1 was working: never cancelled" in text


def test_every_scenario_has_a_shipped_recording_that_is_small_readable_and_listed_in_the_readme() -> None:
    readme = (SHIPPED / "README.md").read_text()
    assert "`demo.jsonl`" in readme
    for name in make_recordings.SCENARIOS:
        path = SHIPPED / f"{name}.jsonl"
        assert path.stat().st_size < 32_000, path
        assert stat.S_IMODE(path.stat().st_mode) & 0o444 == 0o444, path
        assert f"`{name}.jsonl`" in readme, name
