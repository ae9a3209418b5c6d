"""Running a wiretap command in-process as a user would, and reading its one-line error and exit status."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from wiretap.cli import cli


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stdout, result.stderr


def one_error(*args: str | Path) -> tuple[int, str]:
    """The exit status and the one error line."""
    code, _, err = run(*args)
    lines = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, err
    return code, lines[0].removeprefix("Error: ")
