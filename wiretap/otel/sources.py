"""Recordings and session folders read from disk and mapped to spans (the IO around ``mapping``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from wiretap.analysis.model import Report
from wiretap.analysis.report import ReportPass
from wiretap.otel.mapping import RecordingMapper
from wiretap.otel.spans import Span, SpanKind, span_id_for, trace_id_for
from wiretap.recording.events import Event
from wiretap.recording.folders import SessionFolder, is_session, open_session

SESSION_IDENTITY = ("kind", "started", "started_monotonic", "client", "client_argv", "cwd")


def map_events(mapper: RecordingMapper, events: Iterable[Event], report: Report | None) -> list[Span]:
    spans = [span for event in events for span in mapper.feed(event)]
    return spans + mapper.finish(report)


def _streamed(one_pass: ReportPass, mapper: Callable[[Event], RecordingMapper]) -> Iterator[Span]:
    """Spans as the report's one pass reads the recording: memory holds the calls awaiting a response,
    not the recording."""
    with one_pass:
        recording = mapper(one_pass.header)
        for event in one_pass.events():
            yield from recording.feed(event)
        report = one_pass.report()
    yield from recording.finish(report)


def iter_recording_spans(path: Path) -> Iterator[Span]:
    """Raises NotARecording or OSError with a one-line reason (before the first span)."""
    return _streamed(ReportPass(path), RecordingMapper)


def recording_spans(path: Path) -> list[Span]:
    return list(iter_recording_spans(path))


def iter_spans_of(path: Path) -> Iterator[Span]:
    return iter_session_spans(open_session(path)) if is_session(path) else iter_recording_spans(path)


def spans_of(path: Path) -> list[Span]:
    return list(iter_spans_of(path))


def session_trace_id(manifest: dict[str, Any]) -> bytes:
    return trace_id_for({key: manifest.get(key) for key in SESSION_IDENTITY})


def session_spans(folder: SessionFolder) -> list[Span]:
    return list(iter_session_spans(folder))


def iter_session_spans(folder: SessionFolder) -> Iterator[Span]:
    """One trace: the session's root span, each recording's root under it, their calls under those."""
    trace_id = session_trace_id(folder.manifest)
    root_id = span_id_for(trace_id, "session")
    mappers: list[RecordingMapper] = []

    def mapper(header: Event, name: str) -> RecordingMapper:
        mappers.append(RecordingMapper(header, name=name, trace_id=trace_id, parent_id=root_id))
        return mappers[-1]

    for _server, path in folder.recordings:
        if path.is_file():
            one_pass = ReportPass(path, client_exited_monotonic=folder.client_exited_monotonic)
            yield from _streamed(one_pass, functools.partial(mapper, name=path.name))
    yield session_root_span(folder, mappers)


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
