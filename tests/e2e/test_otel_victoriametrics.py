"""The MCP duration histograms of ``wiretap otel --metrics`` stored in a real metrics backend,
VictoriaMetrics (Debian 13's package, unpacked by the tests), and read back: each stored series equals
what the recording's own messages imply, computed here from the JSONL lines and not by wiretap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scenarios.http_upstream import Upstream
from support import paths
from support.otlp_receiver import Receiver, otlp_receiver
from support.proxyrun import running_proxy
from support.taprun import settled_read_all
from support.victoria_backend import VictoriaMetrics, running_victoria_metrics

from wiretap.cli import cli

pytestmark = pytest.mark.slow
RECORDINGS = paths.RECORDINGS
PEER_SCRIPTS = paths.PEER_SCRIPTS
SHIPPED = ["demo.jsonl", "core-tasks.jsonl", "cc-ext-form.jsonl", "unanswered.jsonl"]
SDK_MODES = {"sdk-modern.jsonl": "auto", "sdk-legacy.jsonl": "legacy"}
"""Recorded in the test: the real MCP Python SDK's client and server through ``wiretap tap``, each era."""
NAMES = [*SHIPPED, *SDK_MODES]
BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
"""The conventions' advice for MCP durations, written out here rather than imported."""


@pytest.fixture(scope="module")
def victoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VictoriaMetrics]:
    from support import peers

    try:
        command = peers.victoria_metrics()
    except (RuntimeError, OSError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"VictoriaMetrics (Debian's victoria-metrics) cannot be installed here: {str(exc)[:200]}")
    folder = tmp_path_factory.mktemp("victoria-metrics")
    with running_victoria_metrics(command, folder, "-opentelemetry.usePrometheusNaming") as running:
        yield running


@pytest.fixture
def traces() -> Iterator[Receiver]:
    """Where the spans go: VictoriaMetrics stores metrics only."""
    with otlp_receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {name: RECORDINGS / name for name in SHIPPED}


def recording_of(name: str, recordings: dict[str, Path], request: pytest.FixtureRequest) -> Path:
    if name not in recordings:
        python = request.getfixturevalue("mcp_sdk_python")
        folder = request.getfixturevalue("tmp_path_factory").mktemp(name.removesuffix(".jsonl"))
        server = [str(python), str(PEER_SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(folder / "wire")]
        tap = [sys.executable, "-m", "wiretap", "tap", "--out", str(folder / name), "--", *server]
        client = [str(python), str(PEER_SCRIPTS / "mcp_sdk_client.py"), SDK_MODES[name], "--", *tap]
        result = subprocess.run(client, cwd=folder, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        settled_read_all(folder / name)  # the recorder finishes the file after wiretap has exited
        recordings[name] = folder / name
    return recordings[name]


@dataclass
class Expected:
    """What one recording's messages imply: each answered request's wire duration, by method (and tool)."""

    durations: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tools: Counter[str] = field(default_factory=Counter)
    errors: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """(method, error.type, rpc.response.status_code or "") of each failed request."""
    session_seconds: float = 0.0
    protocol_version: str = ""
    """As the server answered ``initialize``, else as each request's ``_meta`` names it (2026-07-28)."""
    started_ms: int = 0


def expected_from(path: Path) -> Expected:
    expected = Expected()
    pending: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    expected.started_ms = int(datetime.fromisoformat(lines[0]["started"]).timestamp() * 1000)
    for event in lines[1:]:
        expected.session_seconds = max(expected.session_seconds, float(event.get("t", 0.0)))
        msg = event.get("msg")
        if event.get("kind") != "message" or not isinstance(msg, dict) or "id" not in msg:
            continue
        key = json.dumps(msg["id"])
        if "method" in msg:
            pending[(event["dir"], key)] = (event["t"], msg)
            meta = (msg.get("params") or {}).get("_meta") or {}
            expected.protocol_version = meta.get("io.modelcontextprotocol/protocolVersion", expected.protocol_version)
            continue
        request = pending.pop(("s2c" if event["dir"] == "c2s" else "c2s", key), None)
        if request is None:
            continue
        t, sent = request
        method = sent["method"]
        expected.durations[method].append(event["t"] - t)
        if method == "initialize" and "result" in msg:
            expected.protocol_version = msg["result"].get("protocolVersion", expected.protocol_version)
        if method == "tools/call":
            expected.tools[sent["params"]["name"]] += 1
        if "error" in msg:
            expected.errors[(method, str(msg["error"]["code"]), str(msg["error"]["code"]))] += 1
        elif isinstance(msg.get("result"), dict) and msg["result"].get("isError") is True:
            expected.errors[(method, "tool_error", "")] += 1
    return expected


def push(victoria: VictoriaMetrics, traces: Receiver, path: Path, service: str) -> str:
    env = {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": victoria.otlp_metrics_url, "OTEL_SERVICE_NAME": service}
    result = CliRunner().invoke(cli, ["otel", "--metrics", str(path), "--endpoint", traces.url], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def value(series: dict[str, Any]) -> float:
    (only,) = series["values"]  # one push, one sample per series
    return float(only)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("side", ["client", "server"])
def test_each_stored_operation_histogram_equals_the_recordings_request_durations(
    victoria: VictoriaMetrics, traces: Receiver, recordings: dict[str, Path], request: pytest.FixtureRequest,
    name: str, side: str,
) -> None:  # fmt: skip
    path = recording_of(name, recordings, request)
    service = f"ops-{side}-{name.removesuffix('.jsonl')}"
    expected = expected_from(path)
    output = push(victoria, traces, path, service)
    metric = f"mcp_{side}_operation_duration_seconds"
    requests = sum(len(d) for d in expected.durations.values())

    def every_request(stored: list[dict[str, Any]]) -> bool:
        return sum(int(value(s)) for s in stored if s["metric"]["__name__"].endswith("_count")) >= requests

    match = f'{{__name__=~"{metric}_(bucket|sum|count)",service_name="{service}"}}'
    stored = victoria.export(match, until=every_request)
    assert stored, output
    counts: Counter[str] = Counter()
    sums: dict[str, float] = defaultdict(float)
    buckets: dict[tuple[str, str], float] = defaultdict(float)
    tools: Counter[str] = Counter()
    errors: Counter[tuple[str, str, str]] = Counter()
    for series in stored:
        labels = series["metric"]
        method = labels["mcp_method_name"]
        assert labels["network_transport"] == "pipe"
        assert labels["mcp_protocol_version"] == expected.protocol_version
        assert "server_address" not in labels  # stdio has no server address on either side
        (at,) = series["timestamps"]
        assert expected.started_ms - 2 <= at <= expected.started_ms + expected.session_seconds * 1000 + 2
        kind = labels["__name__"].removeprefix(metric)
        if kind == "_count":
            counts[method] += int(value(series))
            tools[labels.get("gen_ai_tool_name", "")] += int(value(series))
            if "error_type" in labels:
                errors[(method, labels["error_type"], labels.get("rpc_response_status_code", ""))] += int(value(series))
        elif kind == "_sum":
            sums[method] += value(series)
        else:
            buckets[(method, labels["le"])] += value(series)
    assert counts == Counter({m: len(d) for m, d in expected.durations.items()})
    for method, durations in expected.durations.items():
        assert sums[method] == pytest.approx(sum(durations), abs=1e-6 * len(durations))
        for bound in [*BOUNDS, float("inf")]:
            le = "+Inf" if bound == float("inf") else str(bound)
            assert buckets[(method, le)] == sum(1 for d in durations if d <= bound), (method, le)
    assert {k: v for k, v in tools.items() if k} == dict(expected.tools)
    assert errors == expected.errors


@pytest.mark.parametrize("name", NAMES)
def test_each_recording_stores_one_session_duration_as_long_as_its_last_event(
    victoria: VictoriaMetrics, traces: Receiver, recordings: dict[str, Path], request: pytest.FixtureRequest,
    name: str,
) -> None:  # fmt: skip
    path = recording_of(name, recordings, request)
    service = f"session-{name.removesuffix('.jsonl')}"
    expected = expected_from(path)
    push(victoria, traces, path, service)
    for side in ("client", "server"):
        metric = f"mcp_{side}_session_duration_seconds"
        (count,) = victoria.export(f'{metric}_count{{service_name="{service}"}}')
        (total,) = victoria.export(f'{metric}_sum{{service_name="{service}"}}')
        assert value(count) == 1
        assert value(total) == pytest.approx(expected.session_seconds, abs=1e-6)
        assert count["metric"]["mcp_protocol_version"] == expected.protocol_version
        stored = victoria.export(f'{metric}_bucket{{service_name="{service}"}}')
        assert {s["metric"]["le"]: value(s) for s in stored} == {
            ("+Inf" if b == float("inf") else str(b)): float(expected.session_seconds <= b)
            for b in [*BOUNDS, float("inf")]
        }


def post(url: str, body: dict[str, Any]) -> int:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as response:
        response.read()
        return int(response.status)


INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_a_live_proxied_http_session_stores_its_histograms_when_the_proxy_stops(
    victoria: VictoriaMetrics, traces: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = "live-http"
    monkeypatch.setenv("OTEL_SERVICE_NAME", service)
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", victoria.otlp_metrics_url)
    recording = tmp_path / "live.jsonl"
    with Upstream() as upstream, running_proxy(upstream.url, recording, "--otlp-endpoint", traces.url) as run:
        mcp = run.url + "/mcp"
        assert post(mcp, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}) == 200
        for request_id in (2, 3, 4):
            assert post(mcp, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "search"}})
    expected = expected_from(recording)
    assert {m: len(d) for m, d in expected.durations.items()} == {"initialize": 1, "tools/call": 3}
    port = urllib.parse.urlsplit(upstream.url).port
    for side in ("client", "server"):
        metric = f"mcp_{side}_operation_duration_seconds"
        stored = victoria.export(f'{metric}_count{{service_name="{service}"}}')
        assert {s["metric"]["mcp_method_name"]: value(s) for s in stored} == {"initialize": 1, "tools/call": 3}
        for series in stored:
            labels = series["metric"]
            assert labels["network_transport"] == "tcp" and labels["network_protocol_name"] == "http"
            assert labels.get("mcp_protocol_version", "") == expected.protocol_version  # the scenario names none
            # The server's own metric leaves out where the server is; the client's names the upstream.
            where = (labels.get("server_address"), labels.get("server_port"))
            assert where == (("127.0.0.1", str(port)) if side == "client" else (None, None))
        sums = victoria.export(f'{metric}_sum{{service_name="{service}"}}')
        assert {s["metric"]["mcp_method_name"]: value(s) for s in sums} == pytest.approx(
            {m: sum(d) for m, d in expected.durations.items()}, abs=1e-5
        )
