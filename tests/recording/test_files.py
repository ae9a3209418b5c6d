"""Files wiretap writes are 0600, directories it creates 0700, and a planted symlink is never written through."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import paths
from support.taprun import run_tap

from wiretap.cli import cli
from wiretap.files import create_private, private_dirs, write_private
from wiretap.wrap.session import new_session_dir

RECORDING = paths.RECORDINGS / "demo.jsonl"
ECHO = [sys.executable, str(paths.SCENARIOS / "stdio_server.py"), "answer"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture(autouse=True)
def loose_umask() -> object:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_every_directory_created_on_the_way_is_private(tmp_path: Path) -> None:
    private_dirs(tmp_path / "a" / "b" / "c")
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3


def test_a_recording_s_intermediate_out_directories_are_private(tmp_path: Path) -> None:
    recording = tmp_path / "x" / "y" / "rec.jsonl"
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n"
    run_tap(recording, ECHO, [request])
    assert (mode(tmp_path / "x"), mode(tmp_path / "x" / "y"), mode(recording)) == (0o700, 0o700, 0o600)


def test_the_sessions_folder_and_the_session_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = new_session_dir(None, 0.0)
    assert mode(folder) == 0o700 and mode(folder.parent) == 0o700


def test_an_export_is_private_and_replaces_a_planted_symlink_instead_of_writing_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.svg"
    out.symlink_to(victim)
    result = CliRunner().invoke(cli, ["export", str(RECORDING), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and out.read_text().startswith("<svg") and mode(out) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.svg", "victim.txt"]


def test_a_recording_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "rec.jsonl").symlink_to(victim)
    with pytest.raises(FileExistsError):
        create_private(tmp_path / "rec.jsonl")
    assert victim.read_text() == "precious\n"


def test_write_private_replaces_a_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    target.write_text("old")
    target.chmod(0o644)
    write_private(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]
