"""Recordings and session folders read from disk and mapped to spans (the IO around ``mapping``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from wiretap.analysis.report import report_recording
from wiretap.model import Event
from wiretap.otel.mapping import RecordingMapper
from wiretap.otel.spans import Span, SpanKind, span_id_for, trace_id_for
from wiretap.recording.reader import read_all
from wiretap.sessions import SessionFolder, is_session, open_session

SESSION_IDENTITY = ("kind", "started", "started_monotonic", "client", "client_argv", "cwd")


def map_events(mapper: RecordingMapper, events: Iterable[Event], report: dict[str, Any] | None) -> list[Span]:
    spans = [span for event in events for span in mapper.feed(event)]
    return spans + mapper.finish(report)


def recording_spans(path: Path) -> list[Span]:
    """Raises NotARecording or OSError with a one-line reason."""
    header, events, _ = read_all(path)
    return map_events(RecordingMapper(header), events, report_recording(path))


def spans_of(path: Path) -> list[Span]:
    return session_spans(open_session(path)) if is_session(path) else recording_spans(path)


def session_trace_id(manifest: dict[str, Any]) -> bytes:
    return trace_id_for({key: manifest.get(key) for key in SESSION_IDENTITY})


def session_spans(folder: SessionFolder) -> list[Span]:
    """One trace: the session's root span, each recording's root under it, their calls under those."""
    manifest = folder.manifest
    trace_id = session_trace_id(manifest)
    root_id = span_id_for(trace_id, "session")
    spans: list[Span] = []
    mappers: list[RecordingMapper] = []
    for _server, path in folder.recordings:
        if not path.is_file():
            continue
        header, events, _ = read_all(path)
        mapper = RecordingMapper(header, name=path.name, trace_id=trace_id, parent_id=root_id)
        report = report_recording(path, client_exited_monotonic=folder.client_exited_monotonic)
        spans += map_events(mapper, events, report)
        mappers.append(mapper)
    spans.append(session_root_span(folder, mappers))
    return spans


def _session_start_ns(manifest: dict[str, Any], mappers: list[RecordingMapper]) -> int:
    """On the recordings' clock when one of them says where its t = 0 lies on the session's monotonic clock."""
    session_mono = manifest.get("started_monotonic")
    for mapper in mappers:
        mono = mapper.header.get("monotonic_origin")
        if isinstance(mono, int | float) and isinstance(session_mono, int | float):
            return mapper.origin - round((mono - session_mono) * 1_000_000) * 1000
    try:
        return (
            round(datetime.fromisoformat(str(manifest.get("started")).replace("Z", "+00:00")).timestamp() * 1000)
            * 1_000_000
        )
    except ValueError:
        return min((m.origin for m in mappers), default=0)


def session_root_span(folder: SessionFolder, mappers: list[RecordingMapper]) -> Span:
    manifest = folder.manifest
    trace_id = session_trace_id(manifest)
    root_id = span_id_for(trace_id, "session")
    start = _session_start_ns(manifest, mappers)
    ends = [m.end_ns for m in mappers]
    if isinstance(exited := manifest.get("client_exited"), int | float):
        ends.append(start + round(exited * 1_000_000) * 1000)
    exit_ = manifest.get("exit") or {}
    ended = (
        f"signal {exit_['signal']}"
        if exit_.get("signal")
        else f"exit {exit_['code']}"
        if "code" in exit_
        else "running"
    )
    client = str(manifest.get("client") or "client")
    attributes: dict[str, Any] = {
        "wiretap.session": folder.path.name,
        "wiretap.client.name": client,
        "wiretap.client.ended": ended,
        "wiretap.servers": [str(s.get("name")) for s in manifest.get("servers") or []],
        "wiretap.not_wrapped": len(manifest.get("not_wrapped") or []),
    }
    return Span(
        trace_id,
        root_id,
        None,
        f"wiretap session {client}",
        SpanKind.INTERNAL,
        start,
        max(ends, default=start),
        attributes,
    )
