"""Startup findings with the real clients, offline, through ``wiretap -- CLIENT``: Claude Code 2.1.332 and
Codex 0.171.0 against tests/scenarios/stdio_server.py (``banner``, ``mcp``, ``slow-start``).

Both clients tolerate a banner before the handshake (they skip the line and carry on). Codex, with
``startup_timeout_sec = 2`` and a server that takes 8 s, kills the tap at its limit: the server's
heartbeats on stderr stop there. Codex does not wait for its servers before the first model turn, so the
fake model API holds its first answer for ``HOLD`` seconds to keep Codex running past its limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from scenarios.fake_model_apis import Call, FakeModelAPIs
from scenarios.stdio_server import BANNER
from support import paths
from support.claude import offline_env, stdio_server, write_mcp_config

from wiretap.analysis.model import FindingRow
from wiretap.analysis.session_report import build_session_report
from wiretap.recording.reader import read_all

pytestmark = pytest.mark.slow

SERVER = paths.SCENARIOS / "stdio_server.py"
WIRETAP = [sys.executable, "-m", "wiretap"]
CODES = {"stdout-not-json", "slow-start", "start-failed"}
HOLD = 3.0


def _findings(session: Path) -> list[FindingRow]:
    return [f for f in build_session_report(session).findings if f.code in CODES]


def _events(session: Path) -> list[dict[str, Any]]:
    return read_all(session / "scen.jsonl")[1]


def claude_session(root: Path, claude_code_bin: Path, *mode: str) -> Path:
    with FakeMessagesAPI([ToolUse("mcp__scen__echo", {"text": "hi"})]) as api:
        env = offline_env(root, api.url)
        config = write_mcp_config(root / "mcp.json", {"scen": stdio_server(sys.executable, [str(SERVER), *mode])})
        claude = [str(claude_code_bin), "-p", "call echo", "--mcp-config", str(config), "--strict-mcp-config"]
        claude += ["--allowedTools", "mcp__scen__echo", "--output-format", "stream-json", "--verbose"]
        argv = [*WIRETAP, "--out", str(root / "session"), "--", *claude, "--no-session-persistence"]
        subprocess.run(argv, env=env, cwd=root, capture_output=True, timeout=180, stdin=subprocess.DEVNULL, check=True)
    return root / "session"


class HeldAPI(FakeModelAPIs):
    def __init__(self, script: list[Call], hold: float) -> None:
        super().__init__(script)
        self.hold = hold

    def codex(self, body: dict[str, Any]) -> bytes:
        if len(self.requests) == 1:
            time.sleep(self.hold)  # the slow model turn keeps Codex running: the condition under test
        return super().codex(body)


def codex_session(root: Path, *mode: str, startup_timeout: float | None = None, hold: float = 0.0) -> Path:
    from support import peers

    home = root / "home" / ".codex"
    home.mkdir(parents=True)
    (root / "project").mkdir()
    with HeldAPI([Call("scen", "echo", {"text": "hi"})], hold) as api:
        lines = [
            'model = "fake-model"',
            'model_provider = "fake"',
            "[features]",
            "plugins = false",
            "remote_plugin = false",
            "[model_providers.fake]",
            'name = "fake"',
            f'base_url = "{api.url}/v1"',
            'env_key = "FAKE_API_KEY"',
            'wire_api = "responses"',
            "[mcp_servers.scen]",
            f"command = {json.dumps(sys.executable)}",
            f"args = {json.dumps([str(SERVER), *mode])}",
        ]
        if startup_timeout is not None:
            lines.append(f"startup_timeout_sec = {startup_timeout}")
        (home / "config.toml").write_text("\n".join(lines) + "\n")
        keep = ("PATH", "LANG", "LC_ALL", "WIRETAP_PEERS_DIR", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env |= {"HOME": str(root / "home"), "CODEX_HOME": str(home), "FAKE_API_KEY": "sk-fake"}
        codex = [str(peers.codex()), "exec", "--skip-git-repo-check", "--ephemeral", "-c", "approval_policy=never"]
        argv = [*WIRETAP, "--out", str(root / "session"), "--", *codex, "-s", "danger-full-access", "call the tools"]
        subprocess.run(
            argv, env=env, cwd=root / "project", capture_output=True, timeout=180, stdin=subprocess.DEVNULL, check=True
        )
    return root / "session"


def _banner_and_next(events: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    raw = next(e for e in events if e["kind"] == "message" and e.get("raw") == BANNER)
    after = next(e for e in events if e["kind"] == "message" and e["dir"] == "c2s" and e["t"] >= raw["t"])
    init = next(
        e
        for e in events
        if e["kind"] == "message" and e["dir"] == "c2s" and e.get("msg", {}).get("method") == "initialize"
    )
    answer = next(
        e
        for e in events
        if e["kind"] == "message" and e["dir"] == "s2c" and e.get("msg", {}).get("id") == init["msg"]["id"]
    )
    return raw, after, answer


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_real_client_keeps_going_after_a_banner_and_the_report_says_so(
    client: str, claude_code_bin: Path, tmp_path: Path
) -> None:
    session = (
        claude_session(tmp_path, claude_code_bin, "banner") if client == "claude" else codex_session(tmp_path, "banner")
    )
    events = _events(session)
    raw, after, answer = _banner_and_next(events)
    offset = build_session_report(session).parts[0].recording.offset
    [finding] = _findings(session)
    assert (finding.code, finding.severity, finding.count) == ("stdout-not-json", "warning", 1)
    assert finding.message == (
        "the server wrote a line on stdout that is not JSON-RPC before answering the handshake (a banner): "
        f"first {BANNER!r} ({len(BANNER)} bytes) at {raw['t'] + offset:.3f} s; the client kept going "
        f"(sent {after['msg']['method']} at {after['t'] + offset:.3f} s); "
        f"the handshake was answered at {answer['t'] + offset:.3f} s"
    )


def test_a_clean_claude_code_session_raises_no_startup_finding(claude_code_bin: Path, tmp_path: Path) -> None:
    session = claude_session(tmp_path, claude_code_bin, "mcp")
    assert [e["msg"]["method"] for e in _events(session) if e["kind"] == "message" and "method" in e.get("msg", {})][
        :2
    ] == [
        "server/discover",
        "initialize",
    ]
    assert _findings(session) == []


def test_codex_kills_a_server_slower_than_its_startup_timeout_and_the_report_says_start_failed(tmp_path: Path) -> None:
    session = codex_session(tmp_path, "slow-start", "8", startup_timeout=2, hold=HOLD)
    manifest = json.loads((session / "manifest.json").read_text())
    assert manifest["servers"][0]["limits"] == {"startup_timeout_sec": "2"}
    events = _events(session)
    spawn = next(e for e in events if e["kind"] == "spawn")
    heartbeats = [e for e in events if e["kind"] == "stderr" and e["text"].startswith("still starting")]
    assert events[-1]["ended"] == "relay_died" and not any(e["kind"] == "message" and e["dir"] == "s2c" for e in events)
    assert 1.5 <= heartbeats[-1]["t"] - spawn["t"] < 2.5  # alive until Codex's limit, not after it
    [finding] = _findings(session)
    assert (finding.code, finding.severity) == ("start-failed", "error")
    assert "without an answer to initialize" in finding.message
    assert "Codex's startup limit of 2 s (startup_timeout_sec = 2)" in finding.message
    assert finding.message.endswith(f"still starting: {heartbeats[-1]['text'].split(': ')[1]}")
