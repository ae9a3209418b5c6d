"""The replay's tasks-only pass reconstructs every task exactly as the full report's analyses do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import paths

from wiretap.analysis.report import Analysis
from wiretap.analysis.task import Task
from wiretap.analysis.task_pass import TaskPass
from wiretap.recording.reader import open_recording

RECORDINGS = sorted((paths.RECORDINGS).glob("*.jsonl"))


def _fields(task: Task) -> dict[str, Any]:
    fields = {name: value for name, value in vars(task).items() if name != "polls"}
    polls = task.polls
    # bytes, not floats: a poll not answered is NaN, which equals nothing
    return fields | {"polls": (polls.times.tobytes(), polls.answered.tobytes(), polls.errors)}


def _both(path: Path) -> tuple[dict[str, Task], dict[str, Task]]:
    analysis, tasks = Analysis(), TaskPass()
    with open_recording(path) as reader:
        for event in reader.events():
            analysis.feed(event)
            tasks.feed(event)
    analysis.tasks.finish(analysis.exits.end_t)
    return dict(analysis.tasks.tasks), tasks.finish()


def test_the_shipped_recordings_hold_tasks_to_compare() -> None:
    assert sum(len(_both(path)[1]) for path in RECORDINGS) >= 5


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.stem)
def test_the_tasks_only_pass_finds_the_same_tasks_in_the_same_states_as_the_report(path: Path) -> None:
    full, alone = _both(path)
    assert list(alone) == list(full)
    for key, task in full.items():
        assert _fields(alone[key]) == _fields(task), key
