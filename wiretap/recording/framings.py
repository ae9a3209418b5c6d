"""Which stream reads the bytes a ``StreamSpec`` names, in the recorder process."""

from __future__ import annotations

from wiretap.recording.spec import StreamSpec
from wiretap.recording.streams import BodyStream, LineStream, RecordStream, SSEStream, StderrStream
from wiretap.recording.websocket_stream import WebSocketStream


def make_stream(spec: StreamSpec, *, redact: bool) -> RecordStream:
    if spec.framing == "line":
        return LineStream(spec.stream_base["dir"], redact=redact)
    if spec.framing == "stderr":
        return StderrStream(redact=redact)
    if spec.framing == "sse":
        return SSEStream(spec.stream_base, redact=redact, encoding=spec.encoding)
    if spec.framing == "websocket":
        return WebSocketStream(spec.stream_base, redact=redact, encoding=spec.encoding)
    return BodyStream(spec.stream_base, redact=redact, encoding=spec.encoding)
