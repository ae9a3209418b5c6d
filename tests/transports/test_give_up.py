"""``client-gave-up``, ``answer-after-give-up`` and ``idle-timeout-risk`` against peers of known truth
(scenarios/give_up_peers.py) recorded through a real ``wiretap tap`` and ``wiretap proxy``: each finding's
times are those the recording itself gives for what the peers did (the call, the cancel, the closed
connection, the late answer), within ``TOL``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from scenarios.give_up_peers import SlowHttpServer, http_client, stdio_client
from support import paths
from support.proxyrun import running_proxy
from support.taprun import TAP, settled_read_all

from wiretap.analysis.limits import Limit, largest_limit, limit_for
from wiretap.analysis.report import build_report
from wiretap.analysis.session_report import build_session_report, session_limits

REPO = paths.REPO
SERVER = [sys.executable, str(paths.SCENARIOS / "give_up_server.py")]
CODES = ("client-gave-up", "answer-after-give-up", "idle-timeout-risk")
TOL = 0.020
IDLE_HALF_SECOND = {"limits_env": {"CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT": "500"}}


def ours(path: Path, manifest: dict[str, Any] | None = None) -> list[tuple[str, list[float]]]:
    limits = session_limits(manifest, {}) if manifest is not None else None
    report = build_report(path, limits=limits)
    return [(f.code, f.times) for f in report.findings if f.code in CODES]


def times_of(path: Path) -> dict[str, float]:
    """When the recording shows what the peers did."""
    _, events, _ = settled_read_all(path)
    found: dict[str, float] = {}
    for event in events:
        msg = event.get("msg") if isinstance(event.get("msg"), dict) else {}
        key = {
            ("c2s", "tools/call"): "call",
            ("c2s", "notifications/cancelled"): "cancel",
            ("s2c", "notifications/progress"): "progress",
        }.get((event.get("dir"), msg.get("method")))
        if event.get("kind") == "message" and event.get("dir") == "s2c" and msg.get("id") == 2:
            key = "answer"
        elif event.get("kind") == "eof" and event.get("dir") == "c2s":
            key = "stdin closed"
        elif event.get("kind") == "http_end" and event.get("outcome") == "client_disconnected":
            key = "disconnected"
        if key is not None:
            found.setdefault(key, float(event["t"]))
    return found


def assert_findings(got: list[tuple[str, list[float]]], want: list[tuple[str, list[float]]]) -> None:
    assert [code for code, _ in got] == [code for code, _ in want], got
    for (code, times), (_, truth) in zip(got, want, strict=True):
        assert len(times) == len(truth), (code, times, truth)
        assert all(abs(a - b) <= TOL for a, b in zip(times, truth, strict=True)), (code, times, truth)


def tap(tmp_path: Path) -> tuple[Path, list[str]]:
    recording = tmp_path / "slow.jsonl"
    return recording, [*TAP, "--out", str(recording), "--", *SERVER]


def test_a_stdio_call_cancelled_then_answered_is_given_up_and_its_answer_lost(tmp_path: Path) -> None:
    recording, argv = tap(tmp_path)
    assert stdio_client(argv, 1.0, cancel_after=0.3) == 0
    t = times_of(recording)
    assert_findings(
        ours(recording),
        [
            ("client-gave-up", [t["call"], t["cancel"]]),
            ("answer-after-give-up", [t["call"], t["cancel"], t["answer"]]),
        ],
    )


def test_a_stdio_client_that_closes_stdin_and_stops_reading_abandons_the_call(tmp_path: Path) -> None:
    recording, argv = tap(tmp_path)
    stdio_client(argv, 1.0, abandon_after=0.3)
    t = times_of(recording)
    assert_findings(
        ours(recording),
        [
            ("client-gave-up", [t["call"], t["stdin closed"]]),
            ("answer-after-give-up", [t["call"], t["stdin closed"], t["answer"]]),
        ],
    )


def test_a_stdio_call_silent_past_the_idle_limit_of_the_manifest_is_a_risk(tmp_path: Path) -> None:
    recording, argv = tap(tmp_path)
    assert stdio_client(argv, 1.0, progress=(0.2,)) == 0
    t = times_of(recording)
    assert_findings(ours(recording, IDLE_HALF_SECOND), [("idle-timeout-risk", [t["progress"], t["answer"]])])
    assert ours(recording) == []


def test_progress_within_the_idle_limit_keeps_a_slow_stdio_call_clean(tmp_path: Path) -> None:
    recording, argv = tap(tmp_path)
    assert stdio_client(argv, 1.0, progress=(0.25, 0.5, 0.75)) == 0
    assert ours(recording, IDLE_HALF_SECOND) == []


def test_an_http_call_whose_connection_closed_is_given_up_with_no_answer(tmp_path: Path) -> None:
    recording = tmp_path / "http.jsonl"
    with SlowHttpServer(stream=False) as up, running_proxy(up.url, recording) as proxy:
        http_client(proxy.url, 1.0, disconnect_after=0.3)
    t = times_of(recording)
    assert "answer" not in t
    assert_findings(ours(recording), [("client-gave-up", [t["call"], t["disconnected"]])])


def test_an_http_call_cancelled_then_answered_is_given_up_and_its_answer_lost(tmp_path: Path) -> None:
    recording = tmp_path / "http.jsonl"
    with SlowHttpServer(stream=False) as up, running_proxy(up.url, recording) as proxy:
        assert "done" in http_client(proxy.url, 1.0, cancel_after=0.3)
    t = times_of(recording)
    assert_findings(
        ours(recording),
        [
            ("client-gave-up", [t["call"], t["cancel"]]),
            ("answer-after-give-up", [t["call"], t["cancel"], t["answer"]]),
        ],
    )


def test_an_http_event_stream_silent_past_the_idle_limit_is_a_risk_not_a_give_up(tmp_path: Path) -> None:
    recording = tmp_path / "http.jsonl"
    with SlowHttpServer(stream=True) as up, running_proxy(up.url, recording) as proxy:
        assert "done" in http_client(proxy.url, 1.0)
    t = times_of(recording)
    assert_findings(ours(recording, IDLE_HALF_SECOND), [("idle-timeout-risk", [t["call"], t["answer"]])])
    assert ours(recording) == []


@pytest.mark.slow
def test_an_http_json_answer_after_claude_codes_60_s_limit_comes_after_it_gave_up(tmp_path: Path) -> None:
    recording = tmp_path / "http.jsonl"
    with SlowHttpServer(stream=False) as up, running_proxy(up.url, recording) as proxy:
        assert "done" in http_client(proxy.url, 60.5)
    t = times_of(recording)
    assert_findings(
        ours(recording),
        [
            ("client-gave-up", [t["call"], t["call"] + 60.0]),
            ("answer-after-give-up", [t["call"], t["call"] + 60.0, t["answer"]]),
        ],
    )
    assert ours(recording, {"limits_env": {"MCP_TIMEOUT": "90000"}}) == []


def test_claude_code_over_http_waits_the_largest_of_60_s_mcp_tool_timeout_and_mcp_timeout() -> None:
    def seconds(settings: dict[str, str], version: str | None = "2.1.332") -> float | None:
        found = largest_limit("claude-code", Limit.REQUEST, transport="http", version=version, settings=settings)
        return found[0] if found else None

    assert seconds({}) == 60.0
    assert seconds({"MCP_TOOL_TIMEOUT": "10000"}) == 60.0
    assert seconds({"MCP_TOOL_TIMEOUT": "120000"}) == 120.0
    assert seconds({"MCP_TIMEOUT": "90000", "MCP_TOOL_TIMEOUT": "70000"}) == 90.0
    assert seconds({"MCP_TIMEOUT": "90000"}, "2.1.197") == 60.0
    assert seconds({}, None) == 60.0
    assert largest_limit("claude-code", Limit.REQUEST, transport="stdio") is None
    assert largest_limit("codex-mcp-client", Limit.REQUEST, transport="http") is None


def test_claude_codes_idle_limit_is_5_min_over_http_30_min_over_stdio_and_0_switches_it_off() -> None:
    def seconds(transport: str, version: str, settings: dict[str, str] | None = None) -> float | None:
        found = limit_for("claude-code", Limit.IDLE, transport=transport, version=version, settings=settings)
        return found[0] if found else None

    assert seconds("http", "2.1.332") == 300.0
    assert seconds("stdio", "2.1.332") == 1800.0
    assert seconds("stdio", "2.1.197") is None
    assert seconds("http", "2.1.100") is None
    assert seconds("http", "2.1.332", {"CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT": "0"}) == 0.0


def shipped() -> list[Path]:
    """Every shipped recording, and every session folder as one session."""
    files = [*REPO.glob("recordings/**/*.jsonl"), *REPO.glob("tests/**/recordings/**/*.jsonl")]
    return sorted({*files, *(p.parent for p in REPO.glob("recordings/**/manifest.json"))})


@pytest.mark.parametrize("path", shipped(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_shipped_recording_shows_a_give_up_or_an_idle_risk(path: Path) -> None:
    report = build_session_report(path) if path.is_dir() else build_report(path)
    assert [f.code for f in report.findings if f.code in CODES] == []
