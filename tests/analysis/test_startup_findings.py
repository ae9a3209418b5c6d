"""``stdout-not-json``, ``slow-start`` and ``start-failed`` against scenarios of known truth.

Each scenario (tests/scenarios/stdio_server.py: ``banner``, ``noisy``, ``slow-start N``,
``dies-at-start``) runs through a real ``wiretap tap``, driven by a small client that sends
``initialize``, waits for its answer, then ``tools/list`` and ``tools/call``, and closes stdin. Every
expected time is read from the recording's own events (spawn, the raw line, the answer); the server's
own sleep is the condition under test.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scenarios.stdio_server import BANNER, DYING, NOISE, STARTING
from support import paths
from support.taprun import SCENARIO_SERVER, settled_read_all, start_tap

from wiretap.analysis.limits import LIMITS, Limit, limit_for, limits_env, server_limits
from wiretap.analysis.model import FindingRow
from wiretap.analysis.report import build_report
from wiretap.analysis.session_report import build_session_report, session_limits
from wiretap.recording.events import Event

REPO = paths.REPO
CODES = {"stdout-not-json", "slow-start", "start-failed"}
SLEEP = 1.5
CLIENT = {"name": "scenario-client", "version": "1.0"}
CODEX = {"name": "codex-mcp-client", "version": "0.171.0"}


def _request(n: int, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode()


def _read_answer(proc: subprocess.Popen[bytes], n: int) -> None:
    assert proc.stdout is not None
    while line := proc.stdout.readline():
        try:
            body = json.loads(line)
        except ValueError:
            continue
        if isinstance(body, dict) and body.get("id") == n:
            return
    raise AssertionError(f"no answer to request {n}")


@dataclass
class Run:
    recording: Path
    events: list[Event]

    def first(self, kind: str, **match: Any) -> Event:
        return next(e for e in self.events if e["kind"] == kind and all(e.get(k) == v for k, v in match.items()))

    def answer(self, n: int) -> Event:
        return next(
            e for e in self.events if e["kind"] == "message" and e["dir"] == "s2c" and e.get("msg", {}).get("id") == n
        )

    def findings(self, limits: tuple[str | None, dict[str, str]] | None = None) -> list[FindingRow]:
        return [f for f in build_report(self.recording, limits=limits).findings if f.code in CODES]


def drive(tmp_path: Path, *mode: str, answered: bool = True, client: dict[str, str] = CLIENT) -> Run:
    """The small client: initialize (waiting for its answer), tools/list, tools/call, then stdin closed."""
    recording = tmp_path / "rec.jsonl"
    proc = start_tap(recording, [*SCENARIO_SERVER, *mode])
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with proc:
        proc.stdin.write(_request(1, "initialize", {"protocolVersion": "2025-06-18", "clientInfo": client}))
        proc.stdin.flush()
        if answered:
            _read_answer(proc, 1)
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            for n, (method, params) in enumerate(
                [("tools/list", {}), ("tools/call", {"name": "echo", "arguments": {"text": "hi"}})], start=2
            ):
                proc.stdin.write(_request(n, method, params))
                proc.stdin.flush()
                _read_answer(proc, n)
        else:
            proc.stdout.read()  # until the server's stdout ends: it died
        proc.stdin.close()
        proc.wait(60)
        proc.stderr.read()
    _, events, _ = settled_read_all(recording)
    return Run(recording, events)


def test_a_banner_before_the_handshake_is_one_warning_with_its_first_bytes_and_what_the_client_did_next(
    tmp_path: Path,
) -> None:
    run = drive(tmp_path, "banner")
    raw = run.first("message", dir="s2c", raw=BANNER)
    answer = run.answer(1)
    after = next(e for e in run.events if e["kind"] == "message" and e["dir"] == "c2s" and e["t"] >= raw["t"])
    [finding] = run.findings()
    assert finding.code == "stdout-not-json" and finding.severity == "warning" and finding.count == 1
    said = "sent initialize" if after["msg"].get("method") == "initialize" else "sent notifications/initialized"
    assert finding.message == (
        "the server wrote a line on stdout that is not JSON-RPC before answering the handshake (a banner): "
        f"first {BANNER!r} ({len(BANNER)} bytes) at {raw['t']:.3f} s; the client kept going ({said} at "
        f"{after['t']:.3f} s); the handshake was answered at {answer['t']:.3f} s"
    )
    assert finding.times == [round(raw["t"], 3), round(after["t"], 3)]


def test_noise_after_the_handshake_counts_every_line_and_says_the_client_kept_going(tmp_path: Path) -> None:
    run = drive(tmp_path, "noisy")
    noise = [e for e in run.events if e["kind"] == "message" and e.get("raw") == NOISE]
    assert len(noise) == 2  # after tools/list and tools/call
    after = next(
        e for e in run.events if e["t"] >= noise[0]["t"] and e["kind"] in ("message", "eof") and e["dir"] == "c2s"
    )
    [finding] = run.findings()
    assert (finding.code, finding.severity, finding.count) == ("stdout-not-json", "warning", 2)
    assert finding.message.startswith(
        f"the server wrote 2 lines on stdout that are not JSON-RPC after the handshake (noise): first {NOISE!r} "
        f"({len(NOISE)} bytes) at {noise[0]['t']:.3f} s; "
    )
    assert finding.times == sorted(round(t, 3) for t in (noise[0]["t"], noise[1]["t"], after["t"]))


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return drive(tmp_path_factory.mktemp("slow"), "slow-start", str(SLEEP), client=CODEX)


def test_the_slow_scenario_answered_initialize_after_its_sleep(slow: Run) -> None:
    asked, received = slow.first("message", dir="c2s")["t"], slow.first("stderr", text=STARTING)["t"]
    answered = slow.answer(1)["t"]
    # The request came before the sleep, its stderr line (a pipe of its own) between, and the answer only
    # after the whole sleep (a busy machine can make the answer later, never earlier).
    assert asked <= received <= answered and answered - asked >= SLEEP


def test_a_start_well_inside_the_clients_default_limit_raises_nothing(slow: Run) -> None:
    assert slow.findings() == []  # Codex: 10 s by default


def test_a_start_past_the_clients_limit_is_an_error_measured_from_spawn_to_the_answer(slow: Run) -> None:
    spawn, answer = slow.first("spawn")["t"], slow.answer(1)["t"]
    [finding] = slow.findings((None, {"startup_timeout_sec": "1"}))
    assert (finding.code, finding.severity) == ("slow-start", "error")
    assert finding.times == [round(spawn, 3), round(answer, 3)]
    assert finding.message == (
        f"the server answered initialize {answer - spawn:.3f} s after it was started, past Codex's startup limit "
        "of 1 s (startup_timeout_sec = 1)"
    )


def test_a_start_that_takes_half_the_limit_or_more_is_a_warning(slow: Run) -> None:
    spawn, answer = slow.first("spawn")["t"], slow.answer(1)["t"]
    [finding] = slow.findings((None, {"startup_timeout_sec": "2.5"}))
    assert (finding.code, finding.severity) == ("slow-start", "warning")
    assert finding.message == (
        f"the server answered initialize {answer - spawn:.3f} s after it was started: "
        f"{(answer - spawn) / 2.5:.0%} of Codex's startup limit of 2.5 s (startup_timeout_sec = 2.5)"
    )


def test_a_server_that_dies_at_start_is_start_failed_with_its_exit_and_last_stderr_lines(tmp_path: Path) -> None:
    run = drive(tmp_path, "dies-at-start", answered=False)
    spawn, exit_ = run.first("spawn")["t"], run.first("exit")
    [finding] = run.findings()
    assert (finding.code, finding.severity) == ("start-failed", "error")
    assert finding.times == [round(spawn, 3), round(exit_["t"], 3)]
    assert finding.message.startswith(f"the server exited with code 1 {exit_['t'] - spawn:.3f} s after it was started")
    assert finding.message.endswith(f"; its last stderr lines: {' | '.join(DYING)}")


def _write(path: Path, events: list[Event]) -> Path:
    header = {"kind": "header", "format": 1, "started": "2026-01-01T00:00:00.000Z", "transport": "stdio", "name": "x"}
    end = {"t": events[-1]["t"], "kind": "end", "ended": "normal", "written": len(events) + 2, "lost": 0}
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *events, end]))
    return path


def _handshake(answer_t: float) -> list[Event]:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": CLIENT}}
    return [
        {"t": 0.01, "kind": "spawn", "argv": ["s"], "pid": 1},
        {"t": 0.02, "kind": "message", "dir": "c2s", "size": 10, "msg": init},
        {"t": answer_t, "kind": "message", "dir": "s2c", "size": 10, "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
    ]


def test_a_start_over_5_s_of_an_unknown_client_is_info_saying_the_limit_is_unknown(tmp_path: Path) -> None:
    [finding] = [f for f in build_report(_write(tmp_path / "r.jsonl", _handshake(6.01))).findings if f.code in CODES]
    assert (finding.code, finding.severity, finding.times) == ("slow-start", "info", [0.01, 6.01])
    assert finding.message == (
        "the server answered initialize 6.000 s after it was started; the startup limit of scenario-client is not known"
    )


def test_a_start_under_5_s_of_an_unknown_client_raises_nothing(tmp_path: Path) -> None:
    assert [f for f in build_report(_write(tmp_path / "r.jsonl", _handshake(4.9))).findings if f.code in CODES] == []


def test_blank_lines_and_json_rpc_batches_on_stdout_are_not_noise(tmp_path: Path) -> None:
    batch = [{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}]
    events = [
        *_handshake(0.05),
        {"t": 0.06, "kind": "message", "dir": "s2c", "size": 0, "raw": ""},
        {"t": 0.07, "kind": "message", "dir": "s2c", "size": 9, "msg": batch},
    ]
    assert [f.code for f in build_report(_write(tmp_path / "r.jsonl", events)).findings if f.code in CODES] == []


def test_json_on_stdout_that_is_not_json_rpc_is_noise(tmp_path: Path) -> None:
    log = {"level": "info", "msg": "ready"}
    events = [*_handshake(0.05), {"t": 0.06, "kind": "message", "dir": "s2c", "size": 30, "msg": log}]
    [finding] = [f for f in build_report(_write(tmp_path / "r.jsonl", events)).findings if f.code in CODES]
    assert finding.code == "stdout-not-json"
    assert 'after the handshake (noise): first \'{"level":"info","msg":"ready"}\' (30 bytes) at 0.060 s' in (
        finding.message
    )
    assert finding.message.endswith("; the client did nothing more in the recording")


def test_no_shipped_recording_or_session_raises_a_startup_finding() -> None:
    recordings = sorted({*REPO.glob("recordings/**/*.jsonl"), *REPO.glob("tests/**/recordings/**/*.jsonl")})
    sessions = sorted({m.parent for m in [*REPO.glob("recordings/**/manifest.json")]})
    assert len(recordings) >= 20
    found = [(path.name, f.code) for path in recordings for f in build_report(path, wait=0).findings if f.code in CODES]
    found += [(s.name, f.code) for s in sessions for f in build_session_report(s).findings if f.code in CODES]
    assert found == []


def test_every_startup_row_names_a_source_url_and_its_setting() -> None:
    rows = [row for row in LIMITS if row.limit is Limit.STARTUP]
    assert {row.client for row in rows} == {"claude-code", "codex-mcp-client", "gemini-cli-mcp-client"}
    assert all(row.source.startswith("https://") and row.setting for row in rows)
    assert limit_for("claude-code", Limit.STARTUP, transport="stdio", settings={"MCP_TIMEOUT": "45000"})[0] == 45.0  # type: ignore[index]


def test_a_session_records_only_the_limit_settings_of_the_environment_and_the_servers_config() -> None:
    env = {"MCP_TIMEOUT": "45000", "ANTHROPIC_API_KEY": "sk-ant-secret", "HOME": "/home/x"}
    assert limits_env(env) == {"MCP_TIMEOUT": "45000"}
    assert server_limits({"command": "x", "startup_timeout_sec": 2, "timeout": "soon"}) == {"startup_timeout_sec": "2"}
    manifest = {"client": "Codex", "limits_env": {"MCP_TIMEOUT": "1"}}
    assert session_limits(manifest, {"limits": {"startup_timeout_sec": "2"}}) == (
        "codex-mcp-client",
        {"MCP_TIMEOUT": "1", "startup_timeout_sec": "2"},
    )
