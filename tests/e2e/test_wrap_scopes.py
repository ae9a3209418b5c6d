"""Every server Codex and Gemini CLI really load, from each scope, and Gemini's A2A remote subagents, with the
real clients (Codex 0.171.0, Gemini CLI 0.61.0) offline.

Codex reads a trusted project's ``.codex/config.toml`` and the ``--profile`` file; both servers go
through wiretap, and the tools Codex offers the model are the same as without it. Gemini calls a
remote subagent (the real a2a-sdk 1.3.0 agent) through ``invoke_agent``: the card and the task it
streams are in the session, and ``wiretap report`` reads them.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_model_apis import Call, FakeModelAPIs
from support import paths
from support.codex_gemini import SCENARIO, SCRIPT, WIRETAP, client_env, files_under, run_client

from wiretap.recording.reader import read_all

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
AGENT_CALL = [Call("agents", "invoke_agent", {"agent_name": "reporter", "prompt": "the weather"})]


def _codex_tools(requests: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, list[str]]]:
    body = next(b for path, b in requests if path.endswith("/responses"))
    return sorted(
        (t["name"], sorted(x["name"] for x in t.get("tools") or []))
        for t in body.get("tools") or []
        if t.get("type") == "namespace"
    )


def _codex_in_a_project(root: Path, http_url: str, wrapped: bool) -> tuple[subprocess.CompletedProcess[str], Any]:
    from support import peers

    home, repo = root / "home" / ".codex", root / "repo"
    home.mkdir(parents=True)
    (repo / ".codex").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with FakeModelAPIs(SCRIPT) as api:
        (home / "config.toml").write_text(
            f'model = "fake-model"\nmodel_provider = "fake"\n[projects.{json.dumps(str(repo))}]\n'
            'trust_level = "trusted"\n[features]\nplugins = false\nremote_plugin = false\n'
            f'[model_providers.fake]\nname = "fake"\nbase_url = "{api.url}/v1"\nenv_key = "FAKE_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        (repo / ".codex" / "config.toml").write_text(
            f"[mcp_servers.scenario]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(SCENARIO)])}\n"
        )
        (home / "work.config.toml").write_text(f"[mcp_servers.web]\nurl = {json.dumps(http_url)}\n")
        env = client_env(root) | {"CODEX_HOME": str(home), "FAKE_API_KEY": "sk-fake"}
        codex = [str(peers.codex()), "exec", "--profile", "work", "--ephemeral", "-c", "approval_policy=never"]
        codex += ["-s", "danger-full-access", "call the tools"]
        argv = [*WIRETAP, "--out", str(root / "session"), "--", *codex] if wrapped else codex
        return run_client(argv, env, repo), api


def test_codex_servers_from_a_trusted_project_and_a_profile_are_recorded_and_its_tools_are_unchanged(
    http_server: str, tmp_path: Path
) -> None:
    straight, direct = _codex_in_a_project(tmp_path / "straight", http_server, wrapped=False)
    assert straight.returncode == 0, straight.stderr[-3000:]
    result, api = _codex_in_a_project(tmp_path / "wrapped", http_server, wrapped=True)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((tmp_path / "wrapped" / "session" / "manifest.json").read_text())
    project = tmp_path / "wrapped" / "repo" / ".codex" / "config.toml"
    scopes = {s["name"]: (s["scope"], s["transport"]) for s in manifest["servers"]}
    assert scopes == {"scenario": (f"project {project}", "stdio"), "web": ("profile work", "http")}
    for name, arguments in (("scenario", {"text": "hi"}), ("web", {"a": 2, "b": 40})):
        events = read_all(tmp_path / "wrapped" / "session" / f"{name}.jsonl")[1]
        calls = [e["msg"] for e in events if e["kind"] == "message" and e["msg"].get("method") == "tools/call"]
        assert [c["params"]["arguments"] for c in calls] == [arguments]
    tools = dict(_codex_tools(api.requests))
    assert _codex_tools(api.requests) == _codex_tools(direct.requests)
    assert "echo" in tools["mcp__scenario"] and "add" in tools["mcp__web"], tools


@contextlib.contextmanager
def a2a_agent(python: Path, log: Path) -> Iterator[str]:
    """The a2a-sdk agent's base URL; its card offers JSON-RPC and REST, 1.0 and 0.3."""
    argv = [str(python), str(PEER_SCRIPTS / "a2a_sdk_agent.py"), "--request-log", str(log)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            url = proc.stdout.readline().strip() if selector.select(60) else ""
        assert url.startswith("http://127.0.0.1:")
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
        proc.stdout.close()


def _gemini_with_a_remote_agent(
    root: Path, agent_url: str, wrapped: bool
) -> tuple[subprocess.CompletedProcess[str], Any, dict[Path, bytes]]:
    from support import peers

    agents, project = root / "home" / ".gemini" / "agents", root / "project"
    agents.mkdir(parents=True)
    project.mkdir()
    card = f"{agent_url}/.well-known/agent-card.json"
    (agents / "reporter.md").write_text(f"---\nkind: remote\nname: reporter\nagent_card_url: {card}\n---\n")
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (root / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
    before = files_under(root / "home")
    with FakeModelAPIs(AGENT_CALL) as api:
        env = client_env(root) | {
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": api.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        gemini = [str(peers.gemini_cli()), "-y", "-p", "ask the reporter"]
        argv = [*WIRETAP, "--out", str(root / "session"), "--", *gemini] if wrapped else gemini
        return run_client(argv, env, project), api, before


def _declared(api: Any) -> list[str]:
    body = next(b for path, b in api.requests if ":streamGenerateContent" in path)
    return sorted(d["name"] for t in body.get("tools") or [] for d in t.get("functionDeclarations") or [])


@pytest.fixture(scope="module")
def gemini_a2a(a2a_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gemini-a2a")
    with a2a_agent(a2a_sdk_python, root / "straight-agent.jsonl") as url:
        straight = _gemini_with_a_remote_agent(root / "straight", url, wrapped=False)
    with a2a_agent(a2a_sdk_python, root / "agent.jsonl") as url:
        result, api, before = _gemini_with_a_remote_agent(root / "wrapped", url, wrapped=True)
    return {"root": root / "wrapped", "result": result, "api": api, "before": before, "straight": straight}


def test_gemini_calls_its_remote_subagent_through_the_proxy_and_the_a2a_exchanges_are_in_the_session(
    gemini_a2a: dict[str, Any],
) -> None:
    result, api = gemini_a2a["result"], gemini_a2a["api"]
    assert result.returncode == 0, result.stderr[-3000:]
    output = {"output": "Artifact (report):\nreport on the weather"}
    assert [(o["name"], o["response"]) for o in api.outputs] == [("invoke_agent", output)]
    session = gemini_a2a["root"] / "session"
    manifest = json.loads((session / "manifest.json").read_text())
    assert [(s["name"], s["scope"], s["transport"], s["complete"]) for s in manifest["servers"]] == [
        ("reporter", "user agent", "a2a", True)
    ]
    events = read_all(session / "reporter.jsonl")[1]
    requests = [(e["method"], e["path"]) for e in events if e["kind"] == "http_request"]
    assert requests == [("GET", "/.well-known/agent-card.json"), ("POST", "/a2a/jsonrpc")]
    sent = [e["msg"]["method"] for e in events if e["kind"] == "message" and e["dir"] == "c2s"]
    assert sent == ["message/stream"]
    streamed = [e["msg"]["result"] for e in events if e["kind"] == "message" and e.get("sse") is not None]
    assert [r.get("kind") for r in streamed] == ["task", "status-update", "artifact-update", "status-update"]
    assert streamed[-1]["status"]["state"] == "completed" and streamed[-1]["final"] is True
    agent_log = [json.loads(line) for line in (gemini_a2a["root"].parent / "agent.jsonl").read_text().splitlines()]
    assert [(r["method"], r["path"]) for r in agent_log if "method" in r] == requests
    assert "reporter (a2a): " in result.stderr


def test_wiretap_report_shows_that_gemini_streamed_the_task_to_completion_without_polling(
    gemini_a2a: dict[str, Any],
) -> None:
    session = gemini_a2a["root"] / "session"
    report = subprocess.run([*WIRETAP, "report", "--format", "json", str(session)], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)["report"]
    tasks = [(t["server"], t["protocol"], [s["state"] for s in t["states"]], t["polls"]) for t in data["tasks"]]
    assert tasks == [("reporter", "a2a", ["submitted", "working", "completed"], [])]
    assert [(m["method"], m["count"]) for m in data["latency"]] == [("message/stream", 1)]


def test_gemini_offers_the_model_the_same_tools_with_the_subagent_wrapped_and_the_users_files_are_untouched(
    gemini_a2a: dict[str, Any],
) -> None:
    straight, straight_api, _ = gemini_a2a["straight"]
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert "invoke_agent" in _declared(straight_api)
    assert _declared(gemini_a2a["api"]) == _declared(straight_api)
    after = files_under(gemini_a2a["root"] / "home")
    assert {p: after[p] for p in gemini_a2a["before"]} == gemini_a2a["before"]
    assert list((gemini_a2a["root"] / "tmp").glob("wiretap-*")) == []
