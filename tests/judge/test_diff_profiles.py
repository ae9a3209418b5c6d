"""``wiretap diff`` on behaviour profiles: what changed between two runs, and nothing that did not."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from support.profile_runs import INFO, Events, http_run, msg, session, stdio_run, wiretap, write


def test_a_copy_with_only_its_handshake_changed_names_each_change(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", stdio_run())
    caps = {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
    b = write(tmp_path / "b.jsonl", stdio_run(version="2025-06-18", caps=caps, info={**INFO, "version": "9.9.9"}))
    result = wiretap("diff", str(a), str(b))
    assert result.returncode == 1, result.stdout
    handshake = result.stdout.split("== handshake\n")[1].split("==")[0]
    assert [line.strip() for line in handshake.splitlines()] == [
        "protocol version: 2025-11-25 → 2025-06-18",
        "client version: 2.1.197 → 9.9.9",
        "capabilities.roots.listChanged: added true",
        "capabilities.elicitation.form: added {}",
        "capabilities.elicitation.url: added {}",
        "the recordings behave differently",
    ]
    assert result.stdout.count("== ") == 1


def test_a_copy_with_only_its_shutdown_changed_differs_in_the_shutdown_alone(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", stdio_run())
    codex_like = (
        (2.0, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True}),
        (2.0005, {"kind": "eof", "dir": "c2s"}),
        (2.004, {"kind": "exit", "status": 143, "signal": "SIGTERM", "signum": 15}),
    )
    b = write(tmp_path / "b.jsonl", stdio_run(shutdown=codex_like))
    result = wiretap("diff", str(a), str(b))
    assert result.returncode == 1
    assert result.stdout.splitlines()[:4] == [
        "== shutdown",
        "  order: SIGINT, server killed by SIGINT → SIGTERM + stdin closed, server killed by SIGTERM",
        "  server: killed by SIGINT → killed by SIGTERM",
        "the recordings behave differently",
    ]


def test_a_shutdown_delay_differs_only_beyond_its_tolerance(tmp_path: Path) -> None:
    def run(kill_after: float) -> Events:
        return stdio_run(
            shutdown=(
                (2.0, {"kind": "signal", "signal": "SIGINT", "signum": 2, "forwarded": True}),
                (2.0 + kill_after, {"kind": "exit", "status": 137, "signal": "SIGKILL", "signum": 9}),
            )
        )

    a = write(tmp_path / "a.jsonl", run(0.5))
    assert wiretap("diff", str(a), str(write(tmp_path / "b.jsonl", run(0.52)))).returncode == 0
    quick = write(tmp_path / "quick.jsonl", run(0.014))
    assert wiretap("diff", str(quick), str(write(tmp_path / "loaded.jsonl", run(0.09)))).returncode == 0
    slower = wiretap("diff", str(a), str(write(tmp_path / "c.jsonl", run(5.0))))
    assert slower.returncode == 1
    assert "server killed by SIGKILL: 500 ms → 5000 ms after the first step" in slower.stdout


def test_requests_in_flight_together_in_another_order_are_no_difference(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", stdio_run())
    b = write(tmp_path / "b.jsonl", stdio_run(list_order=("tools/list", "resources/list", "prompts/list")))
    result = wiretap("diff", str(a), str(b))
    assert (result.returncode, result.stdout) == (0, "no difference in behaviour\n")


def test_requests_one_after_another_in_another_order_are_a_difference(tmp_path: Path) -> None:
    events = stdio_run()
    serial = [e for e in events if e.get("msg", {}).get("id") not in (1, 2, 3)]
    at = serial.index(next(e for e in serial if e.get("msg", {}).get("method") == "tools/call"))
    for n, method in enumerate(("tools/list", "prompts/list"), 1):
        serial[at:at] = [msg(0.5 + n, "c2s", {"id": 10 + n, "method": method}), msg(0.5 + n, "s2c", {"id": 10 + n})]
        at += 2
    swapped = copy.deepcopy(serial)
    for e in swapped:
        if e.get("msg", {}).get("id") in (11, 12) and "method" in e["msg"]:
            e["msg"]["method"] = "prompts/list" if e["msg"]["method"] == "tools/list" else "tools/list"
    result = wiretap("diff", str(write(tmp_path / "a.jsonl", serial)), str(write(tmp_path / "b.jsonl", swapped)))
    assert result.returncode == 1
    assert "+→ prompts/list\n   → tools/list\n  -→ prompts/list\n" in result.stdout


def test_two_http_runs_with_parallel_requests_in_another_order_diff_clean(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", http_run(("prompts/list", "resources/list")), transport="http")
    b = write(tmp_path / "b.jsonl", http_run(("resources/list", "prompts/list")), transport="http")
    result = wiretap("diff", str(a), str(b))
    assert (result.returncode, result.stdout) == (0, "no difference in behaviour\n")


def test_http_traits_and_its_shutdown_are_named(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", http_run(("tools/list",)), transport="http")
    b = write(tmp_path / "b.jsonl", http_run(("tools/list",), delete=False, version_header=False), transport="http")
    result = wiretap("diff", "--format", "json", str(a), str(b))
    assert result.returncode == 1
    sections = json.loads(result.stdout)["servers"][0]["sections"]
    assert sections["HTTP transport"] == [
        "delete on exit: True → False",
        "mcp headers: mcp-protocol-version, mcp-session-id → mcp-session-id",
        "protocol version header: 2025-06-18 → none",
        "methods: DELETE, GET, POST → GET, POST",
    ]
    assert sections["shutdown"] == ["order: DELETE, connections closed → connections closed"]


def test_session_folders_pair_their_servers_by_name(tmp_path: Path) -> None:
    a = session(tmp_path / "a", {"files": stdio_run(), "search": stdio_run()})
    b = session(tmp_path / "b", {"search": stdio_run(info={**INFO, "version": "2.1.332"}), "files": stdio_run()})
    result = wiretap("diff", "--format", "markdown", str(a), str(b))
    assert result.returncode == 1
    assert "### search: handshake\n\n- client version: 2.1.197 → 2.1.332\n" in result.stdout
    assert "files:" not in result.stdout
    clean = wiretap("diff", str(a), str(session(tmp_path / "c", {"search": stdio_run(), "files": stdio_run()})))
    assert clean.returncode == 0
    missing = wiretap("diff", str(a), str(session(tmp_path / "d", {"files": stdio_run()})))
    assert missing.returncode == 1 and "search: only in A" in missing.stdout


def test_latency_is_shown_only_with_enough_samples(tmp_path: Path) -> None:
    def calls(n: int, seconds: float) -> Events:
        events = stdio_run()
        for k in range(n):
            t = 1.1 + k / 100
            events.insert(-4, msg(t, "c2s", {"id": 100 + k, "method": "ping"}))
            events.insert(-4, msg(t + seconds, "s2c", {"id": 100 + k, "result": {}}))
        return events

    few = wiretap(
        "diff", str(write(tmp_path / "a.jsonl", calls(1, 0.001))), str(write(tmp_path / "b.jsonl", calls(1, 0.004)))
    )
    assert (few.returncode, few.stdout) == (0, "no difference in behaviour\n")
    many_a, many_b = write(tmp_path / "c.jsonl", calls(20, 0.001)), write(tmp_path / "d.jsonl", calls(20, 0.004))
    many = wiretap("diff", str(many_a), str(many_b))
    assert many.returncode == 0
    assert "== latency (for information)\n  ping: p50 1.0 → 4.0 ms (4.00×, n=20/20)\n" in many.stdout


@pytest.mark.parametrize(("bad", "status"), [("missing.jsonl", 3), ("folder", 2), ("garbage.jsonl", 2)])
def test_bad_input_is_one_line_and_the_documented_exit_status(tmp_path: Path, bad: str, status: int) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "garbage.jsonl").write_text("this is not a recording\n")
    good = write(tmp_path / "a.jsonl", stdio_run())
    result = wiretap("diff", str(good), str(tmp_path / bad))
    assert result.returncode == status
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def modern_run() -> Events:
    """A 2026-07-28 client: string ids, ``_meta`` on every request, an elicitation answered by a retry."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {**INFO, "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
    }
    ask = {"method": "elicitation/create", "params": {"mode": "form", "message": "Sure?"}}
    call = {"name": "deploy", "_meta": meta}
    return [
        msg(0.01, "c2s", {"id": "server-discover-probe-1", "method": "server/discover", "params": {"_meta": meta}}),
        msg(0.02, "s2c", {"id": "server-discover-probe-1", "result": {"supportedVersions": ["2026-07-28"]}}),
        msg(1.0, "c2s", {"id": "c1", "method": "tools/call", "params": call}),
        msg(1.1, "s2c", {"id": "c1", "result": {"resultType": "input_required", "inputRequests": {"ok": ask}}}),
        msg(
            1.2,
            "c2s",
            {"id": "c2", "method": "tools/call", "params": {**call, "inputResponses": {"ok": {"action": "cancel"}}}},
        ),
        msg(1.3, "s2c", {"id": "c2", "result": {"content": []}}),
        {"t": 2.0, "kind": "signal", "signal": "SIGINT", "signum": 2, "forwarded": True},
        {"t": 2.005, "kind": "exit", "status": 130, "signal": "SIGINT", "signum": 2},
        {"t": 2.01, "kind": "end", "written": 8, "lost": 0},
    ]


def test_a_modern_clients_ids_meta_and_answer_by_retry_are_named(tmp_path: Path) -> None:
    legacy = stdio_run()
    legacy[-5:-5] = [
        msg(1.5, "s2c", {"id": 7, "method": "elicitation/create", "params": {}}),
        msg(1.6, "c2s", {"id": 7, "result": {"action": "decline"}}),
    ]
    result = wiretap(
        "diff", "-f", "json", str(write(tmp_path / "a.jsonl", legacy)), str(write(tmp_path / "b.jsonl", modern_run()))
    )
    sections = json.loads(result.stdout)["servers"][0]["sections"]
    handshake = sections["handshake"]
    assert "method: initialize → server/discover" in handshake
    assert "protocol version: 2025-11-25 → 2026-07-28" in handshake
    assert "meta on: none → every request" in handshake
    assert "id types: number → string" in handshake
    assert sections["server-initiated requests"] == [
        "+ elicitation/create (input_required): tools/call retried with inputResponses: cancel",
        "- elicitation/create: result: decline",
    ]
    assert "+→ tools/call +inputResponses" in sections["method sequence"]


def test_the_report_says_how_the_client_stopped_its_server(tmp_path: Path) -> None:
    sigkilled = stdio_run(
        shutdown=(
            (2.0, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True}),
            (2.001, {"kind": "eof", "dir": "c2s"}),
        )
    )[:-1]  # the relay was killed: no closing line
    result = wiretap("report", "--format", "json", str(write(tmp_path / "a.jsonl", sigkilled)))
    shutdown = json.loads(result.stdout)["verdicts"]["shutdown"]
    assert shutdown["order"] == ["SIGTERM + stdin closed"] and shutdown["recording_complete"] is False
    assert shutdown["verdict"].startswith("How the client left: SIGTERM + stdin closed.")
    assert "the recorder was killed" in shutdown["verdict"]
    gemini_like = session(
        tmp_path / "s",
        {
            "x": stdio_run(
                shutdown=(
                    (2.0, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True}),
                    (2.017, {"kind": "eof", "dir": "c2s"}),
                    (5.0, {"kind": "exit", "status": 0, "code": 0}),
                )
            )
        },
        exited=2.02,
    )
    text = wiretap("report", str(gemini_like)).stdout
    assert (
        "How the client left: SIGTERM, then stdin closed 17 ms later. The server exited with code 0, "
        "3000 ms after the first step. It outlived the client (left orphaned)." in " ".join(text.split())
    )


def test_shutdown_steps_a_few_milliseconds_apart_may_come_in_either_order_or_together(tmp_path: Path) -> None:
    def run(signal_at: float, eof_at: float) -> Events:
        return stdio_run(
            shutdown=(
                (signal_at, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True}),
                (eof_at, {"kind": "eof", "dir": "c2s"}),
                (2.05, {"kind": "exit", "status": 143, "signal": "SIGTERM", "signum": 15}),
            )
        )

    together = write(tmp_path / "a.jsonl", run(2.0, 2.001))
    for n, (signal_at, eof_at) in enumerate([(2.0, 2.008), (2.009, 2.0)]):
        other = write(tmp_path / f"b{n}.jsonl", run(signal_at, eof_at))
        assert wiretap("diff", str(together), str(other)).returncode == 0
    late = wiretap("diff", str(together), str(write(tmp_path / "c.jsonl", run(2.0, 2.4))))
    assert late.returncode == 1
    assert (
        "order: SIGTERM + stdin closed, server killed by SIGTERM → SIGTERM, server killed by SIGTERM, stdin closed"
        in late.stdout
    )


def test_a_stdin_close_the_tap_may_not_have_seen_as_its_server_ended_is_no_difference(tmp_path: Path) -> None:
    def run(*eof: float) -> Events:
        steps = [(2.0, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True})]
        steps += [(t, {"kind": "eof", "dir": "c2s"}) for t in eof]
        return stdio_run(shutdown=(*steps, (2.002, {"kind": "exit", "status": 143, "signal": "SIGTERM", "signum": 15})))

    seen = write(tmp_path / "a.jsonl", run(2.0005))
    assert wiretap("diff", str(seen), str(write(tmp_path / "b.jsonl", run()))).returncode == 0
    early = stdio_run(
        shutdown=(
            (1.5, {"kind": "eof", "dir": "c2s"}),
            (2.0, {"kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True}),
            (2.002, {"kind": "exit", "status": 143, "signal": "SIGTERM", "signum": 15}),
        )
    )
    assert (
        wiretap("diff", str(write(tmp_path / "c.jsonl", early)), str(write(tmp_path / "d.jsonl", run()))).returncode
        == 1
    )


def test_an_escalation_the_other_runs_faster_server_never_needed_is_no_difference(tmp_path: Path) -> None:
    def run(*steps: tuple[float, dict[str, object]], exit_at: float) -> Events:
        exited = (exit_at, {"kind": "exit", "status": 0, "code": 0})
        return stdio_run(shutdown=(*steps, exited))

    def signal(t: float, name: str, number: int) -> tuple[float, dict[str, object]]:
        return t, {"kind": "signal", "signal": name, "signum": number, "forwarded": True}

    quick = write(tmp_path / "quick.jsonl", run(signal(2.0, "SIGINT", 2), exit_at=2.04))
    escalated = {
        "slow": run(signal(2.0, "SIGINT", 2), signal(2.1, "SIGTERM", 15), exit_at=2.12),
        # A tap held up on a loaded machine records the two at once, the later one first.
        "loaded": run(signal(2.0, "SIGTERM", 15), signal(2.0001, "SIGINT", 2), exit_at=2.044),
    }
    for name, events in escalated.items():
        assert wiretap("diff", str(quick), str(write(tmp_path / f"{name}.jsonl", events))).returncode == 0, name
    different = {
        "SIGTERM instead": run(signal(2.0, "SIGTERM", 15), exit_at=2.04),
        "SIGHUP too": run(signal(2.0, "SIGINT", 2), signal(2.02, "SIGHUP", 1), exit_at=2.04),
    }
    for name, events in different.items():
        changed = wiretap("diff", str(quick), str(write(tmp_path / f"{name}.jsonl", events)))
        assert changed.returncode == 1 and "== shutdown" in changed.stdout, name
