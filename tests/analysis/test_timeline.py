"""Timeline rows: pairing, summaries, lifecycle; what a person reads in ``wiretap show``."""

from __future__ import annotations

from typing import Any

from wiretap.analysis.timeline import Row, rows
from wiretap.recording.events import Event
from wiretap.render.console import plain_line
from wiretap.render.filters import RowFilter, select


def msg(t: float, direction: str, body: dict[str, Any]) -> Event:
    return {"t": t, "kind": "message", "dir": direction, "size": 1, "msg": {"jsonrpc": "2.0", **body}}


CONVERSATION = [
    {"t": 0.0, "kind": "spawn", "argv": ["python", "server.py"], "pid": 42},
    msg(
        0.01,
        "c2s",
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "clientInfo": {"name": "claude-code", "version": "2"},
            },
        },
    ),
    msg(0.03, "s2c", {"id": 1, "result": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "srv"}}}),
    msg(
        3.31,
        "c2s",
        {"id": 2, "method": "tools/call", "params": {"name": "build_report", "task": {"ttl": 60000}}},
    ),
    msg(
        3.35,
        "s2c",
        {"id": 2, "result": {"task": {"taskId": "T1", "status": "working", "pollInterval": 3000}}},
    ),
    msg(6.32, "c2s", {"id": 3, "method": "tasks/get", "params": {"taskId": "T1"}}),
    msg(6.33, "s2c", {"id": 3, "error": {"code": -32602, "message": "Task not found"}}),
    msg(7.0, "s2c", {"id": "e1", "method": "elicitation/create", "params": {"message": "Which format?"}}),
    msg(9.5, "c2s", {"id": "e1", "result": {"action": "accept", "content": {"f": "pdf"}}}),
    {"t": 10.0, "kind": "signal", "signal": "SIGINT", "signum": 2, "forwarded": True},
    {"t": 10.02, "kind": "exit", "signal": "SIGINT", "signum": 2, "status": 130},
]


def timeline() -> list[Row]:
    return list(rows(CONVERSATION))


def test_lines_read_like_a_bug_report() -> None:
    lines = [plain_line(r) for r in timeline()]
    assert lines[3].split() == ["3.31", "IN", "tools/call", "#2", "build_report", "[as", "task]"]
    assert lines[1].startswith("   0.01  IN   initialize")
    assert "2025-11-25 claude-code 2" in lines[1]


def test_responses_are_paired_with_their_request_method_and_latency() -> None:
    response = timeline()[2]
    assert (response.lane, response.title, response.method, response.id) == (
        "OUT",
        "initialize",
        "initialize",
        1,
    )
    assert response.latency is not None and abs(response.latency - 0.02) < 1e-9
    assert response.summary == "#1 ok 20 ms 2025-11-25 srv"


def test_a_task_handle_shows_its_id_status_and_requested_poll_interval() -> None:
    assert timeline()[4].summary == "#2 ok 40 ms task T1 working poll 3000ms"


def test_errors_show_code_and_message_and_are_flagged() -> None:
    row = timeline()[6]
    assert row.error and row.method == "tasks/get"
    assert row.summary == "#3 error -32602 Task not found after 10 ms"


def test_a_client_answer_to_a_server_request_pairs_in_the_other_direction() -> None:
    row = timeline()[8]
    assert (row.lane, row.method) == ("IN", "elicitation/create")
    assert row.summary == "#e1 ok 2.50 s accept"


def test_lifecycle_events_read_as_sentences() -> None:
    lifecycle = [r.summary for r in timeline() if r.lane == "---"]
    assert lifecycle == [
        "python server.py (pid 42)",
        "SIGINT received, forwarded to the server",
        "server killed by SIGINT (status 130)",
    ]


def test_a_string_id_1_and_a_number_id_1_are_different_requests() -> None:
    events = [
        msg(0, "c2s", {"id": 1, "method": "a"}),
        msg(0.1, "c2s", {"id": "1", "method": "b"}),
        msg(0.2, "s2c", {"id": "1", "result": {}}),
    ]
    assert list(rows(events))[2].method == "b"


def test_odd_shapes_never_break_the_timeline() -> None:
    events: list[Event] = [
        msg(0, "c2s", {"id": 1, "method": "tools/call", "params": "not an object"}),
        {"t": 0.1, "kind": "message", "dir": "c2s", "msg": [{"a": 1}, {"b": 2}]},
        {"t": 0.2, "kind": "message", "dir": "s2c", "msg": 7},
        msg(0.3, "s2c", {"id": 1, "result": ["weird"]}),
        {"t": 0.4, "kind": "message", "dir": "s2c", "raw": "\x1b[31mlog\n", "size": 9},
        {"t": 0.5, "kind": "future_kind", "x": 1},
    ]
    titles = [r.title for r in rows(events)]
    assert titles == ["tools/call", "batch", "json", "tools/call", "raw", "future_kind"]


def test_filters_select_by_method_glob_direction_text_and_time() -> None:
    def kept(keep: RowFilter) -> list[float]:
        return [r.t for r in select(timeline(), keep)]

    assert kept(RowFilter(methods=("tasks/*",))) == [6.32, 6.33]
    assert kept(RowFilter(direction="in")) == [0.01, 3.31, 6.32, 9.5]
    assert kept(RowFilter(text="which FORMAT")) == [7.0]
    assert kept(RowFilter(since=6.0, until=9.5)) == [6.32, 6.33, 7.0, 9.5]
