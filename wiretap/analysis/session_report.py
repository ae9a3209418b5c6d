"""A session folder (``wiretap -- CLIENT``) as one report on one clock: its recordings share the machine's
monotonic clock, t = 0 is the client's start, and every server keeps its name on its tasks, questions,
findings, latency rows and timeline lanes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from wiretap.analysis import model
from wiretap.analysis.findings import never_contacted
from wiretap.analysis.limits import WRAPPED_CLIENTS
from wiretap.analysis.model import Report
from wiretap.analysis.report import build_report
from wiretap.plural import plural
from wiretap.recording.folders import open_session


def client_start(manifest: dict[str, Any]) -> float | None:
    """The client's start on the machine's monotonic clock, from the manifest."""
    direct = manifest.get("client_started_monotonic")
    if isinstance(direct, int | float):
        return float(direct)
    start, after = manifest.get("started_monotonic"), manifest.get("client_started")
    if isinstance(start, int | float) and isinstance(after, int | float):
        return float(start) + float(after)
    return float(start) if isinstance(start, int | float) else None


def build_session_report(
    folder: Path, *, server: str | None = None, keep_rows: int = 0, timeline: bool = False
) -> Report:
    """One report of a session's recordings (or of one server's, with ``server``). Raises NotASession
    (or BadInput for an unknown server), NotARecording, OSError."""
    session = open_session(folder)
    chosen = session.recordings_of(server)
    origin = client_start(session.manifest)
    parts = []
    for info, path in chosen:
        part = build_report(
            path,
            client_exited_monotonic=session.client_exited_monotonic,
            keep_rows=keep_rows,
            clock_origin=origin,
            timeline=timeline,
            limits=session_limits(session.manifest, info),
        )
        parts.append(_tagged(part, str(info.get("name"))))
    report = merge(parts, folder, session.manifest, keep_rows)
    report.findings += _never_contacted(session.manifest, server)
    return report


def _never_contacted(manifest: dict[str, Any], only: str | None) -> list[model.FindingRow]:
    """The wrapped servers the client never spoke to: no recording at all, or one without a message."""
    if manifest.get("running") or manifest.get("imported"):
        return []  # an imported session's recordings hold no messages: silence says nothing
    rows = []
    for info in manifest.get("servers") or []:
        name = str(info.get("name"))
        if only in (None, name) and info.get("messages") == 0:
            found = never_contacted(name, str(info.get("transport")), bool(info.get("recordings")))
            rows.append(model.FindingRow(**found.as_dict(), server=name))
    return rows


def session_limits(manifest: dict[str, Any], server: dict[str, Any]) -> tuple[str | None, dict[str, str]]:
    """The client that ran (as its handshake names it) and the settings of its limits: the environment's
    (``limits_env``), then the server's own config (``limits``)."""
    info = manifest.get("client_info")
    name = info.get("name") if isinstance(info, dict) else None
    client = name if isinstance(name, str) and name else WRAPPED_CLIENTS.get(str(manifest.get("client")))
    settings: dict[str, str] = {}
    for found in (manifest.get("limits_env"), server.get("limits")):
        if isinstance(found, dict):
            settings |= {str(k): str(v) for k, v in found.items()}
    return client, settings


def _tagged(part: Report, name: str) -> Report:
    part.recording.server = name
    part.servers = [name]
    for task in part.tasks:
        task.server = name
    for question in part.questions:
        question.server = name
    for finding in part.findings:
        finding.server = name
    for latency in part.latency:
        latency.server = name
    for call in part.calls:
        call.server = name
    part.rows = [replace(row, title=f"{name}: {row.title}") for row in part.rows]
    return part


def merge(parts: list[Report], folder: Path, manifest: dict[str, Any], keep_rows: int = 0) -> Report:
    names = [str(p.recording.server) for p in parts]
    transports = sorted({str(p.recording.transport) for p in parts})
    exits = [p.client_exit for p in parts if p.client_exit is not None]
    rows = sorted((row for p in parts for row in p.rows), key=lambda row: row.t)
    other: dict[str, int] = {}
    for part in parts:
        for what, count in part.messages.other.items():
            other[what] = other.get(what, 0) + count
    durations = [p.recording.duration for p in parts if p.recording.duration is not None]
    return Report(
        report_format=model.REPORT_FORMAT,
        recording=model.RecordingInfo(
            source=str(folder),
            name=f"session {folder.name}",
            transport="+".join(transports),
            started=manifest.get("started"),
            duration=max(durations) if durations else None,
            events=sum(p.recording.events for p in parts),
            skipped_lines=sum(p.recording.skipped_lines for p in parts),
            incomplete="; ".join(p.recording.incomplete for p in parts if p.recording.incomplete) or None,
        ),
        messages=model.MessageCounts(
            sum(p.messages.c2s for p in parts),
            sum(p.messages.s2c for p in parts),
            sum(p.messages.raw for p in parts),
            other,
        ),
        latency=[row for p in parts for row in p.latency],
        poll_rule=_poll_rule(parts),
        client_exit=min(exits, key=lambda e: e.t) if exits else None,
        server_exit=None if len(parts) > 1 else parts[0].server_exit,
        tasks=sorted((t for p in parts for t in p.tasks), key=lambda t: t.created_at),
        questions=sorted((q for p in parts for q in p.questions), key=lambda q: q.opened),
        verdicts=_verdicts(parts),
        findings=[f for p in parts for f in p.findings],
        servers=names,
        authorization=[replace(a, server=p.recording.server) for p in parts for a in p.authorization],
        rows=rows[:keep_rows],
        rows_left_out=max(0, len(rows) - keep_rows) + sum(p.rows_left_out for p in parts),
        parts=parts,
        client=next((p.client for p in parts if p.client), None),
        client_version=next((p.client_version for p in parts if p.client_version), None),
        calls=sorted((c for p in parts for c in p.calls), key=lambda c: c.t),
    )


def _cancel_verdict(parts: list[Report]) -> model.CancelVerdict:
    """One sentence for the session: the client left once; its live tasks, and each server's exit."""
    text, evidence = _said(parts, "cancel_on_exit")
    cancels = [p.verdicts.cancel_on_exit for p in parts]
    said = [c.sent for c in cancels if c.sent is not None]
    exits = [p.client_exit for p in parts if p.client_exit is not None]
    live = [(p.recording.server, t) for p, c in zip(parts, cancels, strict=True) for t in c.live_tasks]
    cancelled = [t for c in cancels for t in c.cancelled]
    if len(parts) > 1 and exits:
        client = min(exits, key=lambda e: e.t)
        tasks = f" ({', '.join(f'{task} on {server}' for server, task in live)})" if live else ""
        done = (
            f" and cancelled {plural(len(cancelled), 'task')}" if cancelled else " and cancelled none" if live else ""
        )
        servers = [
            f"{p.recording.server}'s server {p.server_exit.how}, {p.server_exit.t - client.t:.2f} s later"
            for p in parts
            if p.server_exit is not None
        ]
        text = (
            f"The client went away at {client.t:.2f} s ({client.how}) with "
            f"{plural(len(live), 'live task') if live else 'no live task'}{tasks}{done}"
            + (f"; {', '.join(servers)}" if servers else "")
            + "."
        )
    return model.CancelVerdict(
        text, evidence, live_tasks=[t for _, t in live], cancelled=cancelled, sent=all(said) if said else None
    )


def _said(parts: list[Report], key: str) -> tuple[str, list[str]]:
    """A verdict of every server, each prefixed with its name (one server: its own words)."""
    if len(parts) == 1:
        verdict = getattr(parts[0].verdicts, key)
        return verdict.verdict, list(verdict.evidence)
    text = " ".join(f"{p.recording.server}: {getattr(p.verdicts, key).verdict}" for p in parts)
    evidence = [f"{p.recording.server}: {line}" for p in parts for line in getattr(p.verdicts, key).evidence]
    return text, evidence


def _verdicts(parts: list[Report]) -> model.Verdicts:
    polls = [p.verdicts.poll_intervals for p in parts if p.verdicts.poll_intervals.settled_interval is not None]
    text, evidence = _said(parts, "poll_intervals")
    poll = model.PollVerdict(text, evidence)
    if len(polls) == 1:
        poll = replace(polls[0], verdict=text, evidence=evidence)
    cancel = _cancel_verdict(parts)
    text, evidence = _said(parts, "elicitation_gaps")
    gaps = [gap for p in parts if (gap := p.verdicts.elicitation_gaps.longest_gap) is not None]
    question = model.QuestionVerdict(text, evidence, longest_gap=max(gaps) if gaps else None)
    return model.Verdicts(poll, cancel, question, _shutdown_verdict(parts))


def _shutdown_verdict(parts: list[Report]) -> model.ShutdownVerdict | None:
    """How the client stopped each server: one server's own verdict, or each one's words prefixed with its name."""
    found = [p.verdicts.shutdown for p in parts]
    if not found or any(verdict is None for verdict in found):
        return None
    if len(parts) == 1:
        return found[0]
    text, evidence = _said(parts, "shutdown")
    complete = all(verdict is not None and verdict.recording_complete for verdict in found)
    orphaned = any(verdict is not None and verdict.orphaned for verdict in found) or None
    return model.ShutdownVerdict(text, evidence, orphaned=orphaned, recording_complete=complete)


def _poll_rule(parts: list[Report]) -> str:
    """The client's poll rule: one client ran, so its servers' reports name the same rule unless only one
    of them saw tasks (the task design picks between rules)."""
    said = [p.poll_rule for p in parts]
    with_tasks = [p.poll_rule for p in parts if p.tasks]
    return (with_tasks or said or ["No known poll rule: no recording"])[0]
