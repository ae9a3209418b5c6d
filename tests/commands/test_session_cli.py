"""Sessions as a person uses them: ``wiretap [--out DIR] -- CLIENT`` and ``wiretap show DIR`` on one clock.

The client is a scenario client installed as ``claude`` (tests/scenarios/turn_taking_client.py): it talks
to its stdio servers one after the other, so the true order of their messages is known.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.eventually import eventually
from support.sessions import SCENARIOS, WIRETAP, servers

from wiretap.recording.reader import read_all


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A PATH whose ``claude`` is the scenario client, and a HOME without any Claude Code config."""
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCENARIOS / "turn_taking_client.py"}" "$@"\n')
    claude.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}


def wiretap(cwd: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WIRETAP, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def session(
    cwd: Path, env: dict[str, str], out: str, *names: str, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return wiretap(
        cwd, env, "--out", out, "--", "claude", "--mcp-config", servers(*names), "--strict-mcp-config", *extra
    )


def manifest(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "manifest.json").read_text()))


def json_rows(cwd: Path, env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    result = wiretap(cwd, env, "show", *args, "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_sessions_recordings_interleave_on_the_clients_clock_with_a_server_column(
    tmp_path: Path, env: dict[str, str]
) -> None:
    run = session(tmp_path, env, "s", "alpha", "beta", extra=("--interleave",))
    assert run.returncode == 0, run.stderr
    folder = tmp_path / "s"
    rows = json_rows(tmp_path, env, "s")
    assert {r["server"] for r in rows} == {"alpha", "beta"}
    # The client asked alpha, then beta, then alpha again, each after the last answer: one clock shows that.
    messages = [(r["server"], r["lane"], r["id"]) for r in rows if r["event"]["kind"] == "message"]
    assert messages == [
        ("alpha", "IN", 1),
        ("alpha", "OUT", 1),
        ("beta", "IN", 1),
        ("beta", "OUT", 1),
        ("alpha", "IN", 2),
        ("alpha", "OUT", 2),
        ("beta", "IN", 2),
        ("beta", "OUT", 2),
    ]
    # t = 0 is the client's start; each recording is shifted by where its own t = 0 fell on that clock.
    start = manifest(folder)["client_started_monotonic"]
    for name in ("alpha", "beta"):
        header, events, _ = read_all(folder / f"{name}.jsonl")
        shift = header["monotonic_origin"] - start
        assert shift > 0  # the client started the tap
        assert [r["t"] for r in rows if r["server"] == name] == [round(e["t"] + shift, 6) for e in events]

    text = wiretap(tmp_path, env, "show", "s").stdout.splitlines()
    assert not any(line.startswith("==") for line in text)
    assert [line.split()[1] for line in text] == [r["server"] for r in rows]

    only_beta = json_rows(tmp_path, env, "s", "--server", "beta")
    assert only_beta == [r for r in rows if r["server"] == "beta"]
    unknown = wiretap(tmp_path, env, "show", "s", "--server", "gamma")
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "Error: s: no server 'gamma' in this session (it has: alpha, beta)"


def test_a_single_recordings_json_rows_name_its_server(tmp_path: Path, env: dict[str, str]) -> None:
    assert session(tmp_path, env, "s", "alpha").returncode == 0
    rows = json_rows(tmp_path, env, "s/alpha.jsonl")
    assert rows and {r["server"] for r in rows} == {"alpha"}
    assert rows[0]["t"] == 0.0 or rows[0]["t"] < 1


def test_following_a_running_session_shows_each_server_as_it_talks_and_stops_when_it_ends(
    tmp_path: Path, env: dict[str, str]
) -> None:
    go = tmp_path / "go"
    command = [*WIRETAP, "--out", "s", "--", "claude", "--mcp-config", servers("alpha", "beta"), "--wait-for", str(go)]
    wrapped = subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    follow: subprocess.Popen[str] | None = None
    try:
        eventually(lambda: (tmp_path / "s" / "manifest.json").exists(), "the session folder")
        follow = subprocess.Popen(
            [*WIRETAP, "show", "--follow", "--json", "s"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
        )
        assert follow.stdout is not None
        seen: list[dict[str, Any]] = []
        while sum(1 for r in seen if r["event"]["kind"] == "message") < 4:
            seen.append(json.loads(follow.stdout.readline()))
        assert {r["server"] for r in seen} == {"alpha"}  # beta has not started: the client waits for "go"
        go.touch()
        seen += [json.loads(line) for line in follow.stdout]
        follow.stdout.close()
        assert follow.wait(30) == 0
        assert wrapped.wait(30) == 0
    finally:
        for proc in (wrapped, follow):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert sorted(seen, key=lambda r: (r["server"], r["t"])) == sorted(
        json_rows(tmp_path, env, "s"), key=lambda r: (r["server"], r["t"])
    )


def test_out_on_a_folder_that_holds_a_session_records_the_next_run_beside_it_and_says_so(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert session(tmp_path, env, "s", "alpha").returncode == 0
    first = (tmp_path / "s" / "manifest.json").read_bytes()
    second = session(tmp_path, env, "s", "alpha", extra=("--exit", "5"))
    assert second.returncode == 5
    assert second.stderr.splitlines()[0] == "wiretap: s is not empty; recording this session in s.1"
    assert "wiretap: session s.1 (a new folder: --out was not empty)" in second.stderr
    assert (tmp_path / "s" / "manifest.json").read_bytes() == first
    assert manifest(tmp_path / "s")["exit"] == {"code": 0}
    assert manifest(tmp_path / "s.1")["exit"] == {"code": 5}
    assert sorted(p.name for p in (tmp_path / "s.1").iterdir()) == ["alpha.jsonl", "manifest.json"]
    listed = wiretap(tmp_path, env, "sessions", "--in", ".").stdout.splitlines()
    assert [(line.split()[0], line.split("[")[1].split("]")[0]) for line in listed] == [
        ("s.1", "exit 5"),
        ("s", "exit 0"),
    ]


def test_out_on_an_empty_folder_uses_it_and_on_a_file_refuses(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "empty").mkdir()
    assert session(tmp_path, env, "empty", "alpha").returncode == 0
    assert (tmp_path / "empty" / "manifest.json").exists()
    (tmp_path / "file").write_text("mine\n")
    refused = session(tmp_path, env, "file", "alpha")
    assert refused.returncode == 2
    assert refused.stderr.strip() == "Error: --out file: a file exists there; a session needs a folder"
    assert (tmp_path / "file").read_text() == "mine\n"


def test_a_session_without_recordings_says_so_instead_of_printing_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    run = wiretap(tmp_path, env, "--out", "s", "--", "claude", "--mcp-config", servers(), "--strict-mcp-config")
    assert run.returncode == 0, run.stderr
    expectations = tmp_path / "e.yaml"
    expectations.write_text("version: 1\nexpect:\n  - no_findings: {severity: error}\n")
    for command in (["show", "s"], ["report", "s"], ["check", "s", "--expect", str(expectations)]):
        result = wiretap(tmp_path, env, *command)
        assert result.returncode == 2, command
        assert result.stderr.strip() == "Error: s: this session has no recordings (the client had no MCP servers)"


def test_tap_out_dir_with_a_slash_creates_the_folder(tmp_path: Path, env: dict[str, str]) -> None:
    result = wiretap(tmp_path, env, "tap", "--out", "new/deeper/", "--name", "x", "--", "true")
    assert result.returncode == 0, result.stderr
    (recording,) = (tmp_path / "new" / "deeper").iterdir()
    assert recording.name.endswith("-x.jsonl")
    assert (tmp_path / "new" / "deeper").stat().st_mode & 0o777 == 0o700


def test_help_shows_how_to_wrap_a_client_and_a_client_name_alone_gets_the_hint(
    tmp_path: Path, env: dict[str, str]
) -> None:
    usage = wiretap(tmp_path, env, "--help").stdout.splitlines()
    assert usage[:2] == ["Usage: wiretap [--out DIR] -- CLIENT [ARGS]...", "   or: wiretap COMMAND [ARGS]..."]
    hint = wiretap(tmp_path, env, "claude", "-p", "hi")
    assert hint.returncode == 2
    assert (
        "Error: no command 'claude'; to run that client with its servers tapped: wiretap -- claude -p hi" in hint.stderr
    )


def test_the_session_clock_comes_from_the_monotonic_clock_and_else_from_wall_clock_starts() -> None:
    from wiretap.recording.folders import SessionFolder

    both = SessionFolder(Path("s"), {"started_monotonic": 100.0, "client_started": 0.25, "running": False})
    assert both.client_started_monotonic == 100.25
    assert both.clock_offset({"monotonic_origin": 101.0}) == pytest.approx(0.75)
    exact = SessionFolder(Path("s"), {"client_started_monotonic": 200.5, "started_monotonic": 1.0})
    assert exact.clock_offset({"monotonic_origin": 201.0}) == pytest.approx(0.5)
    walls = SessionFolder(Path("s"), {"started": "2026-07-28T10:00:00.000Z", "client_started": 0.5})
    assert walls.clock_offset({"started": "2026-07-28T10:00:02.000Z"}) == pytest.approx(1.5)
    # While a session runs, t = 0 is unknown until the client has started.
    assert SessionFolder(Path("s"), {"started_monotonic": 1.0, "running": True}).client_started_monotonic is None
    assert SessionFolder(Path("s"), {}).clock_offset({}) == 0.0
