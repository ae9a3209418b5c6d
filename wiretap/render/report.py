"""A report (analysis.report's dict) as rich tables for a terminal, or Markdown for an issue or a post."""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console
from rich.table import Table

_VERDICTS = (
    ("poll_intervals", "Poll intervals"),
    ("cancel_on_exit", "Cancel on exit"),
    ("elicitation_gaps", "Polling while a question was open"),
    ("shutdown", "Shutdown"),
)


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _task_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for task in report["tasks"]:
        intervals = task["intervals"] or {}
        rows.append(
            [
                task["id"],
                f"{task['protocol']} ({task['design']})",
                _fmt(task["tool"]),
                _fmt(task["created_at"]),
                _fmt(task["requested_poll_ms"]),
                _fmt(task["applied_poll_ms"]),
                str(len(task["polls"])),
                " / ".join(_fmt(intervals.get(k)) for k in ("min", "median", "p95", "max")) if intervals else "—",
                _fmt(task["final_state"]),
                _fmt(task["live_at_client_exit"]),
            ]
        )
    return rows


TASK_COLUMNS = [
    "task",
    "protocol",
    "tool",
    "created s",
    "asked ms",
    "applied ms",
    "polls",
    "interval min/med/p95/max s",
    "final",
    "live at exit",
]
QUESTION_COLUMNS = [
    "kind",
    "task / keys",
    "open s",
    "closed s",
    "polls inside",
    "longest gap s",
    "cadence outside s",
    "answered by",
]
LATENCY_COLUMNS = ["method", "count", "errors", "p50 ms", "p95 ms", "max ms"]
FINDING_COLUMNS = ["severity", "code", "times s", "finding", "advice"]


def _question_rows(report: dict[str, Any]) -> list[list[str]]:
    return [
        [
            q["kind"],
            q["task"] or ", ".join(q["keys"]),
            _fmt(q["opened"]),
            _fmt(q["closed"]),
            str(len(q["polls_inside"])),
            _fmt(q["longest_gap"]),
            _fmt(q["cadence_outside"]),
            _fmt(q["answered_by"]),
        ]
        for q in report["questions"]
    ]


def _latency_rows(report: dict[str, Any]) -> list[list[str]]:
    return [
        [
            r["method"],
            str(r["count"]),
            str(r["errors"]),
            _fmt(r["p50_ms"]),
            _fmt(r["p95_ms"]),
            _fmt(r["max_ms"]),
        ]
        for r in report["latency"]
    ]


def _finding_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for f in report["findings"]:
        times = ", ".join(f"{t:.2f}" for t in f["times"]) + (f" (×{f['count']})" if f["count"] > 1 else "")
        rows.append([f["severity"], f["code"], times, f["message"], f["advice"]])
    return rows


def _title(report: dict[str, Any]) -> str:
    rec = report["recording"]
    messages = report["messages"]
    return (
        f"{rec['name']} ({rec['transport']}, started {rec['started']}, {_fmt(rec['duration'])} s): "
        f"{messages.get('c2s', 0)} messages in, {messages.get('s2c', 0)} out"
    )


def render_text(report: dict[str, Any], console: Console) -> None:
    console.print(f"[bold]{_title(report)}[/bold]")
    for key, title in _VERDICTS:
        verdict = report["verdicts"][key]
        console.print(f"\n[bold cyan]{title}[/bold cyan]: {verdict['verdict']}")
        for line in verdict["evidence"]:
            console.print(f"  • {line}", highlight=False)
    console.print(f"\n[dim]{report['poll_rule']}[/dim]")
    for title, columns, rows in (
        ("Tasks", TASK_COLUMNS, _task_rows(report)),
        ("Open questions", QUESTION_COLUMNS, _question_rows(report)),
        ("Findings", FINDING_COLUMNS, _finding_rows(report)),
        ("Latency per method", LATENCY_COLUMNS, _latency_rows(report)),
    ):
        if not rows:
            continue
        table = Table(title=title, title_justify="left", show_lines=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)


def _md_table(columns: list[str], rows: list[list[str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: dict[str, Any], out: IO[str]) -> None:
    parts = [f"## wiretap report: {_title(report)}"]
    for key, title in _VERDICTS:
        verdict = report["verdicts"][key]
        parts.append(f"**{title}.** {verdict['verdict']}")
        if verdict["evidence"]:
            parts.append("\n".join(f"- {line}" for line in verdict["evidence"]))
    parts.append(f"_{report['poll_rule']}._")
    for title, columns, rows in (
        ("Tasks", TASK_COLUMNS, _task_rows(report)),
        ("Open questions", QUESTION_COLUMNS, _question_rows(report)),
        ("Findings", FINDING_COLUMNS, _finding_rows(report)),
        ("Latency per method", LATENCY_COLUMNS, _latency_rows(report)),
    ):
        if rows:
            parts.append(f"### {title}\n\n{_md_table(columns, rows)}")
    out.write("\n\n".join(parts) + "\n")
