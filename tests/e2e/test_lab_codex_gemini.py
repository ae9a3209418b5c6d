"""``wiretap lab --scripted -- codex`` and ``-- gemini`` with the real Codex 0.171.0 and Gemini CLI 0.61.0,
offline: the shipped fake model APIs call the lab's tools in the walk's order, neither client declares
tasks, so the probe answers inline, and the investigation says what the probe's own timers made happen.
The user's home and keys are set up here and must come out untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import peers

from wiretap.analysis.session_report import build_session_report
from wiretap.lab.investigation import build_investigation
from wiretap.recording.folders import open_session

pytestmark = pytest.mark.slow

CONDITIONS = "forgotten-task,progress,slow-answer"
WALKED = [("forgotten_task", {"forget_after_s": 2}), ("progress_call", {"count": 4, "every_s": 0.5})]
WALKED += [("slow_call", {"seconds": 3})]
CLOSE = 0.25
"""How far an inline answer may come after the probe's timer: the probe's own loop, on a busy machine."""


def binary(client: str) -> Path:
    return peers.codex() if client == "codex" else peers.gemini_cli()


@pytest.fixture(scope="module", params=["codex", "gemini"])
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    client = str(request.param)
    root = tmp_path_factory.mktemp(f"lab-{client}")
    home = root / "user-home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('[mcp_servers.users_own]\ncommand = "false"\n')
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"users-own": {"command": "false"}}}))
    files = {path: path.read_bytes() for path in home.rglob("*") if path.is_file()}
    env = {**os.environ, "HOME": str(home), "OPENAI_API_KEY": "sk-users-own", "GEMINI_API_KEY": "users-own"}
    session = root / "session"
    command = [sys.executable, "-m", "wiretap", "lab", "--scripted", "--conditions", CONDITIONS, "-o", str(session)]
    done = subprocess.run(
        [*command, "--", str(binary(client))], env=env, cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = build_session_report(session)
    [(_, recording)] = open_session(session).recordings_of("wiretap-lab")
    events = [json.loads(line) for line in recording.read_text().splitlines()]
    return {"client": client, "home": home, "files": files, "session": session, "stdout": done.stdout,
            "events": events, "investigation": build_investigation(report)}  # fmt: skip


def test_the_client_makes_the_walks_calls_in_order_with_its_arguments(lab: dict[str, Any]) -> None:
    calls = [
        (e["msg"]["params"]["name"], e["msg"]["params"]["arguments"])
        for e in lab["events"]
        if e.get("kind") == "message" and e["dir"] == "c2s" and e["msg"].get("method") == "tools/call"
    ]
    assert calls == WALKED
    methods = {e["msg"].get("method") for e in lab["events"] if e.get("kind") == "message"}
    assert not [m for m in methods if str(m).startswith("tasks/")], "neither client asks for a task"


def test_each_row_says_what_the_probes_timers_made_happen(lab: dict[str, Any]) -> None:
    rows = {r.condition: r for r in lab["investigation"].rows}
    forgotten, progress, slow = rows["forgotten-task"], rows["progress"], rows["slow-answer"]
    assert forgotten.verdict == "a one-shot call: answered inline, nothing to poll"
    assert abs((forgotten.evidence[-1] - forgotten.evidence[0]) - 2) <= CLOSE
    assert progress.did.startswith("4 progress notifications") and len(progress.evidence) == 5
    assert slow.verdict.startswith("waits at least") and abs((slow.evidence[-1] - slow.evidence[0]) - 3) <= CLOSE
    client = {"codex": "codex-mcp-client", "gemini": "gemini-cli-mcp-client"}[lab["client"]]
    assert lab["investigation"].client == client


def test_the_users_home_and_keys_are_neither_read_nor_written(lab: dict[str, Any]) -> None:
    after = {path: path.read_bytes() for path in lab["home"].rglob("*") if path.is_file()}
    assert after == lab["files"]
    manifest = json.loads((lab["session"] / "manifest.json").read_text())
    assert [s["name"] for s in manifest["servers"]] == ["wiretap-lab"], "the user's own server is not started"
    for path in lab["session"].rglob("*"):
        if path.is_file():
            assert b"sk-users-own" not in path.read_bytes() and b"users-own" not in path.read_bytes(), path
