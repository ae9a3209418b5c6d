"""The investigation model from the shipped reproductions, whose schedules are known
(tests/scenarios/mcp_task_client.py)."""

from __future__ import annotations

from pathlib import Path

from support import paths
from support.check_fixtures import task_recording

from wiretap.analysis.model import TaskRow
from wiretap.analysis.report import build_report
from wiretap.lab.investigation import build_investigation
from wiretap.lab.investigation_model import Row
from wiretap.lab.investigation_output import render_markdown

RECORDINGS = paths.RECORDINGS


def rows(name: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for row in build_investigation(build_report(RECORDINGS / f"{name}.jsonl")).rows:
        found.setdefault(row.condition, []).append(row)
    return found


def test_the_polling_reproduction_polls_at_the_asked_3_s_as_its_rule() -> None:
    [poll] = rows("cc-ext-polling")["polling"]
    assert poll.asked == "pollIntervalMs 3000" and poll.verdict == "the asked interval: as its rule (4 ms off)"
    assert poll.agrees is True
    assert [round(t, 1) for t in poll.evidence] == [0.3, 3.3, 6.3, 9.3]


def test_the_form_reproduction_has_no_polls_inside_and_one_update() -> None:
    [form] = rows("cc-ext-form")["open form"]
    assert "with 0 polls inside; answered by tasks/update" in form.did
    assert form.verdict == "stops polling while the form is open" and form.agrees is True
    assert abs(form.evidence[0] - 8.80) < 0.02 and abs(form.evidence[1] - 48.78) < 0.02


def test_the_headless_reproduction_cancels_in_the_same_tick() -> None:
    [headless] = rows("cc-ext-headless")["headless question"]
    assert headless.verdict.startswith("cancels at input_required") and headless.agrees is True
    assert headless.evidence[1] - headless.evidence[0] <= 0.01


def test_exit_with_a_live_task_and_no_cancel() -> None:
    [leaving] = rows("exit-no-cancel")["exit"]
    assert leaving.verdict == "no cancel on exit with a live task" and leaving.asked == "1 tasks, 1 live at exit"
    assert leaving.agrees is True and "the server exited with code 0, 0.30 s after the client left" in leaving.did
    [calm] = rows("cc-ext-polling")["exit"]
    assert calm.verdict == "no live task at exit" and calm.asked == "1 tasks, 0 live at exit"


def test_an_a2a_recording_has_no_applied_rule_and_renders_as_a_markdown_table() -> None:
    investigation = build_investigation(build_report(RECORDINGS / "a2a-backoff.jsonl"))
    text = render_markdown(investigation)
    assert "Claude Code" not in text and "| polling (A2A) |" in text and "no known rule for this client" in text
    assert "How does it back off and give up on a silent A2A worker?" in text


def polled(tmp_path: Path, times: list[float]) -> tuple[Row, TaskRow]:
    """The polling row and the task of Claude Code polling one task that asked for 1000 ms at ``times``."""
    report = build_report(task_recording(tmp_path / "polled.jsonl", times, asked_ms=1000, client="claude-code"))
    [row] = [r for r in build_investigation(report).rows if r.condition == "polling"]
    [task] = report.tasks
    return row, task


def test_a_client_whose_timers_run_late_on_a_busy_machine_still_polls_as_its_rule(tmp_path: Path) -> None:
    row, task = polled(tmp_path, [1.2, 2.6, 3.72, 4.74, 5.91])
    assert task.settled_interval == 1.145 and task.settled_floor == 1.02
    assert row.agrees is True
    late = "its timers ran 145 ms late at the median, a busy machine"
    assert row.verdict == f"the asked interval: as its rule (20 ms off); {late}"


def test_a_client_that_never_polls_as_fast_as_its_rule_disagrees_however_steady(tmp_path: Path) -> None:
    row, task = polled(tmp_path, [1.2, 2.35, 3.5, 4.65, 5.8])
    assert task.settled_floor == 1.15 and row.agrees is False
    assert row.verdict == "the asked interval: not as its rule (150 ms off)"


def test_a_client_backing_off_is_judged_by_where_it_settles_not_its_first_interval(tmp_path: Path) -> None:
    row, task = polled(tmp_path, [1.2, 2.2, 3.7, 5.95, 9.33, 12.7])
    assert task.settled_floor == 3.37 and row.agrees is False
