"""A report (the model) as text for a terminal, or Markdown for an issue or a post."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.markup import escape

from wiretap.analysis.model import Report
from wiretap.plural import plural
from wiretap.recording.cap import format_size
from wiretap.render.tables import SPECS, fmt, left_out, markdown_table, text_table

EVIDENCE_SHOWN = 12
"""Evidence lines a verdict shows in text and Markdown; JSON has every one."""


def counts(report: Report) -> str:
    """``8 messages in, 7 out`` (JSON-RPC messages only), then the other bodies as what they are."""
    messages = report.messages
    text = f"{plural(messages.c2s, 'message')} in, {messages.s2c} out"
    if messages.other:
        others = ", ".join(f"{n} × {what}" for what, n in sorted(messages.other.items()))
        text += f"; other bodies: {others}"
    return text


def title(report: Report) -> str:
    rec = report.recording
    servers = f"{plural(len(report.servers), 'server')} {', '.join(report.servers)}; " if report.servers else ""
    return f"{rec.name} ({servers}{rec.transport}, started {rec.started}, {fmt(rec.duration)} s): {counts(report)}"


def capped(report: Report) -> str | None:
    """The line that says a recording is not whole: it reached its size cap."""
    cap = report.recording.capped
    if cap is None:
        return None
    if cap.messages is None:  # (no end event: nobody counted them)
        counted = "what followed"
    else:
        counted = f"{plural(cap.messages, 'message')} and {plural(cap.events or 0, 'other event', 'other events')}"
    size = format_size(cap.max_size) if cap.max_size else "?"
    return (
        f"Capped: the recording reached its cap (--max-size {size}) at {cap.since:.2f} s; {counted} "
        "after that passed but were not stored."
    )


def render_text(report: Report, console: Console) -> None:
    console.print(f"[bold]{escape(title(report))}[/bold]")
    if report.recording.incomplete:
        console.print(f"[bold yellow]Not complete[/bold yellow]: {escape(report.recording.incomplete)}")
    if (note := capped(report)) is not None:
        console.print(f"[bold yellow]{escape(note)}[/bold yellow]")
    for _, heading, verdict in report.verdicts.titled():
        console.print(f"\n[bold cyan]{heading}[/bold cyan]: {escape(verdict.verdict)}")
        for line in verdict.evidence[:EVIDENCE_SHOWN]:
            console.print(f"  • {escape(line)}", highlight=False)
        if len(verdict.evidence) > EVIDENCE_SHOWN:
            console.print(f"  {escape(left_out(len(verdict.evidence) - EVIDENCE_SHOWN, 'line'))}", highlight=False)
    console.print(f"\n[dim]{escape(report.poll_rule)}[/dim]")
    for spec in SPECS:
        text_table(spec, report, console)


def render_markdown(report: Report, out: IO[str]) -> None:
    parts = [f"## wiretap report: {title(report)}"]
    if report.recording.incomplete:
        parts.append(f"**Not complete.** {report.recording.incomplete}")
    if (note := capped(report)) is not None:
        parts.append(f"**{note}**")
    for _, heading, verdict in report.verdicts.titled():
        parts.append(f"**{heading}.** {verdict.verdict}")
        if verdict.evidence:
            shown = [f"- {line}" for line in verdict.evidence[:EVIDENCE_SHOWN]]
            if len(verdict.evidence) > EVIDENCE_SHOWN:
                shown.append(f"- {left_out(len(verdict.evidence) - EVIDENCE_SHOWN, 'line')}")
            parts.append("\n".join(shown))
    parts.append(f"_{report.poll_rule}._")
    parts += [table for spec in SPECS if (table := markdown_table(spec, report)) is not None]
    out.write("\n\n".join(parts) + "\n")
