"""What the recorder does with the bytes of each stream: one small class per way of framing them.

A stream turns stamped chunks into events (fields, plus the JSON text to splice in as ``msg``).
Streams live in the recorder process only; a relay names the one it wants with a ``StreamSpec``
(``framings`` picks it).
A frame the recorder cannot make sense of costs that frame only: it is kept raw, next to an
``error`` event saying why.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, Unpack, cast, final

from wiretap.recording import memory
from wiretap.recording.event_types import (
    AnyEvent,
    EofEvent,
    ErrorEvent,
    MessageEvent,
    MessageExtras,
    SseEvent,
    SSEFields,
    StderrEvent,
    StreamBase,
)
from wiretap.recording.events import Kind
from wiretap.wire.framing import PREVIEW, Cut, Frame, LineFramer
from wiretap.wire.http.encoding import INFLATED_LIMIT, Decompressor
from wiretap.wire.messages import FrameFields, are_verbatim_json, is_verbatim_json, record_frame
from wiretap.wire.redact import LineRedactor, redact_json, redact_text
from wiretap.wire.sse import SSEDecoder, SSEEvent
from wiretap.wire.token_precheck import may_hold_token_in

Recorded = tuple[AnyEvent, bytes | bytearray | None]
"""An event, and the JSON text ``encode_event`` splices in as its ``msg`` (a message's)."""


@final
@dataclass(slots=True)
class Lines:
    """Events already encoded as JSON lines (``pieces`` joined), ``count`` of them: what a stream yields
    for a run of messages it could record without building their events as dicts."""

    t: float
    pieces: list[bytes | bytearray]
    count: int


Output = Recorded | Lines
MESSAGE_LIMIT = INFLATED_LIMIT
"""The most of one message the recorder holds (a line, a body decompressed or not, an SSE event). A bigger
one passes whole and unchanged, and is recorded as ``truncated``: its first ``PREVIEW`` bytes and its size."""
COPY_UP_TO = 64 << 10
"""How much of a body too big to decompress whole is kept in the recording."""


class RecordStream(Protocol):
    lost: int
    """Messages this stream could not record (a ``--on-overload drop`` gap cut them)."""

    def feed(self, t: float, chunk: bytes) -> Iterator[Output]: ...

    def gap(self, t: float, *, ends_mid_frame: bool) -> None: ...

    def close(self, t: float) -> Iterator[Recorded]: ...


def _raw(frame: Frame, *, redact: bool = False) -> FrameFields:
    text = bytes(frame).decode("utf-8", errors="replace")
    if not redact:
        return {"size": len(frame), "raw": text, "raw_base64": base64.b64encode(frame).decode("ascii")}
    try:
        return {"size": len(frame), "raw": _redacted(text)}
    except Exception:  # never keep unredacted what the redactor could not read
        return {"size": len(frame), "raw": "[not recorded: the redactor could not read it]"}


def _redacted(text: str) -> str:
    """JSON redacted as JSON and written with ASCII escapes (a lone surrogate survives that); else as text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return redact_text(text)[0]
    return json.dumps(redact_json(value)[0], ensure_ascii=True, separators=(",", ":"))


# The events whose fields come in parts (the stream's base first): each part is typed, and these put
# them together in their recorded order. A ``TypedDict`` built with ``**`` cannot be checked whole.


def message_event(t: float, base: StreamBase, fields: FrameFields, extra: MessageExtras) -> MessageEvent:
    """A message event, but for its ``msg`` (``encode_event`` splices that in)."""
    return cast(MessageEvent, {"t": t, "kind": Kind.MESSAGE.value, **base, **fields, **extra})


def stream_error(t: float, base: StreamBase, error: str, message: str) -> ErrorEvent:
    return cast(ErrorEvent, {"t": t, "kind": Kind.ERROR.value, "error": error, **base, "message": message})


def message(
    t: float, base: StreamBase, frame: Frame, *, redact: bool, clean: bool = False, **extra: Unpack[MessageExtras]
) -> Iterator[Recorded]:
    """The frame as a message event; if reading it fails, the frame raw and an error saying why."""
    try:
        recorded = record_frame(frame, redact=redact, clean=clean)
    except Exception as exc:  # whatever a frame does to the parser, it costs that frame only
        yield message_event(t, base, _raw(frame, redact=redact), extra), None
        yield stream_error(t, base, "bad_frame", repr(exc)), None
        return
    yield message_event(t, base, recorded.fields, extra), recorded.msg_bytes


class LineStream:
    """Newline-delimited messages (MCP stdio)."""

    def __init__(self, direction: str, *, redact: bool) -> None:
        self._base: StreamBase = {"dir": direction}
        self._framer = LineFramer(MESSAGE_LIMIT)
        self._redact = redact
        self._skip_fragment = False
        self.lost = 0
        # What every message event of this stream starts with, up to its time; see ``_lines``.
        self._kind_dir = b',"kind":"message","dir":' + json.dumps(direction).encode() + b',"size":'

    def feed(self, t: float, chunk: bytes) -> Iterator[Output]:
        continued, cuts = self._framer.pending > 0, self._framer.cuts
        frames = self._framer.feed(chunk)
        if not frames:
            return
        if continued and len(frames[0]) >= memory.GIVE_BACK_AT:
            memory.give_back()  # before reading a huge line makes a copy of its text
        if self._skip_fragment:  # the tail of a line whose start a gap took
            self._skip_fragment = False
            self.lost += 1
            frames = frames[1:]
            continued = False
        clean = not self._redact or not self._may_hold_token(chunk, frames, continued)
        if self._framer.cuts == cuts:
            yield from self._lines(t, frames, clean)
            return
        for frame in frames:  # (a cut frame's preview may read as JSON: it never takes the fast path)
            if type(frame) is Cut:
                yield from truncated_message(t, self._base, frame, redact=self._redact)
            else:
                yield from self._lines(t, [frame], clean)

    @staticmethod
    def _may_hold_token(chunk: bytes, frames: list[Frame], continued: bool) -> bool:
        """The redaction pre-check, once for all the frames that ``chunk`` completed: the first one (if it
        began in an earlier chunk), and the rest of the chunk up to its last newline."""
        if not frames:
            return False
        if not continued:
            return may_hold_token_in(memoryview(chunk)[: chunk.rfind(b"\n")])
        if may_hold_token_in(frames[0]):
            return True
        return len(frames) > 1 and may_hold_token_in(memoryview(chunk)[chunk.find(b"\n") + 1 : chunk.rfind(b"\n")])

    def _lines(self, t: float, frames: list[Frame], clean: bool) -> Iterator[Output]:
        """The frames' events, in order. A frame that is JSON and needs no redaction (nearly all of them)
        becomes its line straight away: ``{"t":…,"kind":"message","dir":…,"size":…,"msg":FRAME}``, the
        bytes ``encode_event`` writes for it, without building a dict and encoding it."""
        stamp = float.__repr__(t) if type(t) is float else json.dumps(t)  # what json writes for it
        head = b'{"t":' + stamp.encode() + self._kind_dir
        line = head + b'%d,"msg":%b}\n'
        if clean and len(frames) > 1 and _all_verbatim(frames):  # a flood of small messages
            yield Lines(t, [line % (len(frame), frame) for frame in frames], len(frames))
            return
        pieces: list[bytes | bytearray] = []
        add, verbatim = pieces.append, is_verbatim_json
        count = 0
        for frame in frames:
            try:
                fast = clean and verbatim(frame)
            except Exception:  # then record_frame reads it, and says what is wrong with it
                fast = False
            if fast:
                if len(frame) < COPY_UP_TO:
                    add(line % (len(frame), frame))
                else:  # spliced in where it is: a big frame is not copied into its line
                    pieces += (head, b'%d,"msg":' % len(frame), frame, b"}\n")
                count += 1
                continue
            if count:
                yield Lines(t, pieces, count)
                pieces, count = [], 0
                add = pieces.append
            yield from message(t, self._base, frame, redact=self._redact, clean=clean)
        if count:
            yield Lines(t, pieces, count)

    def gap(self, t: float, *, ends_mid_frame: bool) -> None:
        # A partial line before the gap ended inside it: the relay counted its newline already.
        self._framer.close()
        self._skip_fragment = ends_mid_frame

    def close(self, t: float) -> Iterator[Recorded]:
        last = self._framer.close()
        if self._skip_fragment:  # a gap ended inside the last line, which never got its newline
            self.lost += 1
        elif type(last) is Cut:
            yield from truncated_message(t, self._base, last, redact=self._redact, eol="")
        elif last is not None:
            yield from message(t, self._base, last, redact=self._redact, eol="")
        eof: EofEvent = {"t": t, "kind": Kind.EOF.value, "dir": self._base["dir"]}
        yield eof, None


def _all_verbatim(frames: list[Frame]) -> bool:
    try:
        return are_verbatim_json(frames)
    except Exception:  # then each frame is read on its own, and a bad one costs that frame only
        return False


class StderrStream:
    """A process's stderr: one event per line, as text."""

    def __init__(self, *, redact: bool) -> None:
        self._framer = LineFramer(MESSAGE_LIMIT)
        self._lines = LineRedactor() if redact else None
        self.lost = 0

    def _event(self, t: float, frame: Frame) -> Recorded:
        text = bytes(frame).decode("utf-8", errors="replace").rstrip("\r")
        shown = self._lines.line(text) if self._lines else text
        event: StderrEvent = {"t": t, "kind": Kind.STDERR.value, "text": shown}
        if type(frame) is Cut:
            event["truncated"], event["size"] = True, frame.size
        return event, None

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        for frame in self._framer.feed(chunk):
            yield self._event(t, frame)

    def gap(self, t: float, *, ends_mid_frame: bool) -> None:
        self._framer.close()

    def close(self, t: float) -> Iterator[Recorded]:
        last = self._framer.close()
        if last is not None:
            yield self._event(t, last)


def _truncation_note(t: float, base: StreamBase, *, decompressed: bool = False) -> ErrorEvent:
    what = "the decompressed body" if decompressed else "the message"
    return stream_error(
        t,
        base,
        "truncated",
        f"{what} is over {MESSAGE_LIMIT >> 20} MiB: recorded as truncated, with its "
        f"first {PREVIEW >> 10} KiB (the traffic passed whole and unchanged)",
    )


def truncated_message(
    t: float,
    base: StreamBase,
    head: bytes,
    *,
    size: int | None = None,
    redact: bool,
    decompressed: bool = False,
    **extra: Unpack[MessageExtras],
) -> Iterator[Recorded]:
    """A message over ``MESSAGE_LIMIT``: a ``truncated`` error, then the message with its first bytes (``head``,
    raw) and its whole ``size`` (a ``Cut``'s own, unless given)."""
    whole = size if size is not None else head.size if isinstance(head, Cut) else len(head)
    yield _truncation_note(t, base, decompressed=decompressed), None
    kept = _raw(head, redact=redact)
    kept["size"] = whole
    event = message_event(t, base, kept, {})
    event["truncated"] = True
    yield cast(MessageEvent, event | extra), None


def _first(chunks: list[bytes], size: int) -> Iterator[bytes]:
    for chunk in chunks:
        if size <= 0:
            return
        yield chunk[:size]
        size -= len(chunk)


class BodyStream:
    """An HTTP body that is one message (a JSON-RPC POST, a JSON response, an A2A REST body)."""

    def __init__(self, base: StreamBase, *, redact: bool, encoding: str | None = None) -> None:
        self._base = base
        self._chunks: list[bytes] = []
        self._redact = redact
        self._decompress = Decompressor(encoding)
        self._cut = False
        self._size = 0
        """The body's bytes so far (decompressed)."""
        self._truncated = False
        self.lost = 0

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        if self._cut:
            return iter(())
        if self._truncated:  # only counted now (a decompressor that stopped at its limit gives nothing)
            if self._decompress.identity:
                self._size += len(chunk)
            return iter(())
        plain = self._decompress(chunk)
        self._chunks.append(plain)
        self._size += len(plain)
        if self._decompress.truncated or self._size > MESSAGE_LIMIT:  # the preview is kept, not the rest
            self._truncated = True
            self._chunks = [b"".join(_first(self._chunks, PREVIEW))]
        return iter(())

    def gap(self, t: float, *, ends_mid_frame: bool) -> None:
        self._cut, self._chunks = True, []

    def close(self, t: float) -> Iterator[Recorded]:
        body = b"".join(self._chunks)
        self._chunks = []
        if self._cut:
            self.lost += 1
        elif self._truncated:
            decompressed = not self._decompress.identity
            yield from truncated_message(
                t, self._base, body, size=self._size, redact=self._redact, decompressed=decompressed
            )
        else:
            yield from body_message(t, self._base, body, redact=self._redact)


def body_message(t: float, base: StreamBase, body: bytes, *, redact: bool) -> Iterator[Recorded]:
    """What a whole (decoded) body records: one message, or nothing for an empty one."""
    if body.strip():
        yield from message(t, base, body.rstrip(b"\r\n"), redact=redact)
    elif "rest" in base:  # an A2A REST call is a message even without a body (GET /tasks/{id})
        yield message_event(t, base, {"size": len(body)}, {}), None


class SSEStream:
    """A ``text/event-stream`` body: each event with data is a message; the rest is kept as ``sse``."""

    def __init__(self, base: StreamBase, *, redact: bool, encoding: str | None = None) -> None:
        self._base = base
        self._decoder = SSEDecoder(MESSAGE_LIMIT)
        self._redact = redact
        self._decompress = Decompressor(encoding)
        self._noted = False
        self.lost = 0

    def _recorded(self, t: float, event: SSEEvent) -> Iterator[Recorded]:
        sse: SSEFields = {}
        if event.event is not None:
            sse["event"] = event.event
        if event.id is not None:
            sse["id"] = event.id
        if event.retry is not None:
            sse["retry"] = event.retry
        if not event.complete:
            sse["incomplete"] = True
        if event.size is not None:
            yield from truncated_message(
                t, self._base, event.data or b"", redact=self._redact, size=event.size, sse=sse
            )
        elif event.data:
            yield from message(t, self._base, event.data, redact=self._redact, sse=sse)
        else:
            yield cast(SseEvent, {"t": t, "kind": Kind.SSE.value, **self._base, **sse}), None

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        for event in self._decoder.feed(self._decompress(chunk)):
            yield from self._recorded(t, event)
        if self._decompress.truncated and not self._noted:
            self._noted = True
            yield _truncation_note(t, self._base, decompressed=True), None

    def gap(self, t: float, *, ends_mid_frame: bool) -> None:
        self._decoder = SSEDecoder(MESSAGE_LIMIT)
        self.lost += 1  # the event the gap cut into

    def close(self, t: float) -> Iterator[Recorded]:
        for event in self._decoder.close():
            yield from self._recorded(t, event)
