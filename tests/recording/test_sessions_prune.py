"""``wiretap sessions --prune``: old sessions go by count and by age; running ones, and anything that is
not a wiretap session, stay.

The sessions are real ones, made by ``wiretap --out DIR -- claude`` with the scenario client installed
as ``claude`` (see tests/commands/test_session_cli.py), copied, with their manifest's start time set to the age
a test needs.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.eventually import eventually
from support.sessions import SCENARIOS, WIRETAP, servers

from wiretap.cli import cli
from wiretap.recording.events import utc_iso_ms
from wiretap.recording.paths import utc_stamp
from wiretap.wrap.prune import parse_duration

DAY = 86400.0
HOUR = 3600.0


def client_env(folder: Path) -> dict[str, str]:
    """A PATH whose ``claude`` is the scenario client, and a HOME without any Claude Code config."""
    bin_dir, home = folder / "bin", folder / "home"
    bin_dir.mkdir(parents=True)
    home.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCENARIOS / "turn_taking_client.py"}" "$@"\n')
    claude.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return client_env(tmp_path_factory.mktemp("client"))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """One finished session, as ``wiretap -- claude`` leaves it: alpha.jsonl, beta.jsonl, manifest.json."""
    cwd = tmp_path_factory.mktemp("made")
    run = subprocess.run(
        [*WIRETAP, "--out", "s", "--", "claude", "--mcp-config", servers("alpha", "beta"), "--strict-mcp-config"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (cwd / "s").iterdir()) == ["alpha.jsonl", "beta.jsonl", "manifest.json"]
    return cwd / "s"


def edit_manifest(folder: Path, **changes: object) -> None:
    """Set (or, with None, remove) manifest keys."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def aged(made: Path, root: Path, name: str, age: float) -> Path:
    """A copy of the made session under ``root``, started ``age`` seconds ago."""
    folder = root / name
    shutil.copytree(made, folder, symlinks=True)
    edit_manifest(folder, started=utc_iso_ms(time.time() - age))
    return folder


def size_of(folder: Path) -> int:
    """Bytes in the folder: its files, and each symlink as the length of what it names."""
    total = 0
    for path in folder.rglob("*"):
        if path.is_symlink():
            total += len(os.readlink(path))
        elif path.is_file():
            total += path.stat().st_size
    return total


def names(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def prune(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WIRETAP, "sessions", "--in", "sessions", "--prune", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_keep_n_removes_all_but_the_n_newest_and_says_what_each_freed(tmp_path: Path, made: Path) -> None:
    root = tmp_path / "sessions"
    old = aged(made, root, "old", 3 * DAY)
    older = aged(made, root, "older", 5 * DAY)
    aged(made, root, "new", HOUR)
    freed = {"old": size_of(old), "older": size_of(older)}

    result = prune(tmp_path, "--keep", "1")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"removed sessions/old  {freed['old']} bytes",
        f"removed sessions/older  {freed['older']} bytes",
        f"removed 2 sessions, {freed['old'] + freed['older']} bytes; kept 1; skipped 0",
    ]
    assert result.stderr == ""  # no progress bar: stderr is not a terminal
    assert names(root) == ["new"]


def test_older_than_removes_only_sessions_that_started_longer_ago(tmp_path: Path, made: Path) -> None:
    root = tmp_path / "sessions"
    gone = aged(made, root, "forty-days", 40 * DAY)
    aged(made, root, "ten-days", 10 * DAY)
    aged(made, root, "an-hour", HOUR)
    freed = size_of(gone)

    result = prune(tmp_path, "--older-than", "30d")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"removed sessions/forty-days  {freed} bytes",
        f"removed 1 session, {freed} bytes; kept 2; skipped 0",
    ]
    assert names(root) == ["an-hour", "ten-days"]


@pytest.mark.parametrize(
    ("keep", "remaining"),
    [("1", ["an-hour", "ten-days"]), ("3", ["an-hour", "ten-days", "thirty-five-days"])],
    ids=["keep-1", "keep-3"],
)
def test_keep_and_older_than_together_remove_only_sessions_both_let_go(
    tmp_path: Path, made: Path, keep: str, remaining: list[str]
) -> None:
    root = tmp_path / "sessions"
    for name, age in {"forty-days": 40, "thirty-five-days": 35, "ten-days": 10, "an-hour": 1 / 24}.items():
        aged(made, root, name, age * DAY)

    result = prune(tmp_path, "--keep", keep, "--older-than", "30d")

    assert result.returncode == 0, result.stderr
    assert names(root) == remaining


def test_dry_run_lists_what_would_go_and_removes_nothing(tmp_path: Path, made: Path) -> None:
    root = tmp_path / "sessions"
    old = aged(made, root, "old", 2 * DAY)
    aged(made, root, "new", HOUR)
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    result = prune(tmp_path, "--keep", "1", "--dry-run")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"would remove sessions/old  {size_of(old)} bytes",
        f"would remove 1 session, {size_of(old)} bytes; kept 1; skipped 0",
    ]
    assert {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


@pytest.fixture
def held(tmp_path: Path, made: Path) -> Iterator[Path]:
    """A finished session whose alpha.jsonl a live process holds locked, as a recorder writing it does."""
    folder = aged(made, tmp_path / "sessions", "held", 2 * DAY)
    hold = "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND); "
    hold += "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(folder / "alpha.jsonl")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield folder
    finally:
        holder.stdin.close()
        holder.stdout.close()
        assert holder.wait(30) == 0


def test_keep_0_leaves_a_running_session_and_one_whose_recording_is_still_written(
    tmp_path: Path, made: Path, env: dict[str, str], held: Path
) -> None:
    root = tmp_path / "sessions"
    old = aged(made, root, "old", 3 * DAY)
    freed = size_of(old)
    go = tmp_path / "go"
    command = [*WIRETAP, "--out", "sessions/live", "--", "claude", "--mcp-config", servers("alpha", "beta")]
    live = subprocess.Popen(
        [*command, "--wait-for", str(go)], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        eventually(lambda: (root / "live" / "manifest.json").exists(), "the live session's manifest")
        result = prune(tmp_path, "--keep", "0")
        go.touch()
        _, live_stderr = live.communicate(timeout=60)
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "skipped sessions/held: running (a process is writing alpha.jsonl)",
        "skipped sessions/live: running (its manifest says so)",
        f"removed sessions/old  {freed} bytes",
        f"removed 1 session, {freed} bytes; kept 0; skipped 2",
    ]
    assert names(root) == ["held", "live"]
    assert live.returncode == 0, live_stderr
    assert json.loads((root / "live" / "manifest.json").read_text())["running"] is False
    assert names(root / "live") == ["alpha.jsonl", "beta.jsonl", "manifest.json"]
    assert names(held) == ["alpha.jsonl", "beta.jsonl", "manifest.json"]


def test_symlinks_are_never_followed_and_folders_that_are_not_sessions_stay(tmp_path: Path, made: Path) -> None:
    root, outside = tmp_path / "sessions", tmp_path / "outside"
    elsewhere = aged(made, outside, "elsewhere", 9 * DAY)
    (outside / "precious").mkdir()
    (outside / "precious" / "keep.txt").write_text("mine\n")
    old = aged(made, root, "old", 9 * DAY)
    (old / "escape").symlink_to(outside / "precious")
    (old / "escape-file").symlink_to(outside / "precious" / "keep.txt")
    (root / "link").symlink_to(elsewhere)
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("mine\n")
    (root / "other").mkdir()
    (root / "other" / "manifest.json").write_text('{"kind": "something-else"}\n')
    (root / "linked-manifest").mkdir()
    (root / "linked-manifest" / "manifest.json").symlink_to(elsewhere / "manifest.json")
    (root / "stray.txt").write_text("mine\n")
    freed = size_of(old)

    result = prune(tmp_path, "--keep", "0")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "skipped sessions/linked-manifest: not read as a session: manifest.json is not a file wiretap wrote",
        "skipped sessions/other: not read as a session: manifest.json: not a wiretap session manifest",
        f"removed sessions/old  {freed} bytes",
        f"removed 1 session, {freed} bytes; kept 0; skipped 2",
    ]
    assert names(root) == ["link", "linked-manifest", "notes", "other", "stray.txt"]
    assert names(elsewhere) == ["alpha.jsonl", "beta.jsonl", "manifest.json"]
    assert (outside / "precious" / "keep.txt").read_text() == "mine\n"
    assert (root / "link").is_symlink()


def test_a_sessions_age_falls_back_to_its_folder_name_and_an_unknown_one_is_never_pruned(
    tmp_path: Path, made: Path
) -> None:
    root = tmp_path / "sessions"
    stamped = aged(made, root, f"{utc_stamp(time.time() - 40 * DAY)}.1", 0)
    recent = aged(made, root, utc_stamp(time.time() - HOUR), 0)
    unknown = aged(made, root, "custom", 0)
    unsure = aged(made, root, "unsure", 40 * DAY)
    for folder in (stamped, recent, unknown):
        edit_manifest(folder, started=None)
    edit_manifest(unsure, running=None)
    freed = size_of(stamped)

    result = prune(tmp_path, "--older-than", "30d")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "skipped sessions/custom: no start time in its manifest or its name",
        "skipped sessions/unsure: its manifest does not say the session ended",
        f"removed sessions/{stamped.name}  {freed} bytes",
        f"removed 1 session, {freed} bytes; kept 1; skipped 2",
    ]
    assert names(root) == sorted(["custom", "unsure", recent.name])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prune"], "--prune needs --keep N or --older-than DURATION (or both); it never removes every session"),
        (["--prune", "--keep", "-1"], "--keep -1: not a number of sessions (a whole number, 0 or more)"),
        (["--prune", "--keep", "ten"], "--keep ten: not a number of sessions (a whole number, 0 or more)"),
        (["--prune", "--older-than", "30"], "--older-than 30: not a duration (a whole number and s, m, h or d: 45s, "),
        (["--prune", "--older-than", "-5d"], "--older-than -5d: not a duration (a whole number and s, m, h or d: "),
        (["--prune", "--older-than", "1.5d"], "--older-than 1.5d: not a duration (a whole number and s, m, h or d: "),
        (["--prune", "--keep", "1", "--limit", "5"], "--limit lists sessions; it does not go with --prune"),
        (["--keep", "1"], "--keep goes with --prune"),
        (["--older-than", "1d"], "--older-than goes with --prune"),
        (["--dry-run"], "--dry-run goes with --prune"),
    ],
)
def test_bad_input_is_one_line_naming_the_value_with_status_2_and_removes_nothing(
    tmp_path: Path, made: Path, args: list[str], message: str
) -> None:
    root = tmp_path / "sessions"
    aged(made, root, "old", 90 * DAY)

    result = CliRunner().invoke(cli, ["sessions", "--in", str(root), *args])

    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"Error: {message}")
    assert result.stdout == ""
    assert names(root) == ["old"]


@pytest.mark.parametrize(("text", "seconds"), [("45s", 45), ("90m", 5400), ("12h", 43200), ("30d", 2592000), ("0s", 0)])
def test_a_duration_is_a_whole_number_of_seconds_minutes_hours_or_days(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


def test_a_terminal_gets_a_progress_bar_on_stderr_while_the_lines_stay_on_stdout(tmp_path: Path, made: Path) -> None:
    root = tmp_path / "sessions"
    old = aged(made, root, "old", 2 * DAY)
    freed = size_of(old)
    controller, terminal = pty.openpty()
    command = [*WIRETAP, "sessions", "--in", "sessions", "--prune", "--keep", "0"]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=terminal, text=True)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's other end closed: the process is done with it
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    stdout, _ = proc.communicate(timeout=60)

    assert proc.returncode == 0
    assert stdout.splitlines() == [
        f"removed sessions/old  {freed} bytes",
        f"removed 1 session, {freed} bytes; kept 0; skipped 0",
    ]
    assert b"old" in shown and b"100%" in shown
    assert names(root) == []


def test_a_folder_that_cannot_be_removed_is_named_on_stderr_and_the_status_is_3(
    tmp_path: Path, made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "sessions"
    aged(made, root, "old", 2 * DAY)

    def refuse(path: Path) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("wiretap.wrap.prune.shutil.rmtree", refuse)
    result = CliRunner().invoke(cli, ["sessions", "--in", str(root), "--prune", "--keep", "0"])

    assert result.exit_code == 3
    assert result.stderr == f"could not remove {root / 'old'}: Permission denied\n"
    assert result.stdout == "removed 0 sessions, 0 bytes; kept 0; skipped 0; could not remove 1\n"
    assert names(root) == ["old"]
