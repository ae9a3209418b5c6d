"""The SVG timeline stays readable: no label clipped or overlapping another, every flagged poll marked,
a legend entry for every kind of line drawn."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import pytest
from support import paths

from wiretap.analysis.report import build_report
from wiretap.export.draw import LEFT, WIDTH, text_width
from wiretap.export.lanes import timeline_of
from wiretap.export.svg import render_svg

NS = "{http://www.w3.org/2000/svg}"
RECORDINGS = sorted((paths.RECORDINGS).glob("*.jsonl"))


def svg_of(recording: Path) -> ET.Element:
    return ET.fromstring(render_svg(timeline_of(build_report(recording, timeline=True))))


def spans(root: ET.Element) -> list[tuple[float, float, float, str]]:
    """(y, left, right, text) of every text drawn, from its anchor and estimated width."""
    out = []
    for text in root.iter(f"{NS}text"):
        content = text.text or ""
        size = float(text.get("font-size") or 11)
        x, width = float(text.get("x") or 0), text_width(content, size)
        anchor = text.get("text-anchor") or "start"
        left = x if anchor == "start" else x - width if anchor == "end" else x - width / 2
        out.append((float(text.get("y") or 0), left, left + width, content))
    return out


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_no_label_is_clipped_runs_off_the_picture_or_overlaps_another(recording: Path) -> None:
    root = svg_of(recording)
    drawn = spans(root)
    keys = {t.text for t in root.iter(f"{NS}text") if t.get("class") == "key"}
    for _y, left, right, content in drawn:
        assert left >= 0 and right <= WIDTH, (content, left, right)
        # A shortened id is spelled out in the key under the legend; nothing else is cut.
        if content.endswith("…") or "… " in content:
            short = content.split()[-1] if content.endswith("…") else content.split(" = ")[0]
            assert content in keys or any(k.startswith(f"{short} = ") for k in keys), content
    for group in root.iter(f"{NS}g"):
        if "marks" not in (group.get("class") or ""):
            continue
        labels = sorted(spans(group))
        for (y1, _, r1, a), (y2, l2, _, b) in pairwise(labels):
            assert y1 != y2 or r1 <= l2, f"{a!r} overlaps {b!r}"
        assert all(left >= LEFT for _, left, _, _ in labels), labels


def test_every_poll_after_the_terminal_state_is_marked() -> None:
    report = build_report(RECORDINGS[0].parent / "a2a-rejected-loop.jsonl", timeline=True)
    (finding,) = [f for f in report.findings if f.code == "poll-after-terminal"]
    root = ET.fromstring(render_svg(timeline_of(report)))
    marks = [p for p in root.iter(f"{NS}path") if p.get("class") == "mark finding"]
    assert finding.count == 8 and len(marks) == 8


def test_the_legend_names_the_server_exit_and_the_flagged_marks() -> None:
    root = svg_of(RECORDINGS[0].parent / "exit-no-cancel.jsonl")
    legend = next(g for g in root.iter(f"{NS}g") if g.get("class") == "legend")
    names = [t.text for t in legend.iter(f"{NS}text")]
    assert "server exit" in names and "client exit" in names
    loop = svg_of(RECORDINGS[0].parent / "a2a-rejected-loop.jsonl")
    legend = next(g for g in loop.iter(f"{NS}g") if g.get("class") == "legend")
    assert "flagged (a finding)" in [t.text for t in legend.iter(f"{NS}text")]
