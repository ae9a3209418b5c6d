"""Pairing and counting on small HTTP recordings of known truth: a null-id error, bodies that are not
JSON-RPC, A2A streaming events, a poll for an id never seen, a cancel just before the client left."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from wiretap.analysis.report import build_report
from wiretap.analysis.timeline import rows
from wiretap.cli import cli
from wiretap.recording.events import Header
from wiretap.recording.reader import open_recording
from wiretap.recording.writer import encode_event


class Http:
    """HTTP exchanges on one connection, written the way the HTTP recorder writes them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = [{"t": 0.0, "kind": "connection", "conn": 1, "state": "open"}]
        self.ex = 0

    def exchange(
        self,
        t: float,
        request: Any,
        status: int,
        *answers: Any,
        method: str = "POST",
        path: str = "/mcp",
        took: float = 0.01,
        sse: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.ex += 1
        ex = self.ex
        self.events.append(
            {
                "t": t,
                "kind": "http_request",
                "ex": ex,
                "conn": 1,
                "method": method,
                "path": path,
                "headers": headers or {},
            }
        )
        if request is not None:
            self.events.append({"t": t, "kind": "message", "dir": "c2s", "ex": ex, **_body(request)})
        reply = t + took
        self.events.append(
            {"t": reply, "kind": "http_response", "ex": ex, "status": status, "reason": "", "headers": {}}
        )
        for n, answer in enumerate(answers):
            extra = {"sse": {"event": "message"}} if sse else {}
            self.events.append(
                {"t": reply + n * 0.01, "kind": "message", "dir": "s2c", "ex": ex, **_body(answer), **extra}
            )
        end = reply + len(answers) * 0.01
        self.events.append({"t": end, "kind": "http_end", "ex": ex, "outcome": "complete"})

    def close(self, t: float) -> None:
        self.events.append({"t": t, "kind": "connection", "conn": 1, "state": "closed"})

    def write(self, path: Path) -> Path:
        header = Header("http", "scenario", ["wiretap", "proxy"], started_epoch=1_795_000_000.0)
        with path.open("wb") as file:
            file.write(b"".join(encode_event(header.to_dict())))
            for event in sorted(self.events, key=lambda e: e["t"]):
                file.write(b"".join(encode_event(event)))
        return path


def _body(body: Any) -> dict[str, Any]:
    return {"raw": body, "size": len(body)} if isinstance(body, str) else {"msg": body, "size": len(json.dumps(body))}


def rpc(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


def test_a_null_id_error_pairs_with_the_request_of_its_exchange_and_counts_as_its_error(tmp_path: Path) -> None:
    h = Http()
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Unsupported protocol version"}}
    h.exchange(0.10, rpc(1, "server/discover"), 400, error)
    h.exchange(
        0.20, rpc(1, "initialize"), 200, {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}
    )
    h.close(0.50)
    path = h.write(tmp_path / "rec.jsonl")
    report = build_report(path)
    assert [f.code for f in report.findings] == []
    latency = {row.method: (row.count, row.errors) for row in report.latency}
    assert latency == {"server/discover": (1, 1), "initialize": (1, 0)}
    with open_recording(path) as reader:
        answer = next(r for r in rows(reader.events()) if r.lane == "OUT")
    assert answer.title == "server/discover" and answer.error and "#None" not in answer.summary
    checked = tmp_path / "no-findings.expect.yaml"
    checked.write_text("version: 1\nexpect:\n  - no_findings: true\n")
    result = CliRunner().invoke(cli, ["check", str(path), "--expect", str(checked)])
    assert result.exit_code == 0, result.output


def test_only_json_rpc_messages_are_counted_and_other_bodies_are_named(tmp_path: Path) -> None:
    h = Http()
    card = {"name": "travel", "url": "http://127.0.0.1/a2a", "skills": [], "capabilities": {}}
    h.exchange(0.05, None, 200, card, method="GET", path="/.well-known/agent-card.json")
    h.exchange(0.10, rpc(1, "initialize"), 200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    h.exchange(0.20, {"jsonrpc": "2.0", "method": "notifications/initialized"}, 202, "Accepted")
    h.exchange(0.30, rpc(2, "tools/list"), 200, {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}})
    h.exchange(
        0.40, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}, 202, "Accepted"
    )
    h.exchange(0.50, "not json", 400, "Bad Request: body is not JSON")
    h.close(0.60)
    path = h.write(tmp_path / "rec.jsonl")
    report = build_report(path)
    assert (report.messages.c2s, report.messages.s2c) == (4, 2)
    assert report.messages.other == {
        "agent card": 1,
        "202 Accepted": 2,
        "400 Bad Request: body is not JSON": 1,
        "text body": 1,
    }
    assert report.to_dict()["messages"]["other"]["202 Accepted"] == 2
    assert [f.code for f in report.findings] == []
    with open_recording(path) as reader:
        titles = [r.title for r in rows(reader.events()) if r.lane == "OUT"]
    assert titles == [
        "agent card",
        "initialize",
        "202 Accepted",
        "tools/list",
        "202 Accepted",
        "400 Bad Request: body is not JSON",
    ]


def test_every_a2a_streaming_event_is_summarised(tmp_path: Path) -> None:
    h = Http()
    send = rpc(1, "SendStreamingMessage", {"message": {"role": "ROLE_USER", "parts": [{"text": "go"}]}})
    events = [
        {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "T", "status": {"state": "TASK_STATE_SUBMITTED"}}}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"statusUpdate": {"taskId": "T", "status": {"state": "TASK_STATE_WORKING"}}},
        },
        {"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "T", "artifact": {"name": "plan"}}}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"statusUpdate": {"taskId": "T", "status": {"state": "TASK_STATE_COMPLETED"}, "final": True}},
        },
    ]
    h.exchange(0.1, send, 200, *events, sse=True, headers={"a2a-version": "1.0"})
    h.close(0.5)
    path = h.write(tmp_path / "rec.jsonl")
    with open_recording(path) as reader:
        answers = [r for r in rows(reader.events()) if r.lane == "OUT"]
    assert [r.title for r in answers] == ["SendStreamingMessage"] * 4
    assert [r.summary.split(" ms ", 1)[-1] for r in answers[1:]] == [
        "status update: task T TASK_STATE_WORKING",
        "artifact update: task T plan",
        "status update: task T TASK_STATE_COMPLETED (final)",
    ]
    (task,) = build_report(path).tasks
    assert task.final_state == "TASK_STATE_COMPLETED"


def test_a_poll_for_an_id_never_seen_is_a_finding_not_a_task(tmp_path: Path) -> None:
    h = Http()
    missing = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}
    h.exchange(0.1, rpc(1, "GetTask", {"id": "ghost"}), 200, missing, headers={"a2a-version": "1.0"})
    h.exchange(0.3, rpc(2, "GetTask", {"id": "ghost"}), 200, {**missing, "id": 2}, headers={"a2a-version": "1.0"})
    h.close(0.5)
    report = build_report(h.write(tmp_path / "rec.jsonl"))
    assert report.tasks == []
    (finding,) = report.findings
    assert (finding.code, finding.task, finding.count) == ("poll-for-unknown-task", "ghost", 2)


def test_a_task_cancelled_just_before_exit_is_not_live_in_the_verdict_nor_in_the_tasks(tmp_path: Path) -> None:
    h = Http()
    a2a = {"a2a-version": "1.0"}
    created = {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "T", "status": {"state": "TASK_STATE_WORKING"}}}}
    h.exchange(0.10, rpc(1, "SendMessage", {"message": {"parts": [{"text": "go"}]}}), 200, created, headers=a2a)
    cancelled = {"jsonrpc": "2.0", "id": 2, "result": {"id": "T", "status": {"state": "TASK_STATE_CANCELED"}}}
    h.exchange(0.70, rpc(2, "CancelTask", {"id": "T"}), 200, cancelled, took=0.005, headers=a2a)
    h.close(0.72)
    report = build_report(h.write(tmp_path / "rec.jsonl"))
    (task,) = report.tasks
    verdict = report.verdicts.cancel_on_exit
    assert report.client_exit is not None and report.client_exit.t == 0.72
    assert task.live_at_client_exit is False
    assert (verdict.live_tasks, verdict.cancelled, verdict.sent) == ([], ["T"], True)
    assert "with no live task, having cancelled 1 task on its way out" in verdict.verdict


def test_a_task_stop_well_before_exit_is_a_stop_during_the_session_and_the_task_is_not_live(tmp_path: Path) -> None:
    h = Http()
    meta = {
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
    }
    created = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "taskId": "T", "status": "working"}}
    h.exchange(0.10, rpc(1, "tools/call", {"name": "forever", "arguments": {}, **meta}), 200, created)
    # TaskStop: two cancels in the same millisecond, each answered with an empty result, 1.6 s before exit.
    h.exchange(0.50, rpc(2, "tasks/cancel", {"taskId": "T"}), 200, {"jsonrpc": "2.0", "id": 2, "result": {}})
    h.exchange(0.50, rpc(3, "tasks/cancel", {"taskId": "T"}), 200, {"jsonrpc": "2.0", "id": 3, "result": {}})
    h.close(2.12)
    report = build_report(h.write(tmp_path / "rec.jsonl"))
    (task,) = report.tasks
    verdict = report.verdicts.cancel_on_exit
    assert len(task.cancels) == 2
    assert task.live_at_client_exit is False
    assert (verdict.live_tasks, verdict.cancelled, verdict.sent) == ([], [], None)
    assert "with no live task; it had stopped 1 task during the session" in verdict.verdict
    assert "on its way out" not in verdict.verdict
