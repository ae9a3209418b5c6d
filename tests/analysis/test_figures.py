"""Every figure is named once and shown the same everywhere: the JSON key, and the one label and value
in text, Markdown, HTML and the SVG timeline, for every shipped recording."""

from __future__ import annotations

import io
import re
from html import unescape
from pathlib import Path

import pytest
from rich.console import Console
from support import paths

from wiretap.analysis.model import FIGURES, Report
from wiretap.analysis.report import build_report
from wiretap.export.html import MAX_MESSAGES, render_html
from wiretap.export.lanes import timeline_of
from wiretap.export.svg import render_svg
from wiretap.render.report_text import render_markdown, render_text

RECORDINGS = sorted((paths.RECORDINGS).glob("*.jsonl"))


def text_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Rich tables read back: title → rows as {header: cell} (a wide console, so no cell wraps)."""
    tables: dict[str, list[dict[str, str]]] = {}
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("┃"):
            title = lines[n - 2].strip()
            headers = [c.strip() for c in line.strip("┃").split("┃")]
            rows = []
            for body in lines[n + 2 :]:
                if not body.startswith("│"):
                    break
                rows.append(dict(zip(headers, [c.strip() for c in body.strip("│").split("│")], strict=True)))
            tables[title] = rows
    return tables


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    tables: dict[str, list[dict[str, str]]] = {}
    for title, body in re.findall(r"^### (.+?)\n\n((?:\|.*\n?)+)", text, re.M):
        lines = body.strip().splitlines()
        headers = [c.strip() for c in lines[0].strip("|").split(" | ")]
        tables[title] = [
            dict(zip(headers, [c.strip() for c in row.strip("|").split(" | ")], strict=True)) for row in lines[2:]
        ]
    return tables


def html_tables(page: str) -> dict[str, list[dict[str, str]]]:
    tables: dict[str, list[dict[str, str]]] = {}
    for title, head, body in re.findall(
        r"<h3>([^<]+)</h3><table><thead><tr>(.*?)</tr></thead><tbody>(.*?)</tbody></table>", page
    ):
        headers = [unescape(h) for h in re.findall(r"<th>(.*?)</th>", head)]
        rows = re.findall(r"<tr>(.*?)</tr>", body)
        cells = [[unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)] for row in rows]
        tables[title] = [dict(zip(headers, row, strict=True)) for row in cells]
    return tables


def svg_texts(svg: str) -> list[str]:
    return [unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)", svg)]


def renderings(report: Report) -> dict[str, str]:
    wide = io.StringIO()
    render_text(report, Console(file=wide, width=400, highlight=False, color_system=None))
    markdown = io.StringIO()
    render_markdown(report, markdown)
    return {"text": wide.getvalue(), "markdown": markdown.getvalue(), "html": render_html([report])}


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_every_figure_reads_the_same_in_json_text_markdown_html_and_svg(recording: Path) -> None:
    report = build_report(recording, keep_rows=MAX_MESSAGES, timeline=True)
    document = report.to_dict()
    shown = renderings(report)
    tables = {
        "text": text_tables(shown["text"]),
        "markdown": markdown_tables(shown["markdown"]),
        "html": html_tables(shown["html"]),
    }
    svg = svg_texts(render_svg(timeline_of(report)))
    for n, task in enumerate(report.tasks):
        for figure in ("settled_interval", "median_interval"):
            value = document["tasks"][n][figure]
            cell = "—" if value is None else f"{value:.2f}"
            for fmt, found in tables.items():
                assert found["Tasks"][n][f"{FIGURES[figure]} s"] == cell, (fmt, task.id, figure)
        settled = document["tasks"][n]["settled_interval"]
        if settled is not None:
            assert any(f"{FIGURES['settled_interval']} {settled:.2f} s" in line for line in svg), (task.id, svg)
    for n, _question in enumerate(report.questions):
        gap = document["questions"][n]["longest_gap"]
        for fmt, found in tables.items():
            assert found["Open questions"][n][f"{FIGURES['longest_gap']} s"] == f"{gap:.2f}", fmt
    # An unlabelled median nowhere: "median" in a picture is always the median of all intervals.
    assert all("median" not in line or FIGURES["median_interval"] in line for line in svg), svg
    poll = document["verdicts"]["poll_intervals"]
    if poll.get("settled_interval") is not None:
        said = f"polled every {poll['settled_interval']:.2f} s ({FIGURES['settled_interval']}:"
        for fmt, text in shown.items():
            assert said in unescape(text), fmt
    gaps = document["verdicts"]["elicitation_gaps"]
    if gaps.get("longest_gap") is not None:
        for fmt, text in shown.items():
            assert f"the {FIGURES['longest_gap']} in polling was {gaps['longest_gap']:.2f} s" in unescape(text), fmt


def test_the_form_recording_names_its_two_figures_apart() -> None:
    """cc-ext-form: 3.00 s is the settled cadence; 22.99 s is the median of all intervals, the open form's
    40 s included. Neither appears under the other's name."""
    report = build_report(RECORDINGS[0].parent / "cc-ext-form.jsonl", timeline=True)
    (task,) = report.tasks
    assert (f"{task.settled_interval:.2f}", f"{task.median_interval:.2f}") == ("3.00", "22.99")
    svg = svg_texts(render_svg(timeline_of(report)))
    assert any("settled cadence 3.00 s" in line for line in svg)
    assert not any("22.99" in line for line in svg)
    verdict = report.verdicts.poll_intervals.verdict
    assert "polled every 3.00 s (settled cadence:" in verdict
