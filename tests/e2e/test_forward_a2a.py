"""The real a2a-sdk 1.3.0 client through ``wiretap proxy --forward`` (plain HTTP, absolute-form): it is
given the agent's own URL, its card passes unrewritten, and the recording holds what the agent read and
wrote, with the tasks reported as in reverse mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.a2a_peers import BINDINGS, PEER_SCRIPTS, TIMEOUT, card_urls, normalized, origin, running_agent
from support.forwardrun import running_forward

pytestmark = pytest.mark.slow


def test_an_a2a_client_through_forward_mode_gets_the_cards_unrewritten_and_the_tasks_are_reported(
    a2a_sdk_python: Path, tmp_path: Path
) -> None:
    with running_agent(a2a_sdk_python, tmp_path / "direct") as agent:
        direct = subprocess.run(
            [str(a2a_sdk_python), str(PEER_SCRIPTS / "a2a_sdk_client.py"), agent.url],
            cwd=tmp_path / "direct", capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
    out = tmp_path / "rec"
    with running_agent(a2a_sdk_python, tmp_path / "forward") as agent, running_forward(out) as run:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()} | run.env
        client = subprocess.run(
            [str(a2a_sdk_python), str(PEER_SCRIPTS / "a2a_sdk_client.py"), agent.url],
            cwd=tmp_path / "forward", capture_output=True, text=True, timeout=TIMEOUT, env=env,
        )  # fmt: skip
    assert client.returncode == 0, client.stderr
    got, expected = json.loads(client.stdout), json.loads(direct.stdout)
    for binding in BINDINGS:
        assert normalized(got[binding]) == normalized(expected[binding]), binding
    agent_origin = origin(agent.url)
    assert {origin(url) for card in got["cards"] for url in card_urls(card)} == {agent_origin}
    assert {origin(url) for _, url in got["requests"]} == {agent_origin}
    events = run.events(agent_origin)
    assert [e for e in events if e["kind"] == "rewrite"] == []
    cards = [
        e for e in events if e["kind"] == "message" and e["dir"] == "s2c" and "supportedInterfaces" in e.get("msg", {})
    ]
    assert [c["msg"] for c in cards] == got["cards"]
    received = [(r["method"], r["path"]) for r in agent.requests()]
    assert [(e["method"], e["path"]) for e in events if e["kind"] == "http_request"] == received
    recording = next(out.glob("*.jsonl"))
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "report", "--format", "json", str(recording)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    report = json.loads(done.stdout)
    states = sorted({task["final_state"] for task in report["tasks"]})
    assert len(report["tasks"]) == 4 * len(BINDINGS)  # four tasks a binding, each seen to its end
    assert states == ["TASK_STATE_CANCELED", "TASK_STATE_CANCELLED", "TASK_STATE_COMPLETED", "canceled", "completed"]
