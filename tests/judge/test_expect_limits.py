"""A hostile expectations file (a billion laughs, deep nesting, a huge file) is a bad file: exit 2,
one line naming the file and line, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import paths

REPO = paths.REPO
DEMO = REPO / "recordings" / "demo.jsonl"


def _laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, levels):
        prev, cur = chr(ord("a") + n - 1), chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "version: 1\n" + "\n".join(lines) + "\nexpect:\n  - messages: {method: x, min: 1}\n"


HOSTILE = {
    "billion-laughs": (_laughs(), 7, "expands to more than"),
    "deep-flow": ("version: 1\nexpect: " + "[" * 100_000 + "]" * 100_000 + "\n", 2, "nested deeper than 64"),
    "deep-block": (
        "version: 1\nexpect:\n" + "".join(" " * n + "- \n" for n in range(0, 400, 2)),
        66,
        "nested deeper than 64",
    ),
    "many-aliases": (
        "version: 1\nx: &x 1\nexpect:\n" + "".join("  - messages: {method: *x}\n" for _ in range(150)),
        104,
        "more than 100 aliases",
    ),
}


def check(rules: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "wiretap", "check", str(DEMO), "--expect", str(rules)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_expectations_file_exits_2_naming_file_and_line(case: str, tmp_path: Path) -> None:
    body, line, message = HOSTILE[case]
    rules = tmp_path / f"{case}.yaml"
    rules.write_text(body)
    result = check(rules)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith(f"Error: {rules}:{line}: ") and message in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_a_file_over_a_mebibyte_is_refused_unread(tmp_path: Path) -> None:
    rules = tmp_path / "huge.yaml"
    rules.write_text("version: 1\nexpect:\n" + "# padding\n" * 120_000)
    result = check(rules)
    assert result.returncode == 2 and result.stderr == f"Error: {rules}: larger than 1 MiB; not an expectations file\n"
