"""One trace from the prompt to the wire: the request's traceparent as parent, Claude Code's toolUseId,
its telemetry under --otlp, the transcript link, and the MCP duration metrics."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.otel_recordings import ORIGIN_NS, by_name, call, write_recording

from wiretap.analysis.summarize import summarize_request
from wiretap.otel import live
from wiretap.otel.metrics import BOUNDS, Durations
from wiretap.otel.protobuf import encode_metrics
from wiretap.otel.sources import recording_spans
from wiretap.wrap.transcript import find_transcript, tool_use_ids

HEADER_TP = "00-b53a0affb35524507c2b7b08b0272717-5c58f341bf6c53b5-01"
META_TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TOOL_USE = "toolu_01ABCdefGHI"


def http_request(t: float, ex: int, headers: dict[str, str]) -> dict[str, Any]:
    return {
        "t": t,
        "kind": "http_request",
        "ex": ex,
        "method": "POST",
        "path": "/mcp",
        "version": "1.1",
        "headers": headers,
    }


def on(ex: int, event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "ex": ex}


def tools_call(rid: int, meta: dict[str, Any]) -> dict[str, Any]:
    return {"id": rid, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}}


def http_recording(tmp_path: Path) -> Path:
    return write_recording(
        tmp_path / "wire.jsonl",
        [
            http_request(0.1, 1, {"traceparent": HEADER_TP}),
            on(1, call(0.1, "c2s", tools_call(1, {"claudecode/toolUseId": TOOL_USE}))),
            on(1, call(0.3, "s2c", {"id": 1, "result": {"content": []}})),
            http_request(0.4, 2, {"traceparent": HEADER_TP}),
            on(2, call(0.4, "c2s", tools_call(2, {"traceparent": META_TP}))),
            on(2, call(0.5, "s2c", {"id": 9, "method": "elicitation/create", "params": {"message": "?"}})),
            on(2, call(0.6, "s2c", {"id": 2, "result": {"content": []}})),
            http_request(0.7, 3, {}),
            on(3, call(0.7, "c2s", {"id": 3, "method": "tools/list"})),
            on(3, call(0.71, "s2c", {"id": 3, "result": {"tools": []}})),
        ],
        transport="http",
        upstream="http://127.0.0.1:9000/mcp",
        wall_origin_ns=ORIGIN_NS,
    )


def test_the_http_traceparent_header_makes_the_call_a_child_of_the_clients_span(tmp_path: Path) -> None:
    spans = recording_spans(http_recording(tmp_path))
    root = next(s for s in spans if s.parent_id is None)
    first = next(s for s in spans if s.attributes.get("jsonrpc.request.id") == "1")
    assert (first.trace_id.hex(), first.parent_id and first.parent_id.hex()) == (
        "b53a0affb35524507c2b7b08b0272717", "5c58f341bf6c53b5"
    )  # fmt: skip
    assert [(link.trace_id, link.span_id) for link in first.links] == [(root.trace_id, root.span_id)]
    (listing,) = by_name(spans, "tools/list")
    assert (listing.trace_id, listing.parent_id) == (root.trace_id, root.span_id)


def test_meta_traceparent_wins_over_the_header_which_becomes_a_link(tmp_path: Path) -> None:
    spans = recording_spans(http_recording(tmp_path))
    root = next(s for s in spans if s.parent_id is None)
    second = next(s for s in spans if s.attributes.get("jsonrpc.request.id") == "2")
    assert second.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert second.parent_id is not None and second.parent_id.hex() == "00f067aa0ba902b7"
    assert [(link.trace_id.hex(), link.span_id.hex()) for link in second.links] == [
        (root.trace_id.hex(), root.span_id.hex()), ("b53a0affb35524507c2b7b08b0272717", "5c58f341bf6c53b5")
    ]  # fmt: skip


def test_a_server_request_inside_that_http_exchange_does_not_take_the_clients_header(tmp_path: Path) -> None:
    spans = recording_spans(http_recording(tmp_path))
    root = next(s for s in spans if s.parent_id is None)
    (elicitation,) = by_name(spans, "elicitation/create")
    assert (elicitation.trace_id, elicitation.parent_id) == (root.trace_id, root.span_id)


def test_claude_codes_tool_use_id_is_the_spans_gen_ai_tool_call_id_and_shown_in_the_row(tmp_path: Path) -> None:
    spans = recording_spans(http_recording(tmp_path))
    first = next(s for s in spans if s.attributes.get("jsonrpc.request.id") == "1")
    second = next(s for s in spans if s.attributes.get("jsonrpc.request.id") == "2")
    assert first.attributes["gen_ai.tool.call.id"] == TOOL_USE
    assert "gen_ai.tool.call.id" not in second.attributes
    params = tools_call(1, {"claudecode/toolUseId": TOOL_USE})["params"]
    assert summarize_request("tools/call", params) == f'echo {{"text": "hi"}} [tool_use {TOOL_USE}]'


def test_otlp_turns_on_claude_codes_own_tracing_towards_the_same_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "_settings", {"url": "http://127.0.0.1:6006/v1/traces"})
    assert live.client_env("Claude Code", {}) == {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "OTEL_TRACES_EXPORTER": "otlp",
        "CLAUDE_CODE_PROPAGATE_TRACEPARENT": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:6006",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }


def test_the_users_own_telemetry_settings_are_left_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "_settings", {"url": "http://127.0.0.1:6006/v1/traces"})
    mine = {"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://mine:4318/v1/traces"}
    assert live.client_env("Claude Code", mine) == {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "CLAUDE_CODE_PROPAGATE_TRACEPARENT": "1",
    }


def test_without_otlp_or_for_another_client_nothing_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "_settings", None)
    assert live.client_env("Claude Code", {}) == {}
    monkeypatch.setattr(live, "_settings", {"url": "http://127.0.0.1:6006/v1/traces"})
    assert live.client_env("Codex", {}) == {}


def test_the_session_is_linked_to_the_transcript_that_holds_its_tool_use_id(tmp_path: Path) -> None:
    recording = http_recording(tmp_path)
    config = tmp_path / "config"
    mine = config / "projects" / "-work-here" / "5f0c.jsonl"
    other = config / "projects" / "-work-other" / "77aa.jsonl"
    mine.parent.mkdir(parents=True)
    other.parent.mkdir(parents=True)
    mine.write_text(json.dumps({"message": {"content": [{"type": "tool_use", "id": TOOL_USE}]}}) + "\n")
    other.write_text(json.dumps({"message": {"content": [{"type": "tool_use", "id": "toolu_else"}]}}) + "\n")
    (config / "projects" / "-work-empty").mkdir()
    (config / "projects" / "-work-empty" / "0.jsonl").write_text("")
    assert tool_use_ids([recording]) == [TOOL_USE]
    assert find_transcript({"CLAUDE_CONFIG_DIR": str(config)}, [TOOL_USE], since=0) == mine
    assert find_transcript({"CLAUDE_CONFIG_DIR": str(config)}, ["toolu_nowhere"], since=0) is None
    os.utime(mine, (1_000, 1_000))
    assert find_transcript({"CLAUDE_CONFIG_DIR": str(config)}, [TOOL_USE], since=2_000) is None


def test_duration_histograms_follow_the_mcp_conventions(tmp_path: Path) -> None:
    durations = Durations()
    durations.add_spans(recording_spans(http_recording(tmp_path)))
    request = durations.export_request({"service.name": "wiretap"})
    metrics = {m["name"]: m for m in request["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
    assert sorted(metrics) == [
        "mcp.client.operation.duration", "mcp.client.session.duration",
        "mcp.server.operation.duration", "mcp.server.session.duration",
    ]  # fmt: skip
    assert {m["unit"] for m in metrics.values()} == {"s"}
    points = metrics["mcp.client.operation.duration"]["histogram"]["dataPoints"]
    by_method = {_attr(p, "mcp.method.name"): p for p in points}
    assert sorted(by_method) == ["tools/call", "tools/list"]  # the unanswered elicitation has no duration
    calls = by_method["tools/call"]
    assert calls["count"] == "2" and calls["explicitBounds"] == list(BOUNDS)
    assert (round(calls["min"], 6), round(calls["max"], 6), round(calls["sum"], 6)) == (0.2, 0.2, 0.4)
    assert calls["bucketCounts"] == ["0", "0", "0", "0", "2"] + ["0"] * 10  # 0.2 s: the (0.1, 0.2] bucket
    assert _attr(calls, "gen_ai.tool.name") == "echo" and _attr(calls, "server.address") == "127.0.0.1"
    server_points = metrics["mcp.server.operation.duration"]["histogram"]["dataPoints"]
    assert all(_attr(p, "server.address") is None for p in server_points)
    (session,) = metrics["mcp.client.session.duration"]["histogram"]["dataPoints"]
    assert session["count"] == "1" and round(session["sum"], 6) == 0.71
    assert _attr(session, "network.transport") == "tcp"
    assert len(encode_metrics(request)) > 0


def _attr(point: dict[str, Any], key: str) -> Any:
    for item in point["attributes"]:
        if item["key"] == key:
            return next(iter(item["value"].values()))
    return None
