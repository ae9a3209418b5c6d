"""The ``wiretap`` command refuses Windows in one line and a documented status, before importing anything POSIX-only."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import paths

from wiretap import entry
from wiretap.errors import ExitStatus

REPO = paths.REPO


def test_windows_is_refused_in_one_line_on_stderr_with_status_4(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(SystemExit) as exited:
        entry.main()
    assert exited.value.code == ExitStatus.UNSUPPORTED == 4
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "Error: wiretap does not run on Windows yet (Linux and macOS only)\n"


def test_the_refusal_comes_before_any_posix_only_module_is_imported() -> None:
    # On Windows these modules do not exist; importing one before the check would be a traceback.
    code = (
        "import sys\n"
        "for name in ('fcntl', 'resource', 'termios', 'pty', 'wiretap.cli'):\n"
        "    sys.modules[name] = None\n"
        "sys.platform = 'win32'\n"
        "import runpy\n"
        "runpy.run_module('wiretap', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr.splitlines() == ["Error: wiretap does not run on Windows yet (Linux and macOS only)"]


def test_on_linux_and_macos_the_entry_point_runs_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["wiretap", "--version"])
    with pytest.raises(SystemExit) as exited:
        entry.main()
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("wiretap, version ")


def test_the_installed_command_is_the_entry_point() -> None:
    assert 'wiretap = "wiretap.entry:main"' in (REPO / "pyproject.toml").read_text()
