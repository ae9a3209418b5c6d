"""``--otlp``: spans sent live by a follower process, off the forwarding path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from support import paths
from support.otlp_receiver import Receiver, otlp_receiver
from support.taprun import SCENARIO_SERVER, run_tap

from wiretap.otel.endpoint import Target
from wiretap.otel.sender import BatchSender
from wiretap.otel.sources import recording_spans
from wiretap.otel.spans import Span, SpanKind

REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "live", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "file:///x"}},
]
CHUNKS = [json.dumps(r).encode() + b"\n" for r in REQUESTS]


def wait_for(receiver: Receiver, count: int, seconds: float = 60) -> None:
    """Waits for spans to arrive (not a timing assertion: the count is checked after)."""
    deadline = time.monotonic() + seconds
    while len(receiver.spans) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_tap_with_otlp_sends_every_span_of_its_recording_and_relays_the_same_bytes(tmp_path: Path) -> None:
    plain = run_tap(tmp_path / "plain.jsonl", [*SCENARIO_SERVER, "answer"], CHUNKS)
    with otlp_receiver() as receiver:
        live = run_tap(tmp_path / "live.jsonl", [*SCENARIO_SERVER, "answer"], CHUNKS, "--otlp-endpoint", receiver.url)
        expected = recording_spans(tmp_path / "live.jsonl")
        wait_for(receiver, len(expected))
    assert (live.returncode, live.stdout) == (plain.returncode, plain.stdout)
    assert live.stderr == b""
    origin = live.header["wall_origin_ns"]  # the header's exact wall clock at t = 0
    started = datetime.fromisoformat(live.header["started"].replace("Z", "+00:00")).timestamp()
    assert isinstance(origin, int) and abs(origin / 1e9 - started) < 1.0
    got = {s.span_id: s for s in receiver.spans}
    assert sorted(got) == sorted(s.span_id for s in expected)
    for span in expected:
        sent = got[span.span_id]
        assert (sent.name, sent.start_time_unix_nano, sent.end_time_unix_nano) == (
            span.name,
            span.start_ns,
            span.end_ns,
        )
    assert sorted(s.name for s in expected if s.kind is SpanKind.CLIENT) == [
        "initialize", "notifications/initialized", "resources/read", "tools/call echo",
    ]  # fmt: skip
    root = got[next(s.span_id for s in expected if s.parent_id is None)]
    assert {a.key: a.value.int_value for a in root.attributes}["wiretap.otlp.dropped_spans"] == 0


def test_a_dead_endpoint_changes_nothing_on_the_wire_and_says_so_once(tmp_path: Path) -> None:
    plain = run_tap(tmp_path / "plain.jsonl", [*SCENARIO_SERVER, "answer"], CHUNKS)
    live = run_tap(
        tmp_path / "live.jsonl", [*SCENARIO_SERVER, "answer"], CHUNKS, "--otlp-endpoint", "http://127.0.0.1:9"
    )
    assert (live.returncode, live.stdout) == (plain.returncode, plain.stdout)
    assert len(live.messages()) == len(plain.messages())
    total = len(recording_spans(tmp_path / "live.jsonl"))
    lines = live.stderr.decode().splitlines()
    assert lines[0].startswith("wiretap: otlp: cannot send to http://127.0.0.1:9/v1/traces: ")
    assert lines[1:] == [
        f"wiretap: otlp: sent 0 span(s); dropped 0 (queue full), {total} not delivered, 0 refused by the endpoint"
    ]


def span(n: int) -> Span:
    return Span(b"\x01" * 16, n.to_bytes(8, "big"), None, f"s{n}", SpanKind.CLIENT, n, n)


def test_a_full_queue_drops_spans_and_counts_every_one() -> None:
    with otlp_receiver() as receiver:
        receiver.hold.clear()  # the endpoint stops answering
        sender = BatchSender(Target(receiver.url + "/v1/traces"), {"service.name": "t"}, capacity=3)
        assert sender.offer(span(0))
        assert receiver.arrived.wait(30)  # the sender is now stuck sending span 0
        accepted = [sender.offer(span(n)) for n in range(1, 11)]
        assert accepted == [True] * 3 + [False] * 7
        receiver.hold.set()
        sender.close(30)
    assert (sender.sent, sender.dropped, sender.failed) == (4, 7, 0)
    assert sorted(s.name for s in receiver.spans) == ["s0", "s1", "s2", "s3"]


def test_a_follower_is_not_done_before_the_recording_wiretap_announced_has_ended(tmp_path: Path) -> None:
    """wiretap returns before its recorder process has finished the file, under load before it has even
    written the header: a follower that had found no recording took that for nothing to send."""
    from wiretap.otel.follow import Follower

    demo = (paths.RECORDINGS / "demo.jsonl").read_bytes()
    path = tmp_path / "demo.jsonl"
    sender = BatchSender(Target("http://127.0.0.1:9/v1/traces"), {"service.name": "t"})
    follower = Follower(tmp_path, sender, wanted=lambda header: True, session=False)
    assert follower.all_done()  # nothing announced, nothing found: nothing to wait for
    follower.announced.add(path)
    path.write_bytes(b"")  # created, the header not yet written
    follower.step()
    assert not follower.all_done()
    path.write_bytes(demo[: demo.index(b"\n", len(demo) // 2) + 1])
    follower._next_scan = 0.0
    follower.step()
    assert follower.tailed and not follower.all_done()  # found, not ended
    path.write_bytes(demo)
    follower.step()
    assert follower.all_done()
    sender.close(0)


def test_a_session_followed_as_it_is_written_gives_the_spans_of_the_finished_session(tmp_path: Path) -> None:
    from wiretap.otel.follow import Follower
    from wiretap.otel.sources import session_spans
    from wiretap.recording.folders import open_session

    recordings = paths.RECORDINGS
    folder = tmp_path / "session"
    folder.mkdir()
    manifest = {
        "kind": "wiretap-session", "client": "claude", "started": "2026-11-30T12:24:46.000Z", "running": True,
        "servers": [{"name": "demo", "recording": "demo.jsonl"}, {"name": "tasks", "recording": "core-tasks.jsonl"}],
    }  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    demo = (recordings / "demo.jsonl").read_bytes()
    cut = demo.index(b"\n", len(demo) // 2) + 20  # half the file and a line cut short
    with otlp_receiver() as receiver:
        sender = BatchSender(Target(receiver.url + "/v1/traces"), {"service.name": "t"})
        follower = Follower(folder, sender, wanted=lambda header: True, session=True)
        (folder / "demo.jsonl").write_bytes(demo[:cut])
        follower.step()
        early = sender._queue.qsize() + len(receiver.spans)
        (folder / "demo.jsonl").write_bytes(demo)
        (folder / "core-tasks.jsonl").write_bytes((recordings / "core-tasks.jsonl").read_bytes())
        (folder / "manifest.json").write_text(json.dumps({**manifest, "running": False, "exit": {"code": 0}}))
        follower._next_scan = 0.0
        follower.step()
        follower.finish()
        sender.close(30)
    expected = session_spans(open_session(folder))
    assert 0 < early < len(expected)
    assert sorted((s.span_id, s.name) for s in receiver.spans) == sorted((s.span_id, s.name) for s in expected)
    assert sender.dropped == 0


def test_a_flood_towards_a_hung_endpoint_is_relayed_intact_and_every_span_is_accounted_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flood = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode() + b"\n" for n in range(3000)]
    chunks = [b"".join(flood[n : n + 100]) for n in range(0, len(flood), 100)]
    plain = run_tap(tmp_path / "plain.jsonl", [*SCENARIO_SERVER, "answer"], chunks)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")  # ms per request
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
    monkeypatch.setenv("OTEL_BSP_EXPORT_TIMEOUT", "1000")  # ms the follower may flush for at the end
    with otlp_receiver() as receiver:
        receiver.hold.clear()  # the endpoint takes requests and never answers
        live = run_tap(tmp_path / "live.jsonl", [*SCENARIO_SERVER, "answer"], chunks, "--otlp-endpoint", receiver.url)
    assert (live.returncode, live.stdout) == (plain.returncode, plain.stdout)
    assert len(live.messages("c2s")) == len(live.messages("s2c")) == 3000
    (line,) = [x for x in live.stderr.decode().splitlines() if x.startswith("wiretap: otlp: sent")]
    sent, dropped, undelivered, refused = map(int, re.findall(r"\d+", line))
    assert sent == refused == 0 and dropped > 0
    assert dropped + undelivered == 3000 + 1  # every call and the root: none unaccounted for


def test_when_wiretap_is_killed_the_follower_sends_the_recording_as_it_stands(tmp_path: Path) -> None:
    from support.taprun import start_tap

    with otlp_receiver() as receiver:
        with start_tap(tmp_path / "killed.jsonl", [*SCENARIO_SERVER, "answer"], "--otlp-endpoint", receiver.url) as tap:
            assert tap.stdin and tap.stdout
            for chunk in CHUNKS[:3]:
                tap.stdin.write(chunk)
                tap.stdin.flush()
            assert [tap.stdout.readline() for _ in range(2)][1].startswith(b'{"jsonrpc"')  # both answers relayed
            tap.kill()
            tap.wait(30)
        wait_for(receiver, 4)  # initialize, the notification, the tool call, the root
    expected = recording_spans(tmp_path / "killed.jsonl")
    assert sorted(s.span_id for s in receiver.spans) == sorted(s.span_id for s in expected)
    (root,) = [s for s in receiver.spans if not s.parent_span_id]
    # The recorder outlives the killed relay and ends the recording, saying so; the follower waits for that end.
    last = json.loads((tmp_path / "killed.jsonl").read_text().splitlines()[-1])
    assert (last["kind"], last.get("ended")) == ("end", "relay_died")
    assert {a.key: a.value.bool_value for a in root.attributes}["wiretap.complete"] is True


@pytest.mark.parametrize("late", [False, True], ids=["prompt", "eight-seconds-late"])
def test_a_follower_slow_to_start_still_sends_the_recording_it_was_started_for(tmp_path: Path, late: bool) -> None:
    """wiretap passes the follower when it started it: a follower whose start is delayed past the staleness
    window (imports at nice 10 on a loaded machine) must not take the finished recording as an earlier one."""
    recordings = paths.RECORDINGS
    demo = tmp_path / "demo.jsonl"
    demo.write_bytes((recordings / "demo.jsonl").read_bytes())
    spawned = time.time() - (8.0 if late else 0.0)
    os.utime(demo, (spawned + 0.5, spawned + 0.5))  # finished just after wiretap started its follower
    with otlp_receiver() as receiver:
        settings = {"url": receiver.url + "/v1/traces", "resource": {"service.name": "t"}}
        env = {**os.environ, "WIRETAP_OTLP": json.dumps(settings)}
        command = [sys.executable, "-m", "wiretap.otel.follow", "recording", str(tmp_path), "8473", f"{spawned:.6f}"]
        done = subprocess.run(command, input=b"", env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = recording_spans(demo)
    assert sorted(s.span_id for s in receiver.spans) == sorted(s.span_id for s in expected)
