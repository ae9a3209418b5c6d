"""The report's tables, specified once and rendered three ways: text (rich), Markdown and HTML.

Each cell is formatted by its column, so a figure reads the same in every format. In text, a table
that does not fit the terminal drops its least needed columns first and shortens long ids (with a key
under the table) rather than breaking a word in the middle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from rich.console import Console
from rich.markup import escape as escape_markup
from rich.table import Table as RichTable

from wiretap.analysis.model import (
    FIGURES,
    SHORT_ID,
    FindingRow,
    LatencyRow,
    OAuthStep,
    QuestionRow,
    Report,
    TaskRow,
    short_id,
)
from wiretap.plural import plural

PROSE_MIN = 16


def fmt(value: Any) -> str:
    """A cell as every format shows it."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Any], str]
    numeric: bool = False
    prose: bool = False
    """Free text that may wrap between words; other cells never wrap."""
    keep: int = 5
    """When a text table is too wide, columns with the lowest ``keep`` go first (0: the first to go)."""
    ident: bool = False
    """An id that a narrow table may shorten."""
    html: Callable[[Any], str] | None = None
    """Already-escaped HTML for the cell, when it is more than its text (a severity badge)."""


@dataclass(frozen=True)
class TableSpec:
    title: str
    columns: tuple[Column, ...]
    rows: Callable[[Report], Sequence[Any]]
    empty: str | None = None
    """Said when there is no row (``Findings: none``); None: the table is left out."""


def _cancels(task: TaskRow) -> str:
    return ", ".join(f"{c.via} at {c.t:.2f} s" for c in task.cancels) or "—"


def _times(f: FindingRow) -> str:
    return ", ".join(f"{t:.2f}" for t in f.times) + (f" (×{f.count})" if f.count > 1 else "")


def _between(q: QuestionRow) -> str:
    between = q.longest_gap_between
    return f"{between[0]:.2f}–{between[1]:.2f}" if between else "—"


def _badge(f: FindingRow) -> str:
    return f'<span class="sev {escape(f.severity)}">{escape(f.severity)}</span>'


TASKS = TableSpec(
    "Tasks",
    (
        Column("task", lambda t: t.id, keep=9, ident=True),
        Column("protocol", lambda t: f"{t.protocol} ({t.design})", keep=1),
        Column("tool", lambda t: fmt(t.tool), keep=3),
        Column("created s", lambda t: fmt(t.created_at), numeric=True, keep=2),
        Column("asked ms", lambda t: fmt(t.requested_poll_ms), numeric=True, keep=6),
        Column("applied ms", lambda t: fmt(t.applied_poll_ms), numeric=True, keep=0),
        Column("polls", lambda t: str(len(t.polls)), numeric=True, keep=8),
        Column(f"{FIGURES['settled_interval']} s", lambda t: fmt(t.settled_interval), numeric=True, keep=8),
        Column(f"{FIGURES['median_interval']} s", lambda t: fmt(t.median_interval), numeric=True, keep=4),
        Column("final state", lambda t: fmt(t.final_state), keep=9),
        Column("live at client exit", lambda t: fmt(t.live_at_client_exit), keep=7),
        Column("cancelled", _cancels, prose=True, keep=3),
    ),
    lambda r: r.tasks,
)
QUESTIONS = TableSpec(
    "Open questions",
    (
        Column("kind", lambda q: q.kind, keep=2),
        Column("task / keys", lambda q: q.task or ", ".join(q.keys), keep=9, ident=True),
        Column("open s", lambda q: fmt(q.opened), numeric=True, keep=8),
        Column("closed s", lambda q: fmt(q.closed), numeric=True, keep=8),
        Column("polls inside", lambda q: str(len(q.polls_inside)), numeric=True, keep=6),
        Column(f"{FIGURES['longest_gap']} s", lambda q: fmt(q.longest_gap), numeric=True, keep=9),
        Column("between s", _between, keep=1),
        Column(f"{FIGURES['cadence_outside']} s", lambda q: fmt(q.cadence_outside), numeric=True, keep=5),
        Column("answered by", lambda q: q.answered_by or "never answered", prose=True, keep=7),
    ),
    lambda r: r.questions,
)
FINDINGS = TableSpec(
    "Findings",
    (
        Column("severity", lambda f: f.severity, keep=6, html=_badge),
        Column("code", lambda f: f.code, keep=9),
        Column("times s", _times, prose=True, keep=7),
        Column("finding", lambda f: f.message, prose=True, keep=8),
        Column("advice", lambda f: f.advice, prose=True, keep=0),
    ),
    lambda r: r.findings,
    empty="none",
)


@dataclass(frozen=True)
class _Step:
    server: str | None
    step: OAuthStep


def _steps(report: Report) -> list[_Step]:
    return [_Step(row.server, step) for row in report.authorization for step in row.steps]


AUTHORIZATION = TableSpec(
    "Authorization",
    (
        Column("resource", lambda a: fmt(a.resource), keep=9),
        Column("authorization servers", lambda a: ", ".join(a.authorization_servers) or "-", prose=True, keep=8),
        Column("scopes", lambda a: " ".join(a.scopes) or "-", prose=True, keep=5),
        Column("grants", lambda a: ", ".join(a.grants) or "-", prose=True, keep=6),
        Column("refreshed s", lambda a: ", ".join(fmt(t) for t in a.refreshed) or "never", prose=True, keep=4),
    ),
    lambda r: r.authorization,
)
AUTHORIZATION_STEPS = TableSpec(
    "Authorization steps",
    (
        Column("t s", lambda s: fmt(s.step.t), numeric=True, keep=7),
        Column("step", lambda s: s.step.step, keep=9),
        Column("request", lambda s: f"{s.step.method} {s.step.path}", keep=8),
        Column("status", lambda s: fmt(s.step.status), numeric=True, keep=8),
        Column("why it failed", lambda s: s.step.detail or "", prose=True, keep=3),
    ),
    _steps,
)
LATENCY = TableSpec(
    "Latency per method",
    (
        Column("method", lambda r: r.method, keep=9),
        Column("count", lambda r: str(r.count), numeric=True, keep=8),
        Column("errors", lambda r: str(r.errors), numeric=True, keep=8),
        Column("p50 ms", lambda r: fmt(r.p50_ms), numeric=True, keep=7),
        Column("p95 ms", lambda r: fmt(r.p95_ms), numeric=True, keep=5),
        Column("max ms", lambda r: fmt(r.max_ms), numeric=True, keep=6),
    ),
    lambda r: r.latency,
)
SPECS = (TASKS, QUESTIONS, AUTHORIZATION, AUTHORIZATION_STEPS, FINDINGS, LATENCY)


def _with_server(spec: TableSpec, report: Report) -> tuple[Column, ...]:
    """A session's report gets a server column in front."""
    if not report.servers:
        return spec.columns
    return (Column("server", lambda row: fmt(row.server), keep=9), *spec.columns)


# -- text -------------------------------------------------------------------------------------------


@dataclass
class _Fitted:
    columns: list[Column]
    cells: list[list[str]]
    key: list[str] = field(default_factory=list)
    narrow: bool = False
    """Headers break between their words; long ids are shortened."""


def _width(column: Column, cells: list[str], narrow: bool) -> int:
    """The least width a column needs without breaking a word (prose wraps down to PROSE_MIN)."""
    header = max((len(w) for w in column.header.split()), default=1) if narrow else len(column.header)
    if column.prose:
        words = max((len(w) for text in cells for w in text.split()), default=1)
        return max(header, min(max((len(c) for c in cells), default=1), max(PROSE_MIN, words)))
    return max(header, *(len(c) for c in cells)) if cells else header


def fit(columns: Sequence[Column], rows: Sequence[Any], width: int, ids: Sequence[str] = ()) -> _Fitted:
    """Columns and cells that fit ``width``: headers break between words and long ids are shortened (with a
    key), then the least needed columns go."""
    chosen = list(columns)
    cells = [[c.cell(row) for c in chosen] for row in rows]
    fitted = _Fitted(chosen, cells)

    def total() -> int:
        return sum(_width(c, [r[n] for r in cells], fitted.narrow) for n, c in enumerate(chosen)) + 3 * len(chosen) + 1

    if total() <= width:
        return fitted
    fitted.narrow = True
    long_ids = sorted({i for i in ids if len(i) > SHORT_ID}, key=len, reverse=True)
    for row in cells:
        for n, text in enumerate(row):
            for full in long_ids:
                if full in text:
                    text = text.replace(full, short_id(full))
                    entry = f"{short_id(full)} = {full}"
                    if entry not in fitted.key:
                        fitted.key.append(entry)
            row[n] = text
    while total() > width and len(chosen) > 2:
        drop = min(range(len(chosen)), key=lambda n: (chosen[n].keep, -n))
        del chosen[drop]
        for row in cells:
            del row[drop]
    return fitted


def _header_lines(header: str, width: int) -> str:
    """A header broken between its words to fit its column."""
    lines: list[str] = []
    for word in header.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _ids(report: Report) -> list[str]:
    return [task.id for task in report.tasks]


ROWS_SHOWN = 50
"""Rows a text or Markdown table shows; JSON and HTML have every row."""


def left_out(count: int, what: str) -> str:
    """The line under a table or a list that shows only its first rows."""
    return f"… {plural(count, what)} not shown: `wiretap report --format json` has every one."


def text_table(spec: TableSpec, report: Report, console: Console) -> None:
    every = spec.rows(report)
    rows = every[:ROWS_SHOWN]
    if not rows:
        if spec.empty is not None:
            console.print(f"\n[bold]{spec.title}[/bold]: {spec.empty}")
        return
    fitted = fit(_with_server(spec, report), rows, console.width, _ids(report))
    table = RichTable(title=spec.title, title_justify="left")
    for n, column in enumerate(fitted.columns):
        least = _width(column, [r[n] for r in fitted.cells], fitted.narrow)
        table.add_column(
            _header_lines(column.header, least) if fitted.narrow else column.header,
            justify="right" if column.numeric else "left",
            no_wrap=not column.prose,
            overflow="fold",
            min_width=least,
        )
    for row in fitted.cells:
        table.add_row(*row)
    console.print(table)
    if len(every) > len(rows):
        console.print(escape_markup(left_out(len(every) - len(rows), "row")), highlight=False)
    for entry in fitted.key:
        console.print(f"  {entry}", highlight=False, soft_wrap=True)


# -- Markdown ---------------------------------------------------------------------------------------


def markdown_table(spec: TableSpec, report: Report) -> str | None:
    every = spec.rows(report)
    rows = every[:ROWS_SHOWN]
    if not rows:
        return f"**{spec.title}:** {spec.empty}" if spec.empty is not None else None
    columns = _with_server(spec, report)

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(c.header for c in columns) + " |"]
    lines.append("|" + "".join("---:|" if c.numeric else "---|" for c in columns))
    lines += ["| " + " | ".join(cell(c.cell(row)) for c in columns) + " |" for row in rows]
    more = f"\n\n{left_out(len(every) - len(rows), 'row')}" if len(every) > len(rows) else ""
    return f"### {spec.title}\n\n" + "\n".join(lines) + more


# -- HTML -------------------------------------------------------------------------------------------


def html_table(spec: TableSpec, report: Report) -> str | None:
    rows = spec.rows(report)
    if not rows:
        return f"<h3>{escape(spec.title)}</h3><p>{escape(spec.empty)}</p>" if spec.empty is not None else None
    columns = _with_server(spec, report)
    head = "".join(f"<th>{escape(c.header)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            inner = c.html(row) if c.html is not None else escape(c.cell(row))
            cells.append(f"<td{' class=num' if c.numeric else ''}>{inner}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<h3>{escape(spec.title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


__all__ = ["LATENCY", "SPECS", "TASKS", "Column", "LatencyRow", "TableSpec", "fit", "fmt"]
