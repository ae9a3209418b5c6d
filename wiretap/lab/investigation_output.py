"""The investigation as text (a terminal), Markdown (ready for a post) and an HTML page with the timeline."""

from __future__ import annotations

from html import escape

from wiretap.analysis.model import Report
from wiretap.lab.investigation_model import Answer, Investigation, Row

FORMATS = ("text", "markdown", "html")
COLUMNS = ("condition", "server asked", "client did", "verdict", "evidence (s)")


def _who(investigation: Investigation) -> str:
    if investigation.client is None:
        return "an unnamed client"
    return investigation.client + (f" {investigation.client_version}" if investigation.client_version else "")


def _name(investigation: Investigation) -> str:
    return investigation.client or "an unnamed client"


def _agrees(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "—"}[value]


def _evidence(row: Row) -> str:
    return ", ".join(f"{t:.3f}" for t in row.evidence)


def _condition(row: Row) -> str:
    where = f" on {row.server}" if row.server and row.server != "wiretap-lab" else ""
    return f"{row.condition} ({row.tool}{where})" if row.tool else row.condition


def _rule(answer: Answer, who: str) -> str:
    return answer.rule if answer.rule is not None else f"no known rule for {who}"


def _footer(investigation: Investigation) -> list[str]:
    lines = []
    if investigation.not_run:
        lines.append(f"Not run in this session: {', '.join(investigation.not_run)}.")
    return lines


def render_text(investigation: Investigation) -> str:
    who = _who(investigation)
    lines = [f"Investigation of {investigation.name or investigation.source}: {who}", ""]
    if not investigation.rows:
        lines.append("No condition ran in this session.")
    for row in investigation.rows:
        lines.append(_condition(row))
        lines.append(f"  server asked:  {row.asked}")
        lines.append(f"  client did:    {row.did}")
        lines.append(
            f"  verdict:       {row.verdict}"
            + (f" (as its rule: {_agrees(row.agrees)})" if row.agrees is not None else "")
        )
        lines.append(f"  evidence (s):  {_evidence(row)}")
    lines += ["", f"The questions, for {who}:"]
    for answer in investigation.answers:
        lines.append(f"- {answer.question}")
        lines.append(f"    its rule:      {_rule(answer, _name(investigation))}")
        lines.append(
            f"    this session:  {answer.seen}"
            + (f" (as its rule: {_agrees(answer.agrees)})" if answer.agrees is not None else "")
        )
    footer = _footer(investigation)
    return "\n".join(lines + (["", *footer] if footer else [])) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(investigation: Investigation) -> str:
    who = _who(investigation)
    lines = [
        f"### {_cell(who)}: what the server asked and what the client did",
        "",
        "| " + " | ".join(COLUMNS) + " | as its rule |",
        "|" + "---|" * (len(COLUMNS) + 1),
    ]
    for row in investigation.rows:
        cells = [_condition(row), row.asked, row.did, row.verdict, _evidence(row), _agrees(row.agrees)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += [
        "",
        f"### The questions, for {_cell(who)}",
        "",
        f"| question | {_cell(_name(investigation))}'s rule | this session | as its rule |",
    ]
    lines.append("|---|---|---|---|")
    for answer in investigation.answers:
        cells = [answer.question, _rule(answer, _name(investigation)), answer.seen, _agrees(answer.agrees)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    footer = _footer(investigation)
    lines += ["", *footer] if footer else []
    lines += ["", f"_Recorded with wiretap; {_cell(investigation.poll_rule)}._"]
    return "\n".join(lines) + "\n"


def _table(head: tuple[str, ...], rows: list[list[str]]) -> str:
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def render_html(investigation: Investigation, report: Report) -> str:
    """A self-contained page: the table, the questions and the report's SVG timeline (``report`` built with
    ``timeline=True``)."""
    from wiretap.export.html import STYLE
    from wiretap.export.lanes import timeline_of
    from wiretap.export.svg import render_svg

    who = _who(investigation)
    title = f"wiretap lab: {who}"
    rows = [[_condition(r), r.asked, r.did, r.verdict, _evidence(r), _agrees(r.agrees)] for r in investigation.rows]
    answers = [[a.question, _rule(a, _name(investigation)), a.seen, _agrees(a.agrees)] for a in investigation.answers]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{escape(str(investigation.name or investigation.source))}</p>',
        "<h2>Conditions</h2>",
        _table((*COLUMNS, "as its rule"), rows) if rows else "<p>No condition ran in this session.</p>",
        f"<h2>The questions, for {escape(who)}</h2>",
        _table(("question", f"{_name(investigation)}'s rule", "this session", "as its rule"), answers),
        *(f'<p class="note">{escape(line)}</p>' for line in _footer(investigation)),
        f'<p class="rule">{escape(investigation.poll_rule)}.</p>',
        f'<h2>Timeline</h2><figure class="timeline">{render_svg(timeline_of(report))}</figure>',
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def render(investigation: Investigation, report: Report, fmt: str) -> str:
    if fmt == "markdown":
        return render_markdown(investigation)
    if fmt == "html":
        return render_html(investigation, report)
    return render_text(investigation)
