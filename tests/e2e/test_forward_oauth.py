"""Real OAuth clients through ``wiretap proxy --forward`` against the TS SDK's strict OAuth example (over
TLS): the client keeps the real URL, so the protected-resource check passes and the token is bound to the
real resource; every request to both servers is recorded, in order, with every code and token redacted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.forwardrun import ForwardRun, running_forward
from support.oauthpeer import PEER_SCRIPTS, OAuthPair, oauth_pair

pytestmark = pytest.mark.slow

FLOW = [
    ("GET", "/.well-known/oauth-authorization-server", 200),
    ("POST", "/register", 201),
    ("GET", "/authorize", 302),
    ("POST", "/token", 200),
]


def _clean_env() -> dict[str, str]:
    drop = {"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run_client(command: list[str], env: dict[str, str]) -> dict:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no answer from the client: {result.stdout}\n{result.stderr}"
    return json.loads(lines[-1])


def _exchanges(events: list[dict]) -> list[tuple[str, str, int]]:
    statuses = {e["ex"]: e["status"] for e in events if e["kind"] == "http_response"}
    return [(e["method"], e["path"], statuses.get(e["ex"], 0)) for e in events if e["kind"] == "http_request"]


def _check(run: ForwardRun, pair: OAuthPair, answer: dict, out: Path) -> None:
    assert answer.get("call", {}).get("content") == [{"type": "text", "text": "42"}], answer
    assert set(run.recordings) == {pair.mcp_origin, pair.issuer_origin}
    resource = run.events(pair.mcp_origin)
    seen = _exchanges(resource)
    assert seen[0] == ("POST", "/mcp", 401)
    challenge = next(e for e in resource if e["kind"] == "http_response")["headers"]["www-authenticate"]
    assert f'resource_metadata="{pair.mcp_origin}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert ("GET", "/.well-known/oauth-protected-resource/mcp", 200) in seen
    calls = [e for e in resource if e["kind"] == "message" and e.get("msg", {}).get("method") == "tools/call"]
    assert len(calls) == 1
    results = [e for e in resource if e["kind"] == "message" and e.get("msg", {}).get("id") == calls[0]["msg"]["id"]]
    assert [r["dir"] for r in results] == ["c2s", "s2c"]
    flow = [x for x in _exchanges(run.events(pair.issuer_origin)) if x[1] != "/.well-known/oauth-authorization-server"]
    assert flow == FLOW[1:]
    assert _exchanges(run.events(pair.issuer_origin))[0] == FLOW[0]
    secrets = answer["secrets"]
    assert len(secrets) == 4  # the code, the verifier, the client secret, the access token
    written = "".join(p.read_text() for p in out.glob("*.jsonl")) + run.stderr
    assert [s for s in secrets if s in written] == []
    assert written.count("[redacted:") >= 6
    for recording in out.glob("*.jsonl"):
        report = json.loads(_wiretap("report", "--format", "json", str(recording)).stdout)
        (authorization,) = report["authorization"]
        assert authorization["resource"] == pair.mcp
        assert authorization["authorization_servers"] == [pair.issuer]
        assert [f["code"] for f in report["findings"] if f["code"].startswith("oauth")] == []


def _wiretap(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "wiretap", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_the_python_sdk_completes_the_strict_flow_through_forward_mode(
    tmp_path: Path, mcp_sdk_python: Path, ts_sdk: Path, node_24: Path
) -> None:
    with oauth_pair(node_24, ts_sdk, tmp_path) as pair:
        out = tmp_path / "rec"
        with running_forward(out, "--upstream-cafile", str(pair.ca_file)) as run:
            env = {**_clean_env(), **run.env}
            answer = _run_client([str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_oauth_client.py"), pair.mcp], env)
    _check(run, pair, answer, out)


def test_the_ts_sdk_on_node_24_completes_the_strict_flow_through_forward_mode(
    tmp_path: Path, ts_sdk: Path, node_24: Path
) -> None:
    with oauth_pair(node_24, ts_sdk, tmp_path) as pair:
        out = tmp_path / "rec"
        with running_forward(out, "--upstream-cafile", str(pair.ca_file)) as run:
            env = {**_clean_env(), **run.env}
            command = [str(node_24), str(PEER_SCRIPTS / "ts_sdk_oauth_client.mjs"), str(ts_sdk), pair.mcp]
            answer = _run_client(command, env)
    _check(run, pair, answer, out)


def test_through_reverse_mode_the_python_sdk_refuses_the_metadata_of_another_url(
    tmp_path: Path, mcp_sdk_python: Path, ts_sdk: Path, node_24: Path
) -> None:
    from support.proxyrun import running_proxy

    with oauth_pair(node_24, ts_sdk, tmp_path) as pair:
        extra = ("--upstream-cafile", str(pair.ca_file))
        with running_proxy(pair.mcp, tmp_path / "reverse.jsonl", *extra) as proxy:
            env = {**_clean_env(), "SSL_CERT_FILE": str(pair.ca_file)}
            answer = _run_client([str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_oauth_client.py"), proxy.url], env)
    assert "call" not in answer
    assert f"{pair.mcp} does not match expected {proxy.url}" in answer["error"], answer
    assert proxy.stderr.count("the upstream is protected by OAuth") == 1
    assert "wiretap proxy --forward" in proxy.stderr
    report = json.loads(_wiretap("report", "--format", "json", str(tmp_path / "reverse.jsonl")).stdout)
    (finding,) = [f for f in report["findings"] if f["code"].startswith("oauth")]
    assert finding["code"] == "oauth-through-reverse-proxy"
    assert "so the client fetched it past wiretap" in finding["message"]  # the "the 401 bypasses wiretap"
