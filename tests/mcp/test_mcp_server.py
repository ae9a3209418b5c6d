"""``wiretap mcp``: the MCP protocol byte by byte, every tool over real sessions and recordings, the
folders it refuses to leave, and the size cap on every result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.mcp_sessions import SECRET, SESSION, big_and_unredacted, session_workdir

from wiretap.mcp.assemble import build
from wiretap.mcp.budget import CAP, WHOLE_STRING_LIMIT
from wiretap.mcp.protocol import Protocol, Tool, ToolError

REPO_RECORDINGS = paths.RECORDINGS
TOOL_NAMES = ["list_sessions", "list_recordings", "timeline", "report", "get_message", "search", "diff"]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

Json = dict[str, Any]


# The protocol, byte by byte.


def echo_protocol() -> Protocol:
    def echo(arguments: Json) -> Json:
        if "fail" in arguments:
            raise ToolError("it failed")
        return {"said": arguments.get("text")}

    tool = Tool("echo", "Says it back.", {"type": "object"}, echo)
    return Protocol([tool], {"name": "t", "version": "1"}, "Read me.")


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n',
            b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":'
            b'{"listChanged":false}},"serverInfo":{"name":"t","version":"1"},"instructions":"Read me."}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}\n',
            b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":'
            b'{"listChanged":false}},"serverInfo":{"name":"t","version":"1"},"instructions":"Read me."}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n',
            b'{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","supportedVersions":["2026-07-28",'
            b'"2025-11-25","2025-06-18"],"capabilities":{"tools":{}},"instructions":"Read me.","_meta":'
            b'{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"1"}},"ttlMs":0,"cacheScope":"private"}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n',
            b'{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Says it back.",'
            b'"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false,'
            b'"openWorldHint":false}}]}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n',
            b'{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo","description":'
            b'"Says it back.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,'
            b'"destructiveHint":false,"openWorldHint":false}}],"ttlMs":0,"cacheScope":"private"}}\n',
        ),
        (
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9"}}}\n'.encode(),
            '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\\"said\\":\\"h\u00e9\\"}"}],'
            '"structuredContent":{"said":"h\u00e9"}}}\n'.encode(),
        ),
        (
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\nb"},'
            b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n',
            b'{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":'
            b'"{\\"said\\":\\"a\\\\nb\\"}"}],"structuredContent":{"said":"a\\nb"}}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"fail":1}}}\n',
            b'{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"it failed"}],"isError":true}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}\n',
            b'{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: \'nope\' (tools: echo)"}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":6,"method":"resources/list"}\n',
            b'{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found: resources/list"}}\n',
        ),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}}\n',
            b'{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":'
            b'{"supported":["2026-07-28"],"requested":"1900-01-01"}}}\n',
        ),
        (b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n', b'{"jsonrpc":"2.0","id":8,"result":{}}\n'),
        (
            b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}\n',
            b'{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid params: params must be an object"}}\n',
        ),
        (b"{not json\n", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'),
        (b'{"id":10}\n', b'{"jsonrpc":"2.0","id":10,"error":{"code":-32600,"message":"Invalid Request"}}\n'),
        (
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n',
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":'
            b'"Invalid Request: batches are not supported"}}\n',
        ),
    ],
    ids=[
        "initialize-2025-06-18",
        "initialize-unknown-version",
        "server-discover",
        "tools-list-legacy",
        "tools-list-modern",
        "tools-call-utf8",
        "tools-call-modern-newline-escaped",
        "tool-error",
        "unknown-tool",
        "unknown-method",
        "unsupported-version",
        "ping",
        "params-not-an-object",
        "parse-error",
        "invalid-request",
        "batch",
    ],
)
def test_each_request_gets_exactly_this_line(line: bytes, answer: bytes) -> None:
    assert echo_protocol().receive(line) == answer


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}\n',
        b'{"jsonrpc":"2.0","id":1,"result":{}}\n',
        b"\n",
        b"  \r\n",
    ],
    ids=["initialized", "cancelled", "a-response", "blank", "whitespace"],
)
def test_notifications_responses_and_blank_lines_get_no_answer(line: bytes) -> None:
    assert echo_protocol().receive(line) is None


def test_a_tool_that_breaks_answers_with_a_tool_error_and_the_server_keeps_serving() -> None:
    def broken(arguments: Json) -> Json:
        raise KeyError("x")

    protocol = Protocol([Tool("broken", "", {"type": "object"}, broken)], {"name": "t", "version": "1"}, "")
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"broken"}}\n'
    assert protocol.receive(line) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"broken failed: KeyError: \'x\'"}],'
        b'"isError":true}}\n'
    )
    assert protocol.receive(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n') == b'{"jsonrpc":"2.0","id":2,"result":{}}\n'


def test_the_stdio_server_answers_line_by_line_and_exits_0_at_end_of_input(tmp_path: Path) -> None:
    lines = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "mcp"], input=lines, cwd=tmp_path, capture_output=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, b"")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in answers[1]["result"]["tools"]] == TOOL_NAMES


# Every tool, over a real session and the repository's recordings.


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_workdir(tmp_path_factory.mktemp("mcp"))


def call(protocol: Protocol, tool: str, **arguments: Any) -> tuple[Json, bytes]:
    """The tool's structured result (or {"error": text}) and the whole answer line."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    line = protocol.receive(json.dumps(request).encode() + b"\n")
    assert line is not None
    result = json.loads(line)["result"]
    if result.get("isError"):
        return {"error": result["content"][0]["text"]}, line
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"], line


@pytest.fixture(scope="module")
def server(workdir: Path) -> Protocol:
    return build(workdir, (REPO_RECORDINGS,))


def test_list_sessions_gives_the_session_with_its_servers_and_message_counts(server: Protocol) -> None:
    found, _ = call(server, "list_sessions")
    clients = [str(p.parent.resolve()) for p in sorted(REPO_RECORDINGS.glob("clients/*/manifest.json"))]
    assert (found["total"], found["next_offset"]) == (1 + len(clients), None)
    assert sorted(s["path"] for s in found["sessions"]) == sorted(["wiretap-sessions/s1", *clients])
    started = [s["started"] for s in found["sessions"]]
    assert started == sorted(started, reverse=True)
    session = next(s for s in found["sessions"] if s["path"] == "wiretap-sessions/s1")
    assert (session["path"], session["client"], session["status"]) == ("wiretap-sessions/s1", "Claude Code", "exit 0")
    assert session["servers"] == [
        {"name": "alpha", "transport": "stdio", "messages": 4, "recordings": ["wiretap-sessions/s1/alpha.jsonl"]},
        {"name": "beta", "transport": "stdio", "messages": 5, "recordings": ["wiretap-sessions/s1/beta.jsonl"]},
    ]


def test_list_recordings_pages_the_loose_recordings_of_every_root(server: Protocol) -> None:
    first, _ = call(server, "list_recordings", limit=2)
    shipped = len(list(REPO_RECORDINGS.glob("*.jsonl")))  # those under clients/ are sessions'
    assert (first["total"], first["offset"], first["next_offset"]) == (shipped + 1, 0, 2)
    every, _ = call(server, "list_recordings", limit=200)
    paths = [r["path"] for r in every["recordings"]]
    assert "wiretap-recordings/big.jsonl" in paths
    assert str(REPO_RECORDINGS.resolve() / "demo.jsonl") in paths
    demo = next(r for r in every["recordings"] if r["path"].endswith("/demo.jsonl"))
    assert (demo["name"], demo["transport"], demo["redacted"]) == ("demo", "stdio", True)


def test_timeline_of_a_session_filters_by_server_method_direction_time_and_text(
    server: Protocol, workdir: Path
) -> None:
    whole, _ = call(server, "timeline", path="s1", method="tools/*")
    assert [(r["server"], r["lane"], r["method"]) for r in whole["rows"]] == [
        ("alpha", "IN", "tools/list"),
        ("alpha", "OUT", "tools/list"),
        ("alpha", "IN", "tools/call"),
        ("alpha", "OUT", "tools/call"),
        ("beta", "IN", "tools/list"),
        ("beta", "OUT", "tools/list"),
        ("beta", "IN", "tools/call"),
        ("beta", "OUT", "tools/call"),
    ]
    assert whole["clock"] == "the session's: 0 = the client's start"
    out, _ = call(server, "timeline", path="wiretap-sessions/s1", server="beta", direction="out")
    assert [(r["title"], r["line"]) for r in out["rows"]] == outgoing_lines(workdir / SESSION / "beta.jsonl")
    assert out["rows"][1]["latency"] > 0
    texts, _ = call(server, "timeline", path="s1", text="starting scenario")
    assert [r["summary"] for r in texts["rows"]] == ["Starting scenario server v1.0 on stdio... [41 bytes]"]
    start = whole["rows"][2]["t"]
    later, _ = call(server, "timeline", path="s1", method=["tools/call"], since=start, until=start)
    assert [(r["lane"], r["t"]) for r in later["rows"]] == [("IN", start)]


def test_timeline_pages_with_totals_and_next_offset(server: Protocol) -> None:
    first, _ = call(server, "timeline", path="s1", limit=3)
    rest, _ = call(server, "timeline", path="s1", offset=3, limit=200)
    assert (first["total"], first["next_offset"], len(first["rows"])) == (rest["total"], 3, 3)
    assert rest["next_offset"] is None
    assert len(rest["rows"]) == rest["total"] - 3


def test_report_summary_counts_and_findings_page(server: Protocol) -> None:
    summary, _ = call(server, "report", path="s1")
    assert summary["servers"] == ["alpha", "beta"]
    assert summary["counts"] == {"findings": 1, "tasks": 0, "questions": 0, "latency": 4}, summary["findings"]
    assert summary["findings"] == [{"index": 0, "code": "stdout-not-json", "severity": "warning", "server": "beta"}]
    assert "cancel_on_exit" in summary["verdicts"]
    findings, _ = call(server, "report", path="s1", section="findings")
    (finding,) = findings["findings"]
    assert (finding["index"], finding["code"], finding["server"]) == (0, "stdout-not-json", "beta")
    assert "'Starting scenario server v1.0 on stdio...' (41 bytes)" in finding["message"]
    beta, _ = call(server, "report", path="s1", server="beta", section="latency")
    assert [(row["server"], row["method"]) for row in beta["latency"]] == [
        ("beta", "tools/call"),
        ("beta", "tools/list"),
    ]


def test_report_of_a_recording_with_tasks_and_questions(server: Protocol) -> None:
    form = str(REPO_RECORDINGS / "cc-ext-form.jsonl")
    tasks, _ = call(server, "report", path=form, section="tasks")
    assert [(t["index"], t["id"]) for t in tasks["tasks"]] == [(0, "tsk-8a41e07b")]
    questions, _ = call(server, "report", path=form, section="questions")
    assert [(q["index"], q["task"]) for q in questions["questions"]] == [(0, "tsk-8a41e07b")]


def test_get_message_by_line_and_by_index_is_the_same_event(server: Protocol, workdir: Path) -> None:
    by_line, _ = call(server, "get_message", recording="s1/beta.jsonl", line=4)
    by_index, _ = call(server, "get_message", recording="s1/beta.jsonl", index=by_line["index"])
    assert by_line == by_index
    assert by_line["event"]["raw"] == "Starting scenario server v1.0 on stdio..."
    assert (by_line["server"], by_line["row"]["title"]) == ("beta", "raw")
    missing, _ = call(server, "get_message", recording="s1/beta.jsonl", line=999)
    assert missing["error"].startswith("s1/beta.jsonl: no event at line 999 (it has lines 2–")
    folder, _ = call(server, "get_message", recording="s1", line=2)
    session = workdir.resolve() / "wiretap-sessions" / "s1"
    files = f"{session / 'alpha.jsonl'}, {session / 'beta.jsonl'}"
    assert folder == {"error": f"{session}: a session folder; name one of its recordings ({files})"}
    both, _ = call(server, "get_message", recording="s1/beta.jsonl", line=4, index=2)
    assert both == {"error": "give line or index (one of them)"}


def test_search_finds_text_and_methods_across_every_recording(server: Protocol) -> None:
    banner, _ = call(server, "search", text="Starting scenario")
    (match,) = banner["matches"]
    assert (match["session"], match["server"], match["line"]) == ("wiretap-sessions/s1", "beta", 4)
    assert banner["recordings_searched"] == 2 + len(list(REPO_RECORDINGS.rglob("*.jsonl"))) + 1  # s1, shipped, big
    discover, _ = call(server, "search", method="server/discover", path=str(REPO_RECORDINGS / "demo.jsonl"))
    assert [(m["lane"], m["line"]) for m in discover["matches"]] == [("IN", 3), ("OUT", 5)]
    neither, _ = call(server, "search")
    assert neither == {"error": "give text or method (or both) to search for"}


def test_diff_of_a_session_with_itself_differs_in_nothing_and_of_two_recordings_pages_what_differs(
    server: Protocol,
) -> None:
    same, _ = call(server, "diff", a="s1", b="wiretap-sessions/s1")
    assert (same["differs"], same["total"], same["servers"], same["unpaired"]) == (False, 0, ["alpha", "beta"], [])
    other, _ = call(
        server,
        "diff",
        a=str(REPO_RECORDINGS / "exit-cancel.jsonl"),
        b=str(REPO_RECORDINGS / "exit-no-cancel.jsonl"),
        limit=1,
    )
    assert other["differs"] is True
    assert len(other["differences"]) == 1
    assert other["next_offset"] == (1 if other["total"] > 1 else None)
    assert set(other["differences"][0]) == {"server", "section", "change"}


def test_bad_arguments_are_one_line_tool_errors(server: Protocol) -> None:
    assert call(server, "timeline")[0] == {"error": "missing argument 'path'"}
    assert call(server, "timeline", path="s1", direction="up")[0] == {
        "error": "argument 'direction' must be one of in, out, not 'up'"
    }
    assert call(server, "list_sessions", limit=0)[0] == {"error": "argument 'limit' must be at least 1"}
    assert call(server, "list_sessions", colour=True)[0] == {
        "error": "unknown argument 'colour' (this tool takes: offset, limit)"
    }
    assert call(server, "timeline", path="s1", server="gamma")[0]["error"].endswith(
        "no server 'gamma' in this session (it has: alpha, beta)"
    )
    assert call(server, "report", path="s1/nope.jsonl")[0]["error"].startswith("s1/nope.jsonl: no such session")


# Only wiretap's folders.


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "../",
        "wiretap-sessions/../../",
        "s1/../../../etc",
        "wiretap-sessions/out",
        "wiretap-sessions/out/x.jsonl",
    ],
    ids=[
        "absolute-outside",
        "dotdot",
        "dotdot-from-root",
        "dotdot-through-a-session",
        "symlink-out",
        "through-symlink",
    ],
)
def test_paths_outside_the_roots_are_refused_by_every_tool_that_takes_one(
    workdir: Path, tmp_path: Path, path: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    big_and_unredacted(outside / "x.jsonl")
    link = workdir / "wiretap-sessions" / "out"
    if not link.is_symlink():
        link.symlink_to(outside)
    try:
        server = build(workdir, ())
        for tool, arguments in (
            ("timeline", {"path": path}),
            ("report", {"path": path}),
            ("get_message", {"recording": path, "line": 2}),
            ("search", {"text": "x", "path": path}),
            ("diff", {"a": "s1", "b": path}),
        ):
            error = call(server, tool, **arguments)[0].get("error", "")
            assert error == f"{path}: outside the folders wiretap mcp reads (wiretap-sessions, wiretap-recordings)", (
                tool
            )
        searched, _ = call(server, "search", text="big")
        assert all(not m["recording"].startswith(str(outside)) for m in searched["matches"])
    finally:
        link.unlink()


def test_a_root_given_with_root_is_read_and_a_symlink_inside_it_to_inside_is_followed(
    workdir: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "demo.jsonl").symlink_to(REPO_RECORDINGS / "demo.jsonl")
    server = build(workdir, (extra, REPO_RECORDINGS))
    rows, _ = call(server, "timeline", path=str(extra / "demo.jsonl"), method="server/discover")
    assert [r["lane"] for r in rows["rows"]] == ["IN", "OUT"]
    alone = build(workdir, (extra,))
    assert call(alone, "timeline", path=str(extra / "demo.jsonl"))[0]["error"].endswith(
        f"outside the folders wiretap mcp reads (wiretap-sessions, wiretap-recordings, {extra})"
    )


# Secrets and size.


def test_an_unredacted_recording_is_redacted_before_it_is_returned_and_the_result_says_so(server: Protocol) -> None:
    message, line = call(server, "get_message", recording="wiretap-recordings/big.jsonl", line=2)
    assert SECRET.encode() not in line
    assert message["event"]["msg"]["params"]["arguments"]["api_key"].startswith("[redacted:")
    assert message["redaction"] == (
        "recorded with --no-redact (wiretap-recordings/big.jsonl): credentials were redacted by wiretap mcp "
        "before answering"
    )
    found, line = call(server, "search", text="sk-ant-api03")
    assert (found["total"], SECRET.encode() in line) == (0, False)
    rows, line = call(server, "timeline", path="wiretap-recordings/big.jsonl", limit=1)
    assert SECRET.encode() not in line and "redaction" in rows


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_sessions", {"limit": 200}),
        ("list_recordings", {"limit": 200}),
        ("timeline", {"path": "wiretap-recordings/big.jsonl", "limit": 200}),
        ("report", {"path": "wiretap-recordings/big.jsonl"}),
        ("report", {"path": "wiretap-recordings/big.jsonl", "section": "latency", "limit": 200}),
        ("get_message", {"recording": "wiretap-recordings/big.jsonl", "line": 3}),
        ("search", {"text": "xxxx", "limit": 200}),
        ("diff", {"a": "wiretap-recordings/big.jsonl", "b": "s1", "limit": 200}),
    ],
    ids=["list_sessions", "list_recordings", "timeline", "report", "report-section", "get_message", "search", "diff"],
)
def test_every_result_is_at_most_32_kib_of_json(server: Protocol, tool: str, arguments: Json) -> None:
    result, _ = call(server, tool, **arguments)
    assert "error" not in result
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()
    assert len(text) <= CAP


def test_a_page_that_would_not_fit_stops_early_and_says_where_to_go_on(server: Protocol) -> None:
    page, _ = call(server, "search", text="xxxx", limit=200)
    assert page["total"] == 300
    assert 0 < len(page["matches"]) < 200
    assert page["next_offset"] == len(page["matches"])
    assert page["page_note"] == f"{len(page['matches'])} of the 200 asked for fit under 32 KiB"


def test_a_long_string_is_clipped_and_says_its_length(server: Protocol) -> None:
    whole, _ = call(server, "get_message", recording="wiretap-recordings/big.jsonl", line=3)
    assert whole["event"]["msg"]["result"]["text"] == "x" * 5000
    clipped, _ = call(server, "get_message", recording="wiretap-recordings/big.jsonl", line=5)
    assert (
        clipped["event"]["msg"]["result"]["text"] == "x" * WHOLE_STRING_LIMIT + "… [clipped: 20000 characters in all]"
    )
    assert clipped["event_bytes"] > 20000


def outgoing_lines(recording: Path) -> list[tuple[str, int]]:
    """The server's frames as the recording has them: (method of the request answered, or "raw"; line)."""
    methods: dict[object, str] = {}
    found = []
    for number, text in enumerate(recording.read_text().splitlines(), 1):
        event = json.loads(text)
        if event.get("kind") != "message":
            continue
        body = event.get("msg")
        if event.get("dir") == "c2s" and isinstance(body, dict) and "method" in body:
            methods[body.get("id")] = body["method"]
        elif event.get("dir") == "s2c":
            found.append((methods.get(body.get("id"), "?") if isinstance(body, dict) else "raw", number))
    return found
