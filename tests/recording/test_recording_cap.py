"""``--max-size``: the traffic passes whole past the cap, the file stays within it, and what it does not store
is counted exactly and said (in the end event, and in the report)."""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from scenarios.flood_server import line as flood_line
from scenarios.raw_upstream import RawUpstream
from support import paths
from support.cli_errors import one_error
from support.floods import recorded_numbers, start_flood
from support.proxyrun import running_proxy
from support.taprun import settled_read_all

from wiretap.analysis.report import build_report
from wiretap.errors import BadInput
from wiretap.recording.cap import DEFAULT_MAX_SIZE, TAIL, format_size, parse_size
from wiretap.recording.channel import Op, Record
from wiretap.recording.events import Header
from wiretap.recording.reader import read_all
from wiretap.recording.sink import Sink
from wiretap.recording.writer import RecordingWriter, create_private, encode_event
from wiretap.render.report_text import render_markdown
from wiretap.wrap.clients.servers import Server
from wiretap.wrap.session import _tap_entry, recording_options

REPO = paths.REPO
MiB = 1 << 20


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("500K", 500 << 10),
        ("64M", 64 << 20),
        ("1G", 1 << 30),
        ("2g", 2 << 30),
        ("1MiB", 1 << 20),
        ("4096", 4096),
        ("unlimited", 0),
        ("0", 0),
    ],
)
def test_a_size_reads_as_binary_units_a_byte_count_or_unlimited(text: str, size: int) -> None:
    assert parse_size(text) == size
    assert parse_size(format_size(size)) == size


def test_sizes_are_written_in_the_largest_unit_that_divides_them() -> None:
    assert [format_size(n) for n in (1 << 30, 64 << 20, 1536 << 10, 1000, 0)] == [
        "1G",
        "64M",
        "1536K",
        "1000",
        "unlimited",
    ]


@pytest.mark.parametrize("text", ["12X", "1.5G", "-1M", "", "lots"])
def test_a_bad_size_is_refused_naming_it(text: str) -> None:
    with pytest.raises(BadInput, match=f"--max-size {text!r}: not a size"):
        parse_size(text)


@pytest.mark.parametrize(
    "command",
    [
        ["tap", "--max-size", "12X", "--", "cat"],
        ["proxy", "--upstream", "http://127.0.0.1:9/mcp", "--max-size", "12X"],
        ["wrap", "--max-size", "12X", "--", "claude"],
    ],
)
def test_a_bad_max_size_is_status_2_in_one_line_naming_the_value(command: list[str]) -> None:
    assert one_error(*command) == (
        2,
        "--max-size '12X': not a size (say 500K, 64M, 1G, a number of bytes, or unlimited)",
    )


def test_a_session_passes_its_max_size_on_to_the_taps_and_proxies_it_starts(tmp_path: Path) -> None:
    assert recording_options(DEFAULT_MAX_SIZE) == []
    assert recording_options(0) == ["--max-size", "0"]
    server = Server(name="files", scope="user", entry={"command": "srv", "args": ["-v"]})
    entry = _tap_entry(server, tmp_path / "files.jsonl", recording_options(64 << 20))
    assert entry["args"][-6:] == ["files", "--max-size", str(64 << 20), "--", "srv", "-v"]


# -- the writer and the sink (no processes)


def message_line(t: float, n: int, pad: int = 0) -> bytes:
    return encode_event({"t": t, "kind": "message", "dir": "s2c", "size": 10, "msg": {"n": n, "pad": "x" * pad}})[0]


def event_line(t: float, kind: str, **fields: Any) -> bytes:
    return encode_event({"t": t, "kind": kind, **fields})[0]


def new_writer(tmp_path: Path, max_size: int) -> tuple[RecordingWriter, Path]:
    path = tmp_path / "rec.jsonl"
    writer = RecordingWriter(create_private(path), path)
    writer.add(0.0, encode_event(Header("stdio", "t", []).to_dict()))
    writer.cap(max_size)
    return writer, path


def test_the_first_event_past_the_cap_is_replaced_by_a_cap_error_and_the_rest_are_counted(tmp_path: Path) -> None:
    writer, path = new_writer(tmp_path, 4096)
    header_size = writer.pending_size
    lines = [message_line(float(n), n, pad=100) for n in range(100)]
    fit = next(n for n in range(100) if header_size + sum(map(len, lines[: n + 1])) > 4096)
    late = event_line(100.0, "stderr", text="late")
    for n, line in enumerate(lines):
        writer.add(float(n), [line])
        if n % 7 == 0:
            writer.flush()  # (a flush between events changes nothing)
    writer.add(100.0, [late])
    writer.close({"t": 101.0, "kind": "end", "ended": "normal"})
    _, events, _ = read_all(path)
    assert [e["msg"]["n"] for e in events if e["kind"] == "message"] == list(range(fit))
    [cap] = [e for e in events if e.get("error") == "recording_cap"]
    stored = header_size + sum(map(len, lines[:fit]))
    assert cap == events[fit] and cap["t"] == cap["since"] == float(fit)
    assert cap["max_size"] == 4096 and cap["size"] == stored
    end = events[-1]
    not_stored = sum(map(len, lines[fit:])) + len(late)
    assert end["capped"] == {"since": float(fit), "messages": 100 - fit, "events": 1, "bytes": not_stored}
    assert end["lost"] == 100 - fit + 1 and end["written"] == 1 + fit + 1 + 1  # header, messages, cap, end
    assert path.stat().st_size == stored + len(encode_event(cap)[0]) + len(encode_event(end)[0])


def test_a_run_of_messages_that_crosses_the_cap_is_stored_up_to_it(tmp_path: Path) -> None:
    writer, path = new_writer(tmp_path, 2000)
    small = [message_line(1.0, n) for n in range(50)]
    big = [
        b'{"t":1.0,"kind":"message","dir":"s2c","size":',
        b"20,",
        b'"msg":{"n":50,"pad":"' + b"y" * 300 + b'"}',
        b"}\n",
    ]
    room = 2000 - writer.pending_size
    fit = next(n for n in range(51) if sum(map(len, small[: n + 1])) > room)
    writer.add(1.0, [*small, *big], events=51)
    writer.close({"t": 2.0, "kind": "end", "ended": "normal"})
    _, events, _ = read_all(path)
    assert [e["msg"]["n"] for e in events if e["kind"] == "message"] == list(range(fit))
    assert events[-1]["capped"]["messages"] == 51 - fit and events[-1]["capped"]["events"] == 0
    assert events[-1]["capped"]["bytes"] == sum(map(len, small[fit:])) + sum(map(len, big))


def test_lifecycle_events_past_the_cap_are_stored_within_the_tail_and_then_counted(tmp_path: Path) -> None:
    writer, path = new_writer(tmp_path, 1000)
    writer.add(1.0, [message_line(1.0, 0, pad=2000)])
    exit_line = event_line(2.0, "exit", status=0, code=0, pad="z" * 1000)
    for _ in range(100):
        writer.add(2.0, [exit_line])
    writer.add(3.0, [event_line(3.0, "eof", dir="c2s")])
    writer.close({"t": 4.0, "kind": "end", "ended": "normal"})
    _, events, _ = read_all(path)
    [cap] = [e for e in events if e.get("error") == "recording_cap"]
    stored = (TAIL - len(encode_event(cap)[0])) // len(exit_line)
    assert [e["kind"] for e in events] == ["error", *["exit"] * stored, "eof", "end"]
    assert events[-1]["capped"] == {
        "since": 1.0,
        "messages": 1,
        "events": 100 - stored,
        "bytes": len(message_line(1.0, 0, pad=2000)) + (100 - stored) * len(exit_line),
    }


def test_without_a_cap_everything_is_stored_and_the_end_says_nothing_of_one(tmp_path: Path) -> None:
    writer, path = new_writer(tmp_path, 0)
    for n in range(1000):
        writer.add(1.0, [message_line(1.0, n, pad=1000)])
    writer.close({"t": 2.0, "kind": "end", "ended": "normal"})
    _, events, _ = read_all(path)
    assert len(events) == 1001 and "capped" not in events[-1] and events[-1]["lost"] == 0


def header_record(max_size: int | None) -> Record:
    header = {**Header("stdio", "t", ["x" * 500]).to_dict(), "max_size": max_size}
    return Record(Op.HEADER, 0, 0.0, json.dumps(header).encode())


def test_the_sink_takes_the_cap_from_the_header_record_and_always_stores_the_header(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    sink = Sink(RecordingWriter(create_private(path), path))
    sink.handle(header_record(100))  # smaller than the header itself
    sink.handle(Record(Op.OPEN, 1, 0.5, b'{"framing":"line","base":{"dir":"s2c"}}'))
    sink.handle(Record(Op.DATA, 1, 1.0, b'{"n":1}\n{"n":2}\n{"n":3}\n'))
    sink.handle(Record(Op.EVENT, 0, 1.5, b'{"kind":"exit","status":0,"code":0}'))
    sink.handle(Record(Op.CLOSED, 1, 2.0, b""))
    sink.finish()
    header, events, _ = read_all(path)
    assert header["max_size"] == 100
    assert [e["kind"] for e in events] == ["error", "exit", "eof", "end"]
    lines = [b'{"t":1.0,"kind":"message","dir":"s2c","size":7,"msg":{"n":%d}}\n' % n for n in (1, 2, 3)]
    assert events[-1]["capped"] == {"since": 1.0, "messages": 3, "events": 0, "bytes": sum(map(len, lines))}
    assert events[-1]["lost"] == 3


# -- through real processes


def test_a_flood_past_the_cap_reaches_the_client_whole_and_the_end_counts_every_message_not_stored(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "rec.jsonl"
    count, size = 20_000, 200  # 4 MB through a 1 MiB cap
    proc = start_flood(recording, count, size, "--max-size", "1M", forever=False)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    received, digest = 0, hashlib.sha256()
    while chunk := os.read(proc.stdout.fileno(), 1 << 16):
        received += len(chunk)
        digest.update(chunk)
    assert proc.wait(60) == 0
    proc.stdout.close()
    proc.stderr.close()
    sent = b"".join(flood_line(n, size) for n in range(count))
    assert received == len(sent) == count * size and digest.hexdigest() == hashlib.sha256(sent).hexdigest()
    header, events, _ = settled_read_all(recording)
    assert header["max_size"] == MiB
    stored = recorded_numbers(events)
    assert stored == list(range(len(stored))) and 0 < len(stored) < count
    cap_at = next(n for n, e in enumerate(events) if e.get("error") == "recording_cap")
    end = events[-1]
    assert end["capped"]["messages"] == count - len(stored) and end["capped"]["events"] == 0
    assert end["lost"] == count - len(stored) and end["ended"] == "normal"
    assert end["capped"]["since"] == events[cap_at]["since"]
    after = [(e["kind"], e.get("dir")) for e in events[cap_at + 1 : -1]]  # (stdin's eof may come before the cap)
    assert after in (
        [("eof", "s2c"), ("exit", None)],
        [("exit", None), ("eof", "s2c")],
        [("eof", "c2s"), ("eof", "s2c"), ("exit", None)],
        [("eof", "c2s"), ("exit", None), ("eof", "s2c")],
    )
    data = recording.read_bytes()
    lines = data.splitlines(keepends=True)
    before_cap = sum(map(len, lines[: cap_at + 1]))  # the header and the events before the cap
    # Filled to within one message (the next one's stamp may be a few digits longer than the last one's).
    assert before_cap == events[cap_at]["size"] <= MiB < before_cap + len(lines[cap_at]) + 16
    assert len(data) <= MiB + TAIL + len(data.splitlines()[-1]) + 1


def test_a_proxy_past_its_cap_passes_every_exchange_whole_and_counts_the_messages_it_did_not_store(
    tmp_path: Path,
) -> None:
    exchanges, cap = 40, 16 << 10
    bodies = [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"pad": "p" * 1000}}).encode()
        for n in range(exchanges)
    ]
    with RawUpstream() as upstream, running_proxy(upstream.url, tmp_path / "rec.jsonl", "--max-size", "16K") as proxy:
        host, port = proxy.url.removeprefix("http://").split("/")[0].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        replies = []
        for body in bodies:
            conn.request("POST", "/raw", body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            replies.append((response.status, json.loads(response.read())))
        conn.close()
    assert upstream.bodies == bodies
    assert replies == [(200, {"jsonrpc": "2.0", "id": 1, "result": {"received": len(b)}}) for b in bodies]
    stored = proxy.messages()
    assert 0 < len(stored) < 2 * exchanges
    assert [m["msg"]["id"] for m in proxy.messages("c2s")] == list(range(len(proxy.messages("c2s"))))
    end = proxy.events[-1]
    assert end["capped"]["messages"] == 2 * exchanges - len(stored)
    assert end["lost"] == end["capped"]["messages"] + end["capped"]["events"] and end["capped"]["events"] > 0
    assert [e["kind"] for e in proxy.events if e["t"] > end["capped"]["since"]] == ["signal", "end"]
    data = proxy.recording.read_bytes()
    assert len(data) <= cap + TAIL + len(data.splitlines()[-1]) + 1


# -- the report


def recapped(source: Path, target: Path, max_size: int) -> Path:
    """``source``'s events written again by a writer capped at ``max_size``."""
    lines = source.read_bytes().splitlines(keepends=True)
    writer = RecordingWriter(create_private(target), target)
    writer.add(0.0, [lines[0]])
    writer.cap(max_size)
    for line in lines[1:-1]:
        writer.add(json.loads(line)["t"], [line])
    end = json.loads(lines[-1])
    writer.close({k: v for k, v in end.items() if k not in ("written", "lost")})
    return target


def test_a_report_of_a_capped_recording_says_so_and_does_not_present_it_as_complete(tmp_path: Path) -> None:
    source = REPO / "recordings" / "cc-ext-polling.jsonl"
    data = source.read_bytes()
    completed = data.index(b'"status": "completed"')
    cut = data.rindex(b"\n", 0, completed) + 1  # the first line that says the task completed is not stored
    capped = recapped(source, tmp_path / "capped.jsonl", cut)
    full, report = build_report(source), build_report(capped)
    assert [t.terminal for t in full.tasks] == [True] and [t.terminal for t in report.tasks] == [False]
    end = read_all(capped)[1][-1]
    assert report.recording.capped is not None
    later = [json.loads(line)["kind"] for line in data[cut:].splitlines()]
    assert report.recording.capped.messages == end["capped"]["messages"] == later.count("message") == 1
    assert report.recording.capped.max_size == cut
    assert [f.code for f in report.findings if f.code == "recording-capped"] == ["recording-capped"]
    note = f"(The recording was capped at {report.recording.capped.since:.2f} s: what came later is not in it.)"
    assert all(verdict.verdict.endswith(note) for _, _, verdict in report.verdicts.titled())
    assert "recording-capped" not in [f.code for f in full.findings] and full.recording.capped is None
    assert "capped" not in full.to_dict()["recording"]
    markdown = io.StringIO()
    render_markdown(report, markdown)
    said = markdown.getvalue().splitlines()[2]
    assert said == (
        f"**Capped: the recording reached its cap (--max-size {cut}) at {report.recording.capped.since:.2f} s; "
        "1 message and 0 other events after that passed but were not stored.**"
    )
