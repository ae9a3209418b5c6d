"""A text or Markdown report of a busy recording shows the first rows of each table and says how many it
left out; the JSON report keeps every row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from wiretap.render.report_text import EVIDENCE_SHOWN
from wiretap.render.tables import ROWS_SHOWN

TASKS = ROWS_SHOWN + 17


def busy_recording(path: Path) -> Path:
    """TASKS tasks created by tools/call and polled three times each."""
    header = {"kind": "header", "format": 1, "started": "2026-12-03T12:00:00.000Z", "transport": "stdio"}
    lines = [header | {"name": "busy"}]
    t, next_id = 0.0, 0

    def message(direction: str, body: dict[str, object]) -> None:
        nonlocal t
        t += 0.001
        lines.append({"t": round(t, 6), "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}})

    for n in range(TASKS):
        next_id += 1
        message("c2s", {"id": next_id, "method": "tools/call", "params": {"name": "slow", "task": {}}})
        created = {"taskId": f"task-{n}", "status": "working", "pollInterval": 500, "createdAt": "2026-12-03T12:00:00Z"}
        message("s2c", {"id": next_id, "result": {"task": created}})
    for _ in range(3):
        for n in range(TASKS):
            next_id += 1
            message("c2s", {"id": next_id, "method": "tasks/get", "params": {"taskId": f"task-{n}"}})
            message("s2c", {"id": next_id, "result": {"taskId": f"task-{n}", "status": "working", "pollInterval": 500}})
    lines.append({"t": round(t + 0.001, 6), "kind": "end"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def report(path: Path, fmt: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "report", "--format", fmt, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_text_report_shows_the_first_rows_of_the_tasks_table_and_counts_the_rest(tmp_path: Path) -> None:
    text = report(busy_recording(tmp_path / "busy.jsonl"), "text")
    shown = [n for n in range(TASKS) if f"│ task-{n} " in text]
    assert shown == list(range(ROWS_SHOWN))
    assert f"… {TASKS - ROWS_SHOWN} rows not shown: `wiretap report --format json` has every one." in text
    evidence = [line for line in text.splitlines() if line.startswith("  • task task-")]
    assert len(evidence) == EVIDENCE_SHOWN
    assert f"… {TASKS - EVIDENCE_SHOWN} lines not shown" in text


def test_the_markdown_report_counts_what_it_left_out_too(tmp_path: Path) -> None:
    markdown = report(busy_recording(tmp_path / "busy.jsonl"), "markdown")
    rows = [line for line in markdown.splitlines() if line.startswith("| task-")]
    assert len(rows) == ROWS_SHOWN
    assert f"… {TASKS - ROWS_SHOWN} rows not shown" in markdown
    assert f"- … {TASKS - EVIDENCE_SHOWN} lines not shown" in markdown


def test_the_json_report_keeps_every_task_and_every_evidence_line(tmp_path: Path) -> None:
    document = json.loads(report(busy_recording(tmp_path / "busy.jsonl"), "json"))
    assert [row["id"] for row in document["tasks"]] == [f"task-{n}" for n in range(TASKS)]
    assert all(len(row["polls"]) == 3 for row in document["tasks"])
    assert len(document["verdicts"]["poll_intervals"]["evidence"]) == TASKS
