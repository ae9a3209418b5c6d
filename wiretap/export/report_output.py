"""``wiretap report``: a recording's (or a session's) report, written as text, JSON, Markdown or HTML."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from rich.console import Console

from wiretap.analysis.model import Report
from wiretap.analysis.report import build_report
from wiretap.recording.folders import is_session, open_session
from wiretap.render.json_text import indented

FORMATS = ("text", "json", "markdown", "html")


def load_report(recording: Path, fmt: str, server: str | None = None) -> Report:
    """The report of a recording, or of a session folder (one report on one clock; ``server`` narrows it).
    Raises NotARecording, UnsupportedFormat, NotASession, OSError."""
    from wiretap.export.html import MAX_MESSAGES

    rows = MAX_MESSAGES if fmt == "html" else 0
    if is_session(recording) or recording.is_dir():
        from wiretap.analysis.session_report import build_session_report

        return build_session_report(recording, server=server, keep_rows=rows, timeline=fmt == "html")
    return build_report(recording, keep_rows=rows, timeline=fmt == "html")


def json_document(report: Report) -> object:
    """A recording's report JSON; for a session, its manifest, its one report and each server's."""
    if not report.parts:
        return report.to_dict()
    manifest = open_session(Path(report.recording.source)).manifest
    return {"session": manifest, "report": report.to_dict(), "reports": [p.to_dict() for p in report.parts]}


def write_report(report: Report, fmt: str, out: IO[str]) -> None:
    if fmt == "json":
        out.write(indented(json_document(report)) + "\n")
    elif fmt == "markdown":
        from wiretap.render.report_text import render_markdown

        render_markdown(report, out)
    elif fmt == "html":
        from wiretap.export.html import render_html

        out.write(render_html([report]))
    else:
        from wiretap.render.report_text import render_text

        render_text(report, Console(file=out, highlight=False, soft_wrap=not out.isatty()))
