"""The report is built in one pass: report, check and the HTML and SVG exports open the recording once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner
from support import paths

from wiretap.cli import cli
from wiretap.recording.reader import RecordingReader

REPO = paths.REPO
FORM = REPO / "recordings" / "cc-ext-form.jsonl"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every recording read, whichever module opens it."""
    seen: list[Path] = []
    original = RecordingReader.__init__

    def counting(self: RecordingReader, file: IO[bytes], path: Path, first_line: bytes | None = None) -> None:
        seen.append(Path(path))
        original(self, file, path, first_line)

    monkeypatch.setattr(RecordingReader, "__init__", counting)
    yield seen


@pytest.mark.parametrize(
    "command",
    [
        ["report", str(FORM)],
        ["report", str(FORM), "--format", "html"],
        ["export", str(FORM), "--format", "html"],
        ["export", str(FORM), "--format", "svg"],
        ["check", str(FORM), "--expect", str(REPO / "recordings" / "cc-ext-form.expect.yaml")],
    ],
    ids=["report", "report-html", "export-html", "export-svg", "check"],
)
def test_each_command_reads_the_recording_once(command: list[str], opened: list[Path]) -> None:
    result = CliRunner().invoke(cli, command)
    assert result.exit_code in (0, 1), result.output
    assert opened == [FORM]
