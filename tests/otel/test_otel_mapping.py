"""Recordings to spans (wiretap/otel), against the shipped recordings' own truth and small synthetic ones."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.otel_recordings import ORIGIN_NS, by_name, call, write_recording

from wiretap.analysis.report import build_report
from wiretap.otel import otlp_json
from wiretap.otel.mapping import RecordingMapper
from wiretap.otel.sources import map_events, recording_spans, session_spans
from wiretap.otel.spans import SpanKind, StatusCode, span_id_for
from wiretap.recording.folders import open_session
from wiretap.recording.reader import read_all

RECORDINGS = paths.RECORDINGS


def test_the_demo_recording_becomes_one_span_per_call_and_notification_under_one_root() -> None:
    spans = recording_spans(RECORDINGS / "demo.jsonl")
    # demo.jsonl: discover, tools/list, the echo tool, the slow tool and its three progress
    # notifications, an unknown method.
    assert sorted(s.name for s in spans) == sorted(
        ["server/discover", "tools/list", "tools/call echo", "tools/call build_report", "resources/list"]
        + ["notifications/progress"] * 3
        + ["wiretap demo"]
    )
    (root,) = [s for s in spans if s.parent_id is None]
    assert root.name == "wiretap demo" and root.kind is SpanKind.INTERNAL
    assert {s.trace_id for s in spans} == {root.trace_id}
    calls = [s for s in spans if s is not root]
    assert all(s.kind is SpanKind.CLIENT for s in calls)
    assert all(s.attributes["network.transport"] == "pipe" for s in calls)
    assert root.attributes["wiretap.client.name"] == "wiretap-demo-client"
    assert root.attributes["wiretap.server.name"] == "wiretap-demo"
    assert root.attributes["wiretap.client.ended"] == "stdin closed"
    assert root.attributes["wiretap.server.ended"] == "exited with code 0"


def test_a_tool_call_carries_the_mcp_attributes_and_its_progress_notifications_as_children() -> None:
    spans = recording_spans(RECORDINGS / "demo.jsonl")
    (tool,) = by_name(spans, "tools/call build_report")
    assert tool.attributes["mcp.method.name"] == "tools/call"
    assert tool.attributes["gen_ai.tool.name"] == "build_report"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["jsonrpc.request.id"] == "4"
    assert tool.attributes["mcp.protocol.version"] == "2026-07-28"
    progress = by_name(spans, "notifications/progress")
    assert [p.parent_id for p in progress] == [tool.span_id] * 3
    assert all(p.start_ns == p.end_ns and tool.start_ns < p.start_ns <= tool.end_ns for p in progress)
    assert "gen_ai.operation.name" not in by_name(spans, "tools/list")[0].attributes


def test_a_json_rpc_error_sets_error_type_status_code_and_span_status() -> None:
    (unknown,) = by_name(recording_spans(RECORDINGS / "demo.jsonl"), "resources/list")
    assert unknown.attributes["error.type"] == "-32601"
    assert unknown.attributes["rpc.response.status_code"] == "-32601"
    assert unknown.status is StatusCode.ERROR and unknown.status_message


def test_span_times_are_the_recorded_times_to_the_microsecond(tmp_path: Path) -> None:
    header, events, _ = read_all(RECORDINGS / "demo.jsonl")
    copy = write_recording(tmp_path / "demo.jsonl", events, **{**header, "wall_origin_ns": ORIGIN_NS})
    spans = recording_spans(copy)
    requests = [e for e in events if e["kind"] == "message" and e["msg"].get("method") == "tools/call"]
    responses = {e["msg"]["id"]: e for e in events if e["kind"] == "message" and "result" in e["msg"]}
    for request in requests:
        (span,) = [s for s in spans if s.attributes.get("jsonrpc.request.id") == str(request["msg"]["id"])]
        assert span.start_ns == ORIGIN_NS + round(request["t"] * 1e6) * 1000
        assert span.end_ns == ORIGIN_NS + round(responses[request["msg"]["id"]]["t"] * 1e6) * 1000
    root = next(s for s in spans if s.parent_id is None)
    assert root.start_ns == ORIGIN_NS and root.end_ns == ORIGIN_NS + round(events[-1]["t"] * 1e6) * 1000


def test_an_older_recording_without_the_nanosecond_origin_falls_back_to_its_start() -> None:
    header, _, _ = read_all(RECORDINGS / "demo.jsonl")
    assert "wall_origin_ns" not in header
    root = next(s for s in recording_spans(RECORDINGS / "demo.jsonl") if s.parent_id is None)
    assert root.start_ns == 1_796_041_486_428_000_000  # 2026-11-30T12:24:46.428Z


def test_ids_are_the_same_on_every_run_and_differ_between_recordings() -> None:
    first, again = recording_spans(RECORDINGS / "demo.jsonl"), recording_spans(RECORDINGS / "demo.jsonl")
    assert [(s.trace_id, s.span_id, s.parent_id) for s in first] == [
        (s.trace_id, s.span_id, s.parent_id) for s in again
    ]
    assert len({s.span_id for s in first}) == len(first)
    other = recording_spans(RECORDINGS / "core-tasks.jsonl")
    assert first[0].trace_id != other[0].trace_id


def test_an_a2a_task_is_a_span_with_every_poll_as_its_child() -> None:
    spans = recording_spans(RECORDINGS / "a2a-backoff.jsonl")
    (task,) = [s for s in spans if s.name == "task"]
    task_id = "0b6f1e7a-2d1c-4f3e-9a57-6c2f8e41d0b3"
    assert task.attributes["wiretap.task.id"] == task_id
    assert task.attributes["wiretap.task.final_state"] == "TASK_STATE_COMPLETED"
    polls = by_name(spans, "GetTask")
    assert len(polls) == 11 == task.attributes["wiretap.task.polls"]  # recordings/README.md: 11 GetTask
    assert {p.parent_id for p in polls} == {task.span_id}
    assert all(p.attributes["rpc.method"] == "GetTask" and p.attributes["network.transport"] == "tcp" for p in polls)
    assert polls[0].attributes["server.address"] == "127.0.0.1"
    assert [e.attributes["wiretap.task.state"] for e in task.events] == [
        "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"
    ]  # fmt: skip
    (send,) = by_name(spans, "SendMessage")
    assert send.attributes["wiretap.task.id"] == task_id and send.parent_id == task.parent_id


def test_findings_are_span_events_on_the_task_they_are_about() -> None:
    spans = recording_spans(RECORDINGS / "a2a-rejected-loop.jsonl")
    (task,) = [s for s in spans if s.name == "task"]
    rejected, finding = [e for e in task.events if e.name == "wiretap.finding"]
    assert rejected.attributes["wiretap.finding.code"] == "task-rejected"
    assert finding.attributes["wiretap.finding.code"] == "poll-after-terminal"
    assert finding.attributes["wiretap.finding.severity"] == "error"
    assert finding.attributes["wiretap.finding.count"] == 8
    root = next(s for s in spans if s.parent_id is None)
    assert sorted(root.attributes["wiretap.finding.codes"]) == ["poll-after-terminal", "task-rejected"]
    assert all(s.attributes["rpc.system.name"] == "a2a_rest" for s in by_name(spans, "GetTask"))


def test_an_open_question_is_a_pair_of_events_with_its_longest_gap() -> None:
    spans = recording_spans(RECORDINGS / "cc-ext-form.jsonl")
    (task,) = [s for s in spans if s.name == "task" or s.name.startswith("task ")]
    opened, closed = [e for e in task.events if e.name.startswith("wiretap.question")]
    assert (opened.name, closed.name) == ("wiretap.question.opened", "wiretap.question.closed")
    assert opened.attributes["wiretap.question.longest_gap_s"] == 39.975
    assert opened.attributes["wiretap.question.keys"] == ["environment", "confirm_downtime"]
    assert closed.time_ns - opened.time_ns == 39_975_000_000


def test_unanswered_requests_end_with_the_recording_as_errors() -> None:
    spans = recording_spans(RECORDINGS / "unanswered.jsonl")
    unanswered = [s for s in spans if s.attributes.get("wiretap.unanswered")]
    assert sorted(s.name for s in unanswered) == ["resources/read", "roots/list", "tools/call hang"]
    assert all(s.attributes["error.type"] == "no_response" for s in unanswered)
    (read,) = by_name(spans, "resources/read")
    assert read.attributes["mcp.resource.uri"] == "file:///var/log/never.log"
    (roots,) = by_name(spans, "roots/list")
    assert roots.attributes["wiretap.direction"] == "s2c"


def test_a_traceparent_in_meta_makes_the_call_a_child_of_the_caller(tmp_path: Path) -> None:
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    path = write_recording(
        tmp_path / "tp.jsonl",
        [
            call(0.1, "c2s", {"id": 1, "method": "tools/call", "params": {"name": "w", "_meta": {"traceparent": tp}}}),
            call(0.2, "s2c", {"id": 1, "result": {"isError": True, "content": [{"type": "text", "text": "no"}]}}),
            call(
                0.3,
                "c2s",
                {"id": 2, "method": "prompts/get", "params": {"name": "p", "_meta": {"traceparent": "junk"}}},
            ),
            call(0.4, "s2c", {"id": 2, "result": {}}),
        ],
        wall_origin_ns=ORIGIN_NS,
    )
    spans = recording_spans(path)
    (tool,) = by_name(spans, "tools/call w")
    root = next(s for s in spans if s.parent_id is None)
    assert tool.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert tool.parent_id is not None and tool.parent_id.hex() == "00f067aa0ba902b7"
    assert [(link.trace_id, link.span_id) for link in tool.links] == [(root.trace_id, root.span_id)]
    assert tool.attributes["error.type"] == "tool_error" and tool.status is StatusCode.ERROR
    assert tool.status_message == "no"
    (prompt,) = by_name(spans, "prompts/get p")
    assert prompt.attributes["gen_ai.prompt.name"] == "p"
    assert prompt.trace_id == root.trace_id and prompt.parent_id == root.span_id


def test_calls_are_emitted_as_their_responses_arrive(tmp_path: Path) -> None:
    header, events, _ = read_all(RECORDINGS / "demo.jsonl")
    mapper = RecordingMapper(header)
    emitted_at: list[tuple[int, str]] = []
    for n, event in enumerate(events):
        emitted_at += [(n, s.name) for s in mapper.feed(event)]
    first_response = next(n for n, e in enumerate(events) if e["kind"] == "message" and "result" in e["msg"])
    assert emitted_at[0] == (first_response, "server/discover")
    assert [s.name for s in mapper.finish(None)] == ["wiretap demo"]


def test_a_session_is_one_trace_with_a_root_per_recording_under_the_session_root(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    for name in ("demo.jsonl", "core-tasks.jsonl"):
        (folder / name).write_bytes((RECORDINGS / name).read_bytes())
    manifest = {
        "kind": "wiretap-session", "format": 1, "client": "claude", "client_argv": ["claude"],
        "started": "2026-11-30T12:24:46.000Z", "started_monotonic": 100.0, "client_exited": 9.5,
        "exit": {"code": 0}, "running": False,
        "servers": [{"name": "demo", "recording": "demo.jsonl"}, {"name": "tasks", "recording": "core-tasks.jsonl"}],
    }  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    spans = session_spans(open_session(folder))
    (session,) = [s for s in spans if s.parent_id is None]
    assert session.name == "wiretap session claude"
    assert session.attributes["wiretap.servers"] == ["demo", "tasks"]
    assert {s.trace_id for s in spans} == {session.trace_id}
    roots = [s for s in spans if s.parent_id == session.span_id]
    assert sorted(s.name for s in roots) == ["wiretap core-tasks", "wiretap demo"]
    assert len(spans) == 1 + 9 + 15  # the session root, and each recording's spans as when pushed alone
    assert session.span_id == span_id_for(session.trace_id, "session")


def test_without_a_report_a_polled_task_still_gets_a_span_for_its_polls_to_hang_from() -> None:
    header, events, _ = read_all(RECORDINGS / "slow-poll.jsonl")
    spans = map_events(RecordingMapper(header), events, None)
    (task,) = [s for s in spans if s.name == "task"]
    assert task.attributes["wiretap.task.reported"] is False
    polls = by_name(spans, "tasks/get")
    assert polls and {p.parent_id for p in polls} == {task.span_id}
    reported = recording_spans(RECORDINGS / "slow-poll.jsonl")
    assert [s.span_id for s in reported] == [s.span_id for s in spans]


def test_a_flood_of_unanswered_requests_keeps_memory_bounded_and_loses_none() -> None:
    from wiretap.otel.mapping import MAX_PENDING

    header, _, _ = read_all(RECORDINGS / "demo.jsonl")
    mapper = RecordingMapper(header)
    flood = MAX_PENDING + 50
    emitted = [s for n in range(flood) for s in mapper.feed(call(n / 1000, "c2s", {"id": n, "method": "ping"}))]
    assert len(mapper._pending) == MAX_PENDING
    assert [s.attributes["jsonrpc.request.id"] for s in emitted] == [str(n) for n in range(50)]
    assert all(s.attributes["error.type"] == "no_response" for s in emitted)
    assert len(emitted) + len(mapper.finish(None)) == flood + 1  # and the root


def truth(path: Path) -> Counter[str]:
    """What a recording holds, counted straight from its lines: calls, notifications, tasks."""
    counts: Counter[str] = Counter()
    for line in path.read_text().splitlines()[1:]:
        event = json.loads(line)
        if event["kind"] != "message":
            continue
        if "rest" in event:
            counts["call"] += event["dir"] == "c2s"
            continue
        for msg in event["msg"] if isinstance(event.get("msg"), list) else [event.get("msg")]:
            if isinstance(msg, dict) and isinstance(msg.get("method"), str):
                counts["call" if "id" in msg else "notification"] += 1
    counts["task"] = len(build_report(path).tasks)
    return counts


SHIPPED = sorted(RECORDINGS.glob("*.jsonl"))


@pytest.mark.parametrize("recording", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_recording_maps_to_a_span_per_call_notification_and_task_plus_its_root(recording: Path) -> None:
    spans = recording_spans(recording)
    kinds = Counter(
        "root" if s.parent_id is None
        else "task" if s.kind is SpanKind.INTERNAL
        else "notification" if "jsonrpc.request.id" not in s.attributes and "url.path" not in s.attributes
        else "call"
        for s in spans
    )  # fmt: skip
    assert kinds == truth(recording) + Counter(root=1)


def test_a_stateless_sessions_version_from_request_meta_reaches_its_root_and_notifications() -> None:
    spans = recording_spans(RECORDINGS / "demo.jsonl")  # 2026-07-28: no initialize, the version in each _meta
    assert {s.name: s.attributes.get("mcp.protocol.version") for s in spans} == {s.name: "2026-07-28" for s in spans}


def test_two_calls_with_one_id_each_get_a_span_and_the_response_ends_the_first() -> None:
    header, _, _ = read_all(RECORDINGS / "demo.jsonl")
    mapper = RecordingMapper(header)
    mapper.feed(call(0.1, "c2s", {"id": 1, "method": "ping"}))
    mapper.feed(call(0.2, "c2s", {"id": 1, "method": "tools/list"}))
    (answered,) = mapper.feed(call(0.3, "s2c", {"id": 1, "result": {}}))
    assert answered.name == "ping"
    spans = mapper.finish(None)
    assert [s.name for s in spans if s.attributes.get("wiretap.unanswered")] == ["tools/list"]


def test_an_id_of_one_does_not_answer_a_call_whose_id_is_the_string_one() -> None:
    header, _, _ = read_all(RECORDINGS / "demo.jsonl")
    mapper = RecordingMapper(header)
    mapper.feed(call(0.1, "c2s", {"id": "1", "method": "ping"}))
    assert mapper.feed(call(0.2, "s2c", {"id": 1, "result": {}})) == []
    assert mapper.feed(call(0.3, "s2c", {"id": "1", "result": {}}))[0].name == "ping"


def test_the_spans_and_the_report_come_from_one_reading_of_the_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    import wiretap.analysis.report as report_module
    import wiretap.otel.sources as sources_module

    opened: list[Path] = []
    real = report_module.open_recording

    def counting(path: Path, **options: Any) -> Any:
        opened.append(path)
        return real(path, **options)

    monkeypatch.setattr(report_module, "open_recording", counting)
    monkeypatch.setattr(sources_module, "open_recording", counting, raising=False)  # were it read there again
    spans = recording_spans(RECORDINGS / "slow-poll.jsonl")
    assert opened == [RECORDINGS / "slow-poll.jsonl"]
    tasks = [s for s in spans if s.name.startswith("task") and "wiretap.task.polls" in s.attributes]
    assert tasks and all(s.attributes.get("wiretap.task.reported") is not False for s in tasks)


def test_over_http_an_error_with_a_null_id_ends_the_call_of_its_own_exchange() -> None:
    header, _, _ = read_all(RECORDINGS / "demo.jsonl")
    mapper = RecordingMapper(header)
    mapper.feed({**call(0.1, "c2s", {"id": 5, "method": "tools/list"}), "ex": 3})
    mapper.feed({**call(0.1, "c2s", {"id": 6, "method": "ping"}), "ex": 4})
    error = {"id": None, "error": {"code": -32700, "message": "Parse error"}}
    (answered,) = mapper.feed({**call(0.2, "s2c", error), "ex": 4})
    assert answered.name == "ping" and answered.attributes["rpc.response.status_code"] == "-32700"


def test_attribute_pairs_made_once_keep_true_one_and_one_point_zero_apart() -> None:
    for _ in range(2):  # (the second round is given the pairs made in the first)
        pairs = otlp_json.key_values({"a": True, "b": 1, "c": 1.0, "d": "1", "e": ["x", "y"]})
        assert pairs == [
            {"key": "a", "value": {"boolValue": True}},
            {"key": "b", "value": {"intValue": "1"}},
            {"key": "c", "value": {"doubleValue": 1.0}},
            {"key": "d", "value": {"stringValue": "1"}},
            {"key": "e", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"stringValue": "y"}]}}},
        ]
    for n in range(otlp_json.KEY_VALUES_KEPT + 10):  # more pairs than are kept: the store starts over
        assert otlp_json.key_values({"n": n}) == [{"key": "n", "value": {"intValue": str(n)}}]
