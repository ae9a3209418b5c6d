"""The linters and the type checker are part of the suite, so the README's test command runs them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from support import paths

REPO = paths.REPO


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "wiretap", "tests", "bench"],
        ["ruff", "format", "--check", "wiretap", "tests", "bench"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_the_code_is_lint_clean_and_type_checks(command: list[str]) -> None:
    if importlib.util.find_spec(command[0]) is None:
        pytest.fail(f"{command[0]} is not installed: pip install -e '.[test]'")
    result = subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
