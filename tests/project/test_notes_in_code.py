"""Figures belong in bench/ and history in git: no throughput, speed-up or before-and-after figure in a
comment or docstring of the package or the test helpers."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from support import paths

ROOT = paths.REPO
FIGURE = re.compile(
    r"\d[\d.,]*\s?(?:GB/s|MB/s|MiB/s|KiB/s|req/s|msg/s|messages/s)"  # a throughput
    r"|\d[\d.]*\s?x\s(?:socat|nginx|mitmdump|mcp-rec|the direct)"  # a ratio to a floor or a rival
    r"|\d[\d.]*\s?(?:s|ms|us|µs)?\s?->\s?\d[\d.]*\s?(?:s|ms|us|µs)"  # before -> after
    r"|\bmeasured(?: here| on [^.]*?)?[:,]\s*\d"  # "measured: 3.4x", "measured on 2 cores, 23.4"
    r"|\bfell from \d|\brose from \d",
    re.IGNORECASE,
)


def notes(path: Path) -> list[tuple[int, str]]:
    """The comments and docstrings of one file, with their line numbers."""
    source = path.read_text()
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                found.append((node.body[0].lineno, doc))
    return found


def test_no_comment_or_docstring_in_the_package_or_test_helpers_quotes_a_figure() -> None:
    files = [*sorted((ROOT / "wiretap").rglob("*.py")), ROOT / "tests" / "conftest.py"]
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}"
        for path in files
        for line, text in notes(path)
        if (match := FIGURE.search(text))
    ]
    assert offending == []


def test_the_figure_pattern_catches_the_notes_it_is_meant_for() -> None:
    for note in (
        "msgspec's decoder (C, ~1 GB/s, about 0.3 us for 200 B)",
        "the 200 B round trip's median fell from 1.5x socat's to 1.0x",
        "measured on a subset of the suite, 23.4 -> 20.5 s",
        "measured: on 2 cores the p99 round trip at 200 B fell from 3.4x to 1.4x socat's",
    ):
        assert FIGURE.search(note), note
    for fact in ("Claude Code clamps the interval to 250 ms–30 s", "polls every 2 s when none is given"):
        assert not FIGURE.search(fact), fact
