"""A session is one report on one clock: the recordings share the machine's monotonic clock, t = 0 is the
client's start, every server keeps its name, and ``--server NAME`` narrows the report to one."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from support.export_recordings import Recording, status
from support.report_schema import valid_report

from wiretap.analysis.session_report import build_session_report
from wiretap.cli import cli

CLIENT_START = 1000.5
"""On the machine's monotonic clock: the session started at 1000.0, the client 0.5 s later."""


def server_recording(path: Path, task: str, origin: float) -> Path:
    """A server's recording: a task created at 0.30 s and polled at 1.30 s on its own clock."""
    r = Recording()
    r.lifecycle(0.0, "spawn", argv=["server"], pid=7)
    r.call(0.30, "tools/call", {"name": "job", "task": {}}, 0.31, {"task": {"taskId": task, "status": "working"}})
    r.call(1.30, "tasks/get", {"taskId": task}, 1.31, status(task, "working"))
    r.call(2.30, "tasks/get", {"taskId": task}, 2.31, status(task, "completed"))
    r.lifecycle(5.0, "eof", dir="c2s")
    r.lifecycle(5.1, "exit", status=0, code=0)
    return r.write(path, name=path.stem, monotonic_origin=origin)


def session(tmp_path: Path) -> Path:
    folder = tmp_path / "session"
    folder.mkdir()
    server_recording(folder / "alpha.jsonl", "A", origin=1000.6)  # 0.1 s after the client started
    server_recording(folder / "beta.jsonl", "B", origin=1002.5)  # 2.0 s after
    servers = [
        {"name": name, "transport": "stdio", "recording": f"{name}.jsonl", "messages": 6} for name in ("alpha", "beta")
    ]
    manifest = {
        "kind": "wiretap-session",
        "started": "2026-11-30T12:00:00.000Z",
        "started_monotonic": 1000.0,
        "client_started": 0.5,
        "client_exited_monotonic": 1004.0,
        "servers": servers,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_every_time_in_a_session_report_is_on_the_clients_clock_with_its_servers_name(tmp_path: Path) -> None:
    report = build_session_report(session(tmp_path))
    assert report.servers == ["alpha", "beta"]
    tasks = {t.id: t for t in report.tasks}
    assert (tasks["A"].server, tasks["A"].created_at, tasks["A"].polls) == ("alpha", 0.41, [1.4, 2.4])
    assert (tasks["B"].server, tasks["B"].created_at, tasks["B"].polls) == ("beta", 2.31, [3.3, 4.3])
    # The client left at 1004.0 on the machine's clock: 3.50 s after it started, before either server's eof.
    assert report.client_exit is not None and report.client_exit.t == 3.5
    assert (tasks["A"].live_at_client_exit, tasks["B"].live_at_client_exit) == (False, True)
    assert report.verdicts.cancel_on_exit.verdict == (
        "The client went away at 3.50 s (client exited) with 1 live task (B on beta) and cancelled none; "
        "alpha's server exited with code 0, 1.70 s later, beta's server exited with code 0, 3.60 s later."
    )
    assert report.verdicts.cancel_on_exit.live_tasks == ["B"]
    assert {row.server for row in report.latency} == {"alpha", "beta"}
    assert [p.recording.offset for p in report.parts] == [0.1, 2.0]


def test_report_of_a_session_is_one_report_and_server_narrows_it(tmp_path: Path) -> None:
    folder = session(tmp_path)
    whole = CliRunner().invoke(cli, ["report", str(folder), "--format", "json"])
    assert whole.exit_code == 0, whole.output
    document = json.loads(whole.output)
    valid_report(document)
    assert [t["server"] for t in document["report"]["tasks"]] == ["alpha", "beta"]
    assert [r["recording"]["server"] for r in document["reports"]] == ["alpha", "beta"]
    narrowed = CliRunner().invoke(cli, ["report", str(folder), "--format", "json", "--server", "beta"])
    assert narrowed.exit_code == 0
    assert [t["id"] for t in json.loads(narrowed.output)["report"]["tasks"]] == ["B"]
    text = CliRunner().invoke(cli, ["report", str(folder)])
    assert text.exit_code == 0 and "server" in text.output and "2 servers alpha, beta; stdio" in text.output
    unknown = CliRunner().invoke(cli, ["report", str(folder), "--server", "gamma"])
    assert unknown.exit_code == 2 and "no server 'gamma' in this session (it has: alpha, beta)" in unknown.output


def test_the_session_timeline_has_a_lane_per_server_and_marks_each_servers_exit(tmp_path: Path) -> None:
    folder = session(tmp_path)
    svg = CliRunner().invoke(cli, ["export", str(folder), "--format", "svg"])
    assert svg.exit_code == 0
    assert "alpha: stdio" in svg.output and "beta: stdio" in svg.output
    assert (
        "alpha server exited with code 0 5.20 s" in svg.output and "beta server exited with code 0 7.10 s" in svg.output
    )
    one = CliRunner().invoke(cli, ["export", str(folder), "--format", "svg", "--server", "alpha"])
    assert one.exit_code == 0 and "beta" not in one.output


def test_a_wrapped_server_the_client_never_contacted_is_a_finding_of_its_own(tmp_path: Path) -> None:
    folder = session(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["running"] = False
    empty = Recording()
    empty.lifecycle(0.0, "spawn", argv=["server"], pid=8)
    empty.write(folder / "web.jsonl", name="web", monotonic_origin=1000.6)
    manifest["servers"] += [
        {"name": "web", "transport": "http", "recording": "web.jsonl", "recordings": ["web.jsonl"], "messages": 0},
        {"name": "idle", "transport": "stdio", "recording": "idle.jsonl", "recordings": [], "messages": 0},
    ]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    found = [f for f in build_session_report(folder).findings if f.code == "never-contacted"]
    assert [(f.server, f.severity, f.message) for f in found] == [
        (
            "web",
            "warning",
            "web (http) was configured but never contacted: its proxy ran, but the client sent it nothing",
        ),
        ("idle", "warning", "idle (stdio) was configured but never contacted: the client never started it"),
    ]
    assert [f.code for f in build_session_report(folder, server="alpha").findings if f.code == "never-contacted"] == []
