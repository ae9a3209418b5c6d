"""Recordings and a live proxied session sent to a real OpenTelemetry backend, Arize Phoenix, and read back."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scenarios.http_upstream import Upstream
from support import paths
from support.phoenix_backend import Phoenix
from support.proxyrun import running_proxy

from wiretap.cli import cli
from wiretap.otel.sources import recording_spans
from wiretap.otel.spans import Span, StatusCode

pytestmark = pytest.mark.slow
RECORDINGS = paths.RECORDINGS
SHIPPED = ["demo.jsonl", "core-tasks.jsonl", "a2a-backoff.jsonl", "a2a-rejected-loop.jsonl", "unanswered.jsonl"]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(iso: str) -> int:
    return (datetime.fromisoformat(iso) - EPOCH) // timedelta(microseconds=1)


def push(phoenix: Phoenix, project: str, paths: list[Path]) -> str:
    env = {"OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}"}
    result = CliRunner().invoke(cli, ["otel", *map(str, paths), "--endpoint", phoenix.url], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def assert_same(stored: list[dict[str, Any]], expected: list[Span]) -> None:
    """What Phoenix stored is what wiretap mapped: ids, names, parents, times (µs), status, attributes."""
    by_id = {s["context"]["span_id"]: s for s in stored}
    assert len(stored) == len(by_id) == len(expected)
    for span in expected:
        got = by_id[span.span_id.hex()]
        assert got["name"] == span.name
        assert got["context"]["trace_id"] == span.trace_id.hex()
        assert got["parent_id"] == (span.parent_id.hex() if span.parent_id else None)
        assert abs(micros(got["start_time"]) * 1000 - span.start_ns) < 1000
        assert abs(micros(got["end_time"]) * 1000 - span.end_ns) < 1000
        assert (
            got["status_code"]
            == {StatusCode.UNSET: "UNSET", StatusCode.OK: "OK", StatusCode.ERROR: "ERROR"}[span.status]
        )
        for key in ("mcp.method.name", "gen_ai.tool.name", "error.type", "wiretap.task.id", "rpc.method"):
            assert got["attributes"].get(key) == span.attributes.get(key), (span.name, key)
        assert [e["name"] for e in got["events"]] == [e.name for e in span.events]


def test_shipped_recordings_land_in_phoenix_span_for_span(phoenix: Phoenix) -> None:
    paths = [RECORDINGS / name for name in SHIPPED]
    expected = [span for path in paths for span in recording_spans(path)]
    push(phoenix, "shipped", paths)
    stored = phoenix.wait_for("shipped", len(expected))
    assert_same(stored, expected)
    names = Counter(s["name"] for s in stored)
    assert names["GetTask"] == 11 + 9  # a2a-backoff's polls and a2a-rejected-loop's (recordings/README.md)
    assert names["tools/call build_report"] == 1 and names["notifications/progress"] == 3
    (task,) = [s for s in stored if s["attributes"].get("wiretap.task.final_state") == "TASK_STATE_REJECTED"]
    rejected, finding = [e for e in task["events"] if e["name"] == "wiretap.finding"]
    assert rejected["attributes"]["wiretap.finding.code"] == "task-rejected"
    assert finding["attributes"]["wiretap.finding.code"] == "poll-after-terminal"
    assert finding["attributes"]["wiretap.finding.severity"] == "error"
    polls = [s for s in stored if s["parent_id"] == task["context"]["span_id"]]
    assert len(polls) == 9 and {s["name"] for s in polls} == {"GetTask"}


def test_pushing_the_same_recordings_again_adds_nothing(phoenix: Phoenix) -> None:
    paths = [RECORDINGS / "slow-poll.jsonl", RECORDINGS / "exit-cancel.jsonl"]  # not pushed by another test
    expected = sum(len(recording_spans(p)) for p in paths)
    push(phoenix, "again", paths)
    assert len(phoenix.wait_for("again", expected)) == expected
    push(phoenix, "again", paths)
    assert len(phoenix.wait_for("again", expected + 1, seconds=5)) == expected


def post(url: str, body: dict[str, Any], **headers: str) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()
        return int(response.status)


def test_a_live_proxied_session_arrives_as_it_happens(
    phoenix: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=live-proxy")
    with (
        Upstream() as upstream,
        running_proxy(upstream.url, tmp_path / "live.jsonl", "--otlp-endpoint", phoenix.url) as run,
    ):
        mcp = run.url + "/mcp"
        assert (
            post(mcp, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t"}}})
            == 200
        )
        assert post(mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **{"X-Want-Status": "202"}) == 202
        assert post(mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search"}}) == 200
        # Phoenix has the call before the proxy stops: spans go out as responses land.
        arrived = phoenix.wait_for("live-proxy", 3)
        assert {"initialize", "notifications/initialized", "tools/call search"} <= {s["name"] for s in arrived}
        assert post(mcp, {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "file:///a"}}) == 200
    expected = recording_spans(tmp_path / "live.jsonl")
    stored = phoenix.wait_for("live-proxy", len(expected))
    assert_same(stored, expected)
    (call,) = [s for s in stored if s["name"] == "tools/call search"]
    attributes = call["attributes"]
    assert attributes["network.transport"] == "tcp" and attributes["network.protocol.name"] == "http"
    # A session id is a credential on the wire: the recording keeps its stable fingerprint, and so does the span.
    assert attributes["server.address"] == "127.0.0.1" and attributes["mcp.session.id"].startswith("[redacted:")
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    (root,) = [s for s in stored if s["parent_id"] is None]
    assert root["attributes"]["wiretap.otlp.dropped_spans"] == 0
