"""``wiretap export``: a recording as an SVG timeline, a Mermaid sequence diagram, HAR 1.2 or an HTML report."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from wiretap.commands.common import reading_a_whole_recording
from wiretap.errors import BadInput
from wiretap.export.xmlsafe import encodable, xml_safe
from wiretap.files import write_private
from wiretap.recording.folders import is_session, open_session
from wiretap.render.json_text import indented

FORMATS = ("svg", "mermaid", "har", "html", "otlp")
_BY_SUFFIX = {".svg": "svg", ".mmd": "mermaid", ".mermaid": "mermaid", ".har": "har", ".html": "html", ".htm": "html"}


class NothingToExport(BadInput):
    """The recording holds nothing the format can carry (HAR of a stdio recording)."""


def render(recording: Path, fmt: str, server: str | None = None) -> Iterator[str]:
    """The export in pieces: OTLP's lines as its spans are mapped (it grows with the recording), any
    other format whole. Raises as ``_render`` does, before the first piece."""
    if fmt == "otlp":
        from wiretap.otel.export import otlp_lines_of

        lines = (encodable(line) for line in otlp_lines_of(recording))
        first = next(lines, None)  # what the recording cannot give is raised here, before any output
        return itertools.chain([first] if first is not None else [], lines)
    text = _render(recording, fmt, server)
    return iter([xml_safe(text) if fmt in ("svg", "html") else encodable(text)])


def _render(recording: Path, fmt: str, server: str | None = None) -> str:
    """The export of a recording (or a session folder, as HTML or SVG) as text.

    Raises NotARecording, UnsupportedFormat, NotASession, click.ClickException, OSError."""
    if is_session(recording):
        return _session(recording, fmt, server)
    if fmt == "har":
        from wiretap.export.har import NotHttp, har_of_recording

        try:
            return indented(har_of_recording(recording)) + "\n"
        except NotHttp as exc:
            raise NothingToExport(str(exc)) from None
    if fmt == "mermaid":
        from wiretap.export.mermaid import mermaid_of_recording

        return mermaid_of_recording(recording)
    from wiretap.analysis.report import build_report
    from wiretap.export.html import MAX_MESSAGES

    report = build_report(recording, keep_rows=MAX_MESSAGES if fmt == "html" else 0, timeline=True)
    if fmt == "html":
        from wiretap.export.html import render_html

        return render_html([report])
    from wiretap.export.lanes import timeline_of
    from wiretap.export.svg import render_svg

    return render_svg(timeline_of(report))


def _session(folder: Path, fmt: str, server: str | None = None) -> str:
    """A session folder as one HTML page or one SVG timeline: every server on one clock, a lane each."""
    from wiretap.analysis.session_report import build_session_report
    from wiretap.export.html import MAX_MESSAGES

    if fmt not in ("html", "svg"):
        session = open_session(folder)
        files = ", ".join(str(path) for _, path in session.recordings) or "none"
        raise BadInput(f"{folder} is a session folder: export one of its recordings as {fmt} ({files})")
    rows = MAX_MESSAGES if fmt == "html" else 0
    report = build_session_report(folder, server=server, keep_rows=rows, timeline=True)
    if fmt == "html":
        from wiretap.export.html import render_html

        return render_html([report], heading=f"wiretap session {folder.name}")
    from wiretap.export.lanes import timeline_of
    from wiretap.export.svg import render_svg

    return render_svg(timeline_of(report))


@click.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    help="svg: a timeline; mermaid: a sequence diagram; har: the HTTP exchanges; html: the report; "
    "otlp: OpenTelemetry spans as OTLP/JSON lines (a session folder too). "
    "Default: from --out's suffix, else svg.",
)
@click.option("--out", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write here (default: stdout).")
@click.option("--server", help="For a session folder: only this server (default: every server, on one clock).")
def export(recording: Path, fmt: str | None, out: Path | None, server: str | None) -> None:
    """Export a RECORDING as a picture, a diagram, a HAR file for browser devtools, or an HTML report.

    A session folder exports as one HTML page or one SVG timeline: every server on one clock
    (t = 0 is the client's start), a lane each.
    """
    chosen = fmt or (_BY_SUFFIX.get(out.suffix.lower()) if out is not None else None) or "svg"
    reading_a_whole_recording()
    pieces = render(recording, chosen, server)
    if out is None:
        try:
            for piece in pieces:
                sys.stdout.write(piece)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    write_private(out, pieces)
