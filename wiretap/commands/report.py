"""``wiretap report``: a recording's (or a session's) report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap.commands.common import quiet_broken_pipe, reading_a_whole_recording

if TYPE_CHECKING:
    from wiretap.analysis.model import Report


@click.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default="text",
    show_default=True,
    help="Rich tables, JSON for CI, Markdown for an issue or a post, or one self-contained HTML page.",
)
@click.option("--server", help="For a session folder: only this server (default: every server, on one clock).")
@click.option("--summary", is_flag=True, help="Also append the markdown report to $GITHUB_STEP_SUMMARY.")
def report(recording: Path, fmt: str, server: str | None, summary: bool) -> None:
    """Measure a recording (or a session folder): poll intervals, cancel on exit, open questions, findings."""
    from wiretap.export.report_output import load_report, write_report

    reading_a_whole_recording()
    result = load_report(recording, fmt, server)
    try:
        write_report(result, fmt, sys.stdout)
    except BrokenPipeError:
        quiet_broken_pipe()
    if summary:
        _report_summary(result)


def _report_summary(result: Report) -> None:
    import io

    from wiretap.render import ci
    from wiretap.render.report_text import render_markdown

    text = io.StringIO()
    render_markdown(result, text)
    ci.append_step_summary(text.getvalue())
