"""``wiretap scrub``: secrets redacted again, the machine replaced by placeholders, and a report of
the copy says what the report of the original says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import paths
from support.taprun import run_tap

from wiretap.analysis.report import build_report
from wiretap.scrub.rewrite import Scrubber, scrub_recording

REPO = paths.REPO
ECHO = [sys.executable, str(REPO / "tests" / "scenarios" / "stdio_server.py"), "answer"]
SECRET = "ghp_" + "Z9" * 18


def wiretap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiretap", *args], capture_output=True, text=True, timeout=60)


def raw_recording(tmp_path: Path) -> Path:
    """A --no-redact recording, made here: it holds a token, this checkout's paths and this interpreter."""
    recording = tmp_path / "raw.jsonl"
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {"t": SECRET}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cwd": os.getcwd()}},
    ]
    chunks = [json.dumps(r).encode() + b"\n" for r in requests]
    run_tap(recording, [*ECHO, f"--api-key={SECRET}"], chunks, "--no-redact")
    return recording


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_no_redact_recording_comes_out_without_its_secrets_or_the_machine(tmp_path: Path) -> None:
    raw = raw_recording(tmp_path)
    assert SECRET in raw.read_text() and os.getcwd() in raw.read_text()
    result = wiretap("scrub", str(raw))
    scrubbed = tmp_path / "raw.scrubbed.jsonl"
    assert result.returncode == 0 and result.stdout.strip() == str(scrubbed)
    text = scrubbed.read_text()
    assert SECRET not in text and os.getcwd() not in text and sys.executable not in text
    assert os.path.expanduser("~") + "/" not in text
    header = events(scrubbed)[0]
    assert header["redacted"] is True and header["cwd"] == "<cwd>" and header["argv"][0] == Path(sys.executable).name
    assert (scrubbed.stat().st_mode & 0o777) == 0o600


def test_a_report_of_the_scrubbed_copy_gives_the_same_verdicts_and_figures(tmp_path: Path) -> None:
    for original in [raw_recording(tmp_path), *sorted((REPO / "recordings").glob("*.jsonl"))[:6]]:
        copy = tmp_path / f"{original.stem}.copy.jsonl"
        scrub_recording(original, copy, Scrubber())
        before, after = build_report(original).to_dict(), build_report(copy).to_dict()
        before["recording"].pop("source"), after["recording"].pop("source")
        assert before == after, original.name


def test_drop_stderr_and_drop_bodies_leave_out_what_they_name(tmp_path: Path) -> None:
    raw = raw_recording(tmp_path)
    out = tmp_path / "lean.jsonl"
    assert wiretap("scrub", str(raw), "-o", str(out), "--drop-stderr", "--drop-bodies", "tools/call").returncode == 0
    lean = events(out)
    assert not [e for e in lean if e["kind"] == "stderr"]
    messages = [e["msg"] for e in lean if e["kind"] == "message"]
    call, call_result = [m for m in messages if m.get("id") == 1]
    assert call["method"] == "tools/call" and call["params"] == call_result["result"] == "[dropped by wiretap scrub]"
    assert [m for m in messages if m.get("id") == 2][1]["result"] != "[dropped by wiretap scrub]"


def test_scrub_never_overwrites(tmp_path: Path) -> None:
    raw = raw_recording(tmp_path)
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    result = wiretap("scrub", str(raw), "-o", str(taken))
    assert result.returncode == 1 and "exists" in result.stderr and taken.read_text() == "mine\n"


def test_a_session_folder_is_scrubbed_whole(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    raw_recording(session).rename(session / "srv.jsonl")
    manifest = {
        "kind": "wiretap-session",
        "format": 1,
        "client_argv": ["claude", "--mcp-config", json.dumps({"mcpServers": {"s": {"env": {"API_KEY": SECRET}}}})],
        "cwd": os.getcwd(),
        "servers": [{"name": "srv", "recordings": ["srv.jsonl"]}],
    }
    (session / "manifest.json").write_text(json.dumps(manifest))
    (session / "srv.proxy.log").write_text(f"wiretap: recording to {os.getcwd()}/x token={SECRET}\n")
    assert wiretap("scrub", str(session)).returncode == 0
    copy = tmp_path / "session.scrubbed"
    assert sorted(p.name for p in copy.iterdir()) == ["manifest.json", "srv.jsonl", "srv.proxy.log"]
    for path in copy.iterdir():
        assert SECRET not in path.read_text() and os.getcwd() not in path.read_text(), path.name
    assert json.loads((copy / "manifest.json").read_text())["cwd"] == "<cwd>"


def test_a_file_that_is_not_a_recording_is_refused_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("token=abc123 and more\n")
    result = wiretap("scrub", str(other))
    assert result.returncode == 1 and result.stderr == f"Error: {other}: not a wiretap recording (no header line)\n"
    assert not (tmp_path / "notes.scrubbed.txt").exists()
