"""The text report reads at 80 columns: no line longer, no word broken in the middle, long ids shortened
with a key, plurals right, and "Findings: none" when there are none."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from support import paths

from wiretap.analysis.report import build_report
from wiretap.render.report_text import render_text

RECORDINGS = sorted((paths.RECORDINGS).glob("*.jsonl"))
BOX = re.compile(r"[│┃━┏┓┗┛┡┩╇┳┻┣┫╋─└┘┴┬┼├┤┌┐]")


def text_at(recording: Path, width: int) -> str:
    out = io.StringIO()
    render_text(build_report(recording), Console(file=out, width=width, color_system=None, highlight=False))
    return out.getvalue()


def words(text: str) -> set[str]:
    return set(BOX.sub(" ", text).split())


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_at_80_columns_no_line_is_longer_and_no_word_is_broken(recording: Path) -> None:
    narrow, wide = text_at(recording, 80), text_at(recording, 400)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    keys = dict(re.findall(r"^  (\S+…) = (\S+)$", narrow, re.M))
    whole = words(wide)
    broken = [w for w in words(narrow) - whole - {"="} if w.rstrip(".,;:)") not in whole and w not in keys]
    assert broken == [], broken
    for short, full in keys.items():
        assert full.startswith(short[:-1]) and full in whole


def test_plurals_and_an_empty_findings_table_read_right() -> None:
    text = text_at(RECORDINGS[0].parent / "cc-ext-form.jsonl", 400)
    assert "Findings: none" in text
    assert "0 polls inside" in text and "1 interval after any back-off, 1 task)" in text
    assert "(s)" not in text
