"""``wiretap export --format har``: a real proxy recording as HAR 1.2, valid against the HAR schema."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scenarios.http_upstream import Upstream
from support.export_recordings import claude_code_tasks
from support.proxyrun import running_proxy

from wiretap.cli import cli


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json", **(headers or {})}, method="POST")
    send(request)


def get(url: str, headers: dict[str, str] | None = None) -> None:
    send(urllib.request.Request(url, headers=headers or {}))


def send(request: urllib.request.Request) -> None:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
    except urllib.error.HTTPError as error:
        with error:
            error.read()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A recording made by 'wiretap proxy' in front of a scenario upstream: JSON, 202, 404, SSE, A2A REST."""
    recording = tmp_path_factory.mktemp("har") / "rec.jsonl"
    with Upstream() as upstream, running_proxy(f"{upstream.url}/mcp", recording) as proxy:
        base = proxy.url.rsplit("/mcp", 1)[0]
        post(
            proxy.url,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
            {"Authorization": "Bearer sk-abcdef0123456789"},
        )
        post(proxy.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"X-Want-Status": "202"})
        post(proxy.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}, {"X-Want-Status": "404"})
        get(f"{base}/sse-two-events", {"Accept": "text/event-stream"})
        get(f"{proxy.url}?cursor=a%20b&x=1")
        post(f"{base}/a2a/message:send", {"message": {"parts": []}})
        get(f"{base}/a2a/tasks/task-1")
    yield recording


def export_har(recording: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "rec.har"
    result = CliRunner().invoke(cli, ["export", str(recording), "-o", str(out)])
    assert result.exit_code == 0, result.output
    har: dict[str, Any] = json.loads(out.read_text())
    return har


def test_each_exchange_is_an_entry_with_its_url_status_and_bodies(proxied: Path, tmp_path: Path) -> None:
    log = export_har(proxied, tmp_path)["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "wiretap"
    entries = log["entries"]
    header = json.loads(proxied.read_text().splitlines()[0])
    upstream = header["upstream"].removesuffix("/mcp")
    assert [
        (e["request"]["method"], e["request"]["url"].removeprefix(upstream), e["response"]["status"]) for e in entries
    ] == [
        ("POST", "/mcp", 200),
        ("POST", "/mcp", 202),
        ("POST", "/mcp", 404),
        ("GET", "/sse-two-events", 200),
        ("GET", "/mcp?cursor=a%20b&x=1", 405),
        ("POST", "/a2a/message:send", 200),
        ("GET", "/a2a/tasks/task-1", 200),
    ]
    first = entries[0]
    assert json.loads(first["request"]["postData"]["text"]) == {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    assert json.loads(first["response"]["content"]["text"]) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"method": "initialize"},
    }
    [authorization] = [h["value"] for h in first["request"]["headers"] if h["name"] == "authorization"]
    assert authorization.startswith("[redacted:")
    assert entries[4]["request"]["queryString"] == [{"name": "cursor", "value": "a b"}, {"name": "x", "value": "1"}]
    assert "postData" not in entries[4]["request"] and "text" not in entries[1]["response"]["content"]


def test_an_event_stream_is_rebuilt_event_by_event_and_timed(proxied: Path, tmp_path: Path) -> None:
    sse = export_har(proxied, tmp_path)["log"]["entries"][3]
    assert sse["_resourceType"] == "eventsource"
    events = [block.splitlines() for block in sse["response"]["content"]["text"].split("\n\n") if block]
    assert [lines[:2] for lines in events] == [["event: message", "id: e1"], ["event: message", "id: e2"]]
    assert [json.loads(lines[2].removeprefix("data: "))["method"] for lines in events] == ["first", "second"]
    timings = sse["timings"]
    assert timings["receive"] >= 900, "the second event came a second after the first"
    assert sse["time"] == pytest.approx(timings["send"] + timings["wait"] + timings["receive"])


def test_times_are_wall_clock_from_the_recordings_start(proxied: Path, tmp_path: Path) -> None:
    entries = export_har(proxied, tmp_path)["log"]["entries"]
    started = json.loads(proxied.read_text().splitlines()[0])["started"]
    assert entries[0]["startedDateTime"][:16] == started[:16] and entries[0]["startedDateTime"].endswith("Z")
    assert [e["startedDateTime"] for e in entries] == sorted(e["startedDateTime"] for e in entries)


def test_a_stdio_recording_has_nothing_to_export_and_says_why_in_one_line(tmp_path: Path) -> None:
    recording = claude_code_tasks(tmp_path / "rec.jsonl")
    result = CliRunner().invoke(cli, ["export", str(recording), "--format", "har"])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "nothing to export as HAR" in line and "stdio recording" in line and "HTTP exchanges" in line


def validator() -> Any:
    from jsonschema import Draft6Validator, FormatChecker
    from referencing import Registry, Resource
    from support import export_peers

    try:
        schemas = export_peers.har_schemas()
    except export_peers.RegistryUnreachable as exc:
        pytest.skip(str(exc))
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(schema)) for name, schema in schemas.items()
    )
    return Draft6Validator(schemas["har.json"], registry=registry, format_checker=FormatChecker())


@pytest.mark.slow
def test_the_har_validates_against_the_har_1_2_schema(proxied: Path, tmp_path: Path) -> None:
    check = validator()
    har = export_har(proxied, tmp_path)
    assert [error.message for error in check.iter_errors(har)] == []
    del har["log"]["entries"][0]["response"]["status"]
    har["log"]["entries"][1]["request"]["headers"] = "not a list"
    assert len(list(check.iter_errors(har))) == 2, "the schema is really applied"
