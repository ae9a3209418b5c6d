"""``header-body-mismatch`` and ``unknown-protocol-version``: 2026-07-28 request headers held against the
body they mirror, and version strings wiretap does not know (wiretap/analysis/header_check.py)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from scenarios.modern_http_server import ModernServer
from support import paths
from support.proxyrun import running_proxy

from wiretap.analysis.report import build_report

REPO = paths.REPO
OURS = ("header-body-mismatch", "unknown-protocol-version")
META = "io.modelcontextprotocol/protocolVersion"
TOL = 0.020


def request_body(rid: int, method: str, version: str = "2026-07-28", **params: Any) -> dict[str, Any]:
    meta = {META: version, "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}


def exchange(
    ex: int, t: float, headers: dict[str, Any], body: dict[str, Any], status: int = 200, code: int | None = None
) -> list[dict[str, Any]]:
    """One POST: its head, its body, the answer's head and body, and its end, 1 ms apart."""
    answer: dict[str, Any] = (
        {"error": {"code": code, "message": "Header mismatch"}} if code is not None else {"result": {}}
    )
    return [
        {"t": t, "kind": "http_request", "ex": ex, "conn": 1, "method": "POST", "path": "/mcp", "headers": headers},
        {"t": t + 0.001, "kind": "message", "ex": ex, "dir": "c2s", "size": 1, "msg": body},
        {"t": t + 0.002, "kind": "http_response", "ex": ex, "status": status, "headers": {}},
        {
            "t": t + 0.003,
            "kind": "message",
            "ex": ex,
            "dir": "s2c",
            "size": 1,
            "msg": {"jsonrpc": "2.0", "id": body.get("id"), **answer},
        },
        {"t": t + 0.004, "kind": "http_end", "ex": ex, "outcome": "complete"},
    ]


def heads(method: str, name: str | None = None, version: str = "2026-07-28") -> dict[str, str]:
    out = {"mcp-method": method, "mcp-protocol-version": version}
    return out if name is None else {**out, "mcp-name": name}


def recorded(path: Path, *exchanges: list[dict[str, Any]]) -> Path:
    header = {"kind": "header", "format": 1, "started": "2026-09-21T12:00:00.000Z", "transport": "http", "name": "t"}
    events = [e for ex in exchanges for e in ex]
    end = {"t": events[-1]["t"] + 0.01, "kind": "end", "written": len(events), "lost": 0, "ended": "normal"}
    path.write_text("\n".join(json.dumps(line) for line in [header, *events, end]) + "\n")
    return path


def ours(path: Path) -> list[dict[str, Any]]:
    return [f for f in build_report(path).to_dict()["findings"] if f["code"] in OURS]


def test_a_mismatched_mcp_method_is_a_finding_with_both_values_and_the_servers_400_and_32020(tmp_path: Path) -> None:
    path = recorded(
        tmp_path / "r.jsonl",
        exchange(
            1, 1.0, heads("tools/list", "get_weather"), request_body(1, "tools/call", name="get_weather"), 400, -32020
        ),
    )
    assert ours(path) == [
        {
            "code": "header-body-mismatch",
            "severity": "error",
            "message": "tools/call #1: Mcp-Method 'tools/list', the body's method is 'tools/call'; "
            "the server rejected it: HTTP 400 with error -32020",
            "advice": "Mirror the body exactly: Mcp-Method = method, Mcp-Name = params.name or params.uri "
            "(=?base64?…?= of its UTF-8 bytes, padded, when not plain ASCII), MCP-Protocol-Version = the "
            "_meta version; a 2026-07-28 server answers a mismatch with 400 and -32020.",
            "times": [1.001, 1.002],
            "task": None,
            "count": 1,
            "header": {
                "header": "Mcp-Method",
                "sent": "tools/list",
                "decoded": "tools/list",
                "problem": None,
                "field": "method",
                "body": "tools/call",
                "method": "tools/call",
                "id": 1,
                "t": 1.001,
                "status": 400,
                "status_at": 1.002,
                "error_code": -32020,
                "error_at": 1.003,
            },
        }
    ]


def test_a_base64_mcp_name_that_decodes_to_another_name_is_a_finding_naming_the_decoded_value(tmp_path: Path) -> None:
    path = recorded(
        tmp_path / "r.jsonl",
        exchange(1, 1.0, heads("tools/call", "=?base64?dGVh?="), request_body(1, "tools/call", name="café"), 200),
    )
    [finding] = ours(path)
    assert finding["message"] == (
        "tools/call #1: Mcp-Name '=?base64?dGVh?=' decodes to 'tea', the body's params.name is 'café'; "
        "the server answered HTTP 200"
    )
    assert (finding["header"]["decoded"], finding["header"]["body"]) == ("tea", "café")


def test_a_base64_mcp_name_that_decodes_to_the_body_is_no_finding(tmp_path: Path) -> None:
    body = request_body(1, "tools/call", name="café")
    assert (
        ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("tools/call", "=?base64?Y2Fmw6k=?="), body))) == []
    )


def test_a_resources_read_mcp_name_is_held_against_params_uri(tmp_path: Path) -> None:
    good = exchange(1, 1.0, heads("resources/read", "file:///a"), request_body(1, "resources/read", uri="file:///a"))
    bad = exchange(2, 2.0, heads("resources/read", "file:///b"), request_body(2, "resources/read", uri="file:///a"))
    [finding] = ours(recorded(tmp_path / "r.jsonl", good, bad))
    assert (finding["header"]["field"], finding["header"]["id"]) == ("params.uri", 2)


def test_unpadded_base64_the_server_accepted_is_no_finding_and_one_it_rejected_is(tmp_path: Path) -> None:
    body = request_body(1, "tools/call", name="café")
    accepted = exchange(1, 1.0, heads("tools/call", "=?base64?Y2Fmw6k?="), body, 200)
    rejected = exchange(2, 2.0, heads("tools/call", "=?base64?Y2Fmw6k?="), {**body, "id": 2}, 400, -32020)
    [finding] = ours(recorded(tmp_path / "r.jsonl", accepted, rejected))
    assert finding["message"] == (
        "tools/call #2: Mcp-Name '=?base64?Y2Fmw6k?=' decodes to 'café' only when read leniently "
        "(base64 padding missing), the body's params.name is 'café'; the server rejected it: HTTP 400 with error -32020"
    )


def test_an_undecodable_mcp_name_is_a_finding_saying_why(tmp_path: Path) -> None:
    body = request_body(1, "prompts/get", name="greet")
    [finding] = ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("prompts/get", "=?base64?!!?="), body)))
    assert finding["message"].startswith("prompts/get #1: Mcp-Name '=?base64?!!?=' cannot be decoded (not base64)")


def test_a_missing_mcp_name_on_2026_07_28_is_a_finding(tmp_path: Path) -> None:
    body = request_body(1, "tools/call", name="add")
    [finding] = ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("tools/call"), body, 400, -32020)))
    assert (finding["header"]["header"], finding["header"]["sent"]) == ("Mcp-Name", None)
    assert finding["message"].startswith("tools/call #1: Mcp-Name is missing, the body's params.name is 'add'")


def test_a_protocol_version_header_that_differs_from_meta_is_a_finding(tmp_path: Path) -> None:
    headers = heads("tools/list", version="2025-11-25")
    [finding] = ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, headers, request_body(1, "tools/list"))))
    assert (finding["header"]["header"], finding["header"]["sent"], finding["header"]["body"]) == (
        "MCP-Protocol-Version",
        "2025-11-25",
        "2026-07-28",
    )


def test_headers_on_a_legacy_request_are_not_checked(tmp_path: Path) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}
    headers = heads("tools/list", "sub", version="2025-11-25")
    assert ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, headers, body))) == []


def test_a_notification_is_not_checked(tmp_path: Path) -> None:
    body = request_body(1, "notifications/cancelled")
    del body["id"]
    assert ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("tools/call"), body, 202))) == []


def test_a_redacted_header_is_not_compared(tmp_path: Path) -> None:
    body = request_body(1, "tools/call", name="add")
    assert ours(recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("tools/call", "[redacted:3fa2]"), body))) == []


def test_a_draft_2026_v1_request_is_checked_as_modern_by_the_parsers_rule(tmp_path: Path) -> None:
    version = "DRAFT-2026-v1"
    mismatched = exchange(
        1, 1.0, heads("tools/list", version=version), request_body(1, "tools/call", version, name="a")
    )
    [finding] = ours(recorded(tmp_path / "r.jsonl", mismatched))
    # A pre-release names only the headers it sent: the missing Mcp-Name is not held against it.
    assert (finding["header"]["header"], finding["header"]["sent"]) == ("Mcp-Method", "tools/list")


def test_a_draft_2025_v1_request_is_legacy_by_the_parsers_rule_though_it_sorts_after_2026_07_28(tmp_path: Path) -> None:
    version = "DRAFT-2025-v1"
    assert version > "2026-07-28"
    mismatched = exchange(
        1, 1.0, heads("tools/list", version=version), request_body(1, "tools/call", version, name="a")
    )
    assert ours(recorded(tmp_path / "r.jsonl", mismatched)) == []


def test_a_repeated_identical_mismatch_is_one_finding_with_a_count(tmp_path: Path) -> None:
    runs = [
        exchange(n, float(n), heads("tools/list", "a"), request_body(n, "tools/call", name="a"), 400, -32020)
        for n in (1, 2, 3)
    ]
    [finding] = ours(recorded(tmp_path / "r.jsonl", *runs))
    assert (finding["count"], finding["times"]) == (3, [1.001, 3.002])


def test_a_version_string_that_is_no_revision_is_an_info_finding_naming_it(tmp_path: Path) -> None:
    body = request_body(1, "server/discover", "1900-01-01")
    path = recorded(tmp_path / "r.jsonl", exchange(1, 1.0, heads("server/discover", version="1900-01-01"), body))
    assert ours(path) == [
        {
            "code": "unknown-protocol-version",
            "severity": "info",
            "message": "the protocol version 1900-01-01 (a date that is no published revision) was sent in "
            "the MCP-Protocol-Version header",
            "advice": "Use a published revision (2024-11-05 … 2026-07-28): a server that does not know a version "
            "rejects it, and wiretap cannot tell which era's rules apply.",
            "times": [1.0, 1.001],
            "task": None,
            "count": 2,
        }
    ]


def test_an_unknown_version_in_initialize_is_named_and_a_pre_release_is_not(tmp_path: Path) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1.0"}}
    draft = request_body(2, "server/discover", "DRAFT-2026-v1")
    path = recorded(
        tmp_path / "r.jsonl",
        exchange(1, 1.0, {}, initialize),
        exchange(2, 2.0, heads("server/discover", version="DRAFT-2026-v1"), draft),
    )
    assert [(f["code"], f["message"]) for f in ours(path)] == [
        (
            "unknown-protocol-version",
            "the protocol version 1.0 (not a protocol version wiretap knows) was sent in an initialize request",
        )
    ]


def test_an_unknown_version_is_named_in_a_batch_and_a_result_but_never_from_a_responses_method(
    tmp_path: Path,
) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1.1"}}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    result = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "9", "serverInfo": {"name": "s"}}}
    events = [
        {"t": 0.1, "kind": "message", "dir": "c2s", "msg": [initialize, ping]},
        {"t": 0.2, "kind": "message", "dir": "s2c", "msg": result},
    ]
    path = recorded(tmp_path / "r.jsonl", events)
    assert [(f["code"], f["message"], f["times"]) for f in ours(path)] == [
        (
            "unknown-protocol-version",
            "the protocol version 1.1 (not a protocol version wiretap knows) was sent in an initialize request",
            [0.1],
        ),
        (
            "unknown-protocol-version",
            "the protocol version 9 (not a protocol version wiretap knows) was sent in an initialize result",
            [0.2],
        ),
    ]


def shipped_recordings() -> list[Path]:
    found = sorted((REPO / "recordings").rglob("*.jsonl"))
    return found + sorted(p for p in (REPO / "tests").rglob("recordings/**/*.jsonl"))


@pytest.mark.parametrize("path", shipped_recordings(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_shipped_recording_raises_a_header_or_version_finding(path: Path) -> None:
    assert ours(path) == []


def test_claude_codes_shipped_http_recording_sends_mcp_name_on_its_tools_call() -> None:
    """The shipped recordings exercise the check: Claude Code's HTTP session mirrors a tools/call."""
    lines = [json.loads(line) for line in (REPO / "recordings/clients/claude-code/web.jsonl").read_text().splitlines()]
    named = [e["headers"] for e in lines if e["kind"] == "http_request" and "mcp-name" in e["headers"]]
    assert [(h["mcp-method"], h["mcp-name"], h["mcp-protocol-version"]) for h in named] == [
        ("tools/call", "add", "2026-07-28")
    ]


# The scenario: a 2026-07-28 server that validates headers strictly, through a real ``wiretap proxy``.
SCENARIO = [
    # (id, method, params, headers, whether the server rejects it)
    (1, "server/discover", {}, {"Mcp-Method": "server/discover"}, False),
    (2, "tools/call", {"name": "get_weather"}, {"Mcp-Method": "tools/list", "Mcp-Name": "get_weather"}, True),
    (3, "tools/call", {"name": "café"}, {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Y2Fmw6k=?="}, False),
    (4, "tools/call", {"name": "café"}, {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?dGVh?="}, True),
    (5, "tools/call", {"name": "café"}, {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Y2Fmw6k?="}, True),
]


def post(url: str, rid: int, method: str, params: dict[str, Any], headers: dict[str, str]) -> int:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    body = json.dumps(request_body(rid, method, **params)).encode()
    every = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        **headers,
    }
    try:
        connection.request("POST", parts.path, body, every)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_through_a_real_proxy_exactly_the_three_mismatches_the_server_refused_are_findings_at_their_times(
    tmp_path: Path,
) -> None:
    with ModernServer() as server, running_proxy(server.url, tmp_path / "rec.jsonl") as proxy:
        statuses = [post(proxy.url, rid, method, params, headers) for rid, method, params, headers, _ in SCENARIO]
    assert statuses == [400 if rejects else 200 for *_, rejects in SCENARIO]
    assert server.rejected == [2, 4, 5]
    requests = {e["msg"]["id"]: e for e in proxy.messages("c2s")}
    answers = {e["ex"]: e for e in proxy.of_kind("http_response")}
    errors = {e["ex"]: e for e in proxy.messages("s2c")}
    found = ours(proxy.recording)
    assert [
        (f["header"]["id"], f["header"]["header"], f["header"]["sent"], f["header"]["decoded"], f["header"]["body"])
        for f in found
    ] == [
        (2, "Mcp-Method", "tools/list", "tools/list", "tools/call"),
        (4, "Mcp-Name", "=?base64?dGVh?=", "tea", "café"),
        (5, "Mcp-Name", "=?base64?Y2Fmw6k?=", "café", "café"),
    ]
    assert [f["header"]["problem"] for f in found] == [None, None, "base64 padding missing"]
    for finding in found:
        request = requests[finding["header"]["id"]]
        answer, error = answers[request["ex"]], errors[request["ex"]]
        assert (finding["header"]["status"], finding["header"]["error_code"]) == (400, -32020)
        assert abs(finding["times"][0] - request["t"]) <= TOL
        assert abs(finding["times"][1] - answer["t"]) <= TOL
        assert abs(finding["header"]["error_at"] - error["t"]) <= TOL
    assert [f["code"] for f in build_report(proxy.recording).to_dict()["findings"]] == ["header-body-mismatch"] * 3


def test_wiretap_show_gives_a_base64_mcp_name_with_what_it_decodes_to(tmp_path: Path) -> None:
    good = exchange(1, 1.0, heads("tools/call", "=?base64?Y2Fmw6k=?="), request_body(1, "tools/call", name="café"))
    bad = exchange(2, 2.0, heads("tools/call", "=?base64?!!?="), request_body(2, "tools/call", name="café"))
    plain = exchange(3, 3.0, heads("tools/call", "add"), request_body(3, "tools/call", name="add"))
    path = recorded(tmp_path / "r.jsonl", good, bad, plain)
    shown = subprocess.run(
        [sys.executable, "-m", "wiretap", "show", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "mcp-name==?base64?Y2Fmw6k=?= (café)" in shown
    assert "mcp-name==?base64?!!?= (undecodable)" in shown
    assert "mcp-name=add mcp-protocol-version" in shown
