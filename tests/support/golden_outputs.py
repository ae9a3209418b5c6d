"""The outputs of `report`, `report --format json`, `show` and `export` for every shipped recording.

`python tests/support/golden_outputs.py capture` writes their SHA-256 digests to tests/golden_outputs.sha256 (and,
with `--files DIR`, the outputs themselves for a diff); test_golden_outputs compares the current code's
outputs to those digests, so a refactoring that changes any byte of any output fails.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: tests/ holds ``support``
from support import paths
from wiretap.cli import cli

ROOT = paths.REPO
RECORDINGS = ROOT / "recordings"
DIGESTS = paths.TESTS / "golden_outputs.sha256"

COMMANDS: dict[str, list[str]] = {
    "report.txt": ["report"],
    "report.json": ["report", "--format", "json"],
    "show.txt": ["show"],
    "export.svg": ["export", "--format", "svg"],
    "export.mmd": ["export", "--format", "mermaid"],
    "export.har": ["export", "--format", "har"],
    "export.html": ["export", "--format", "html"],
    "export.otlp": ["export", "--format", "otlp"],
}


def recordings() -> list[Path]:
    return sorted(RECORDINGS.glob("*.jsonl"))


def output(recording: Path, name: str) -> bytes:
    """The exit status and stdout of the command ``name`` names, run on ``recording``."""
    result = CliRunner().invoke(cli, [*COMMANDS[name], str(recording.relative_to(ROOT))], catch_exceptions=False)
    return f"exit {result.exit_code}\n".encode() + result.stdout_bytes


def outputs(recording: Path) -> Iterator[tuple[str, bytes]]:
    for name in COMMANDS:
        yield name, output(recording, name)


def digests() -> dict[str, str]:
    return {
        f"{recording.stem}/{name}": hashlib.sha256(data).hexdigest()
        for recording in recordings()
        for name, data in outputs(recording)
    }


def stored_digests() -> dict[str, str]:
    lines = DIGESTS.read_text().splitlines()
    return {key: digest for digest, key in (line.split("  ", 1) for line in lines)}


def capture(files: Path | None) -> None:
    DIGESTS.write_text("".join(f"{digest}  {key}\n" for key, digest in digests().items()))
    if files is not None:
        for recording in recordings():
            for name, data in outputs(recording):
                path = files / recording.stem / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    args = sys.argv[1:]
    if args[:1] != ["capture"] or len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--files"):
        sys.exit("usage: python tests/support/golden_outputs.py capture [--files DIR]")
    capture(Path(args[2]) if len(args) == 3 else None)
