"""Sans-IO: what one frame becomes in a recording (a parsed JSON-RPC message, or a raw frame)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from wiretap.wire.framing import Frame
from wiretap.wire.redact import may_need_redaction, redact_json, redact_text


@dataclass(slots=True)
class RecordedFrame:
    """Event fields for a frame, and the JSON text of the message to splice in as ``msg``.

    A clean JSON frame is recorded verbatim (``msg_bytes`` is the frame itself), so the recording
    keeps the sender's key order and number spelling, and large messages are not re-serialized.
    """

    fields: dict[str, Any] = field(default_factory=dict)
    msg_bytes: bytes | bytearray | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Built once: json.loads(text, parse_constant=...) builds a new JSONDecoder on every call, which costs
# about as much as decoding a small message does.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _is_json(text: str) -> bool:
    try:
        _STRICT_DECODER.decode(text)
    except (ValueError, RecursionError):
        return False
    return True


def _dumps(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate ("\\ud800" in the message) stays an escape
        return json.dumps(value, separators=(",", ":")).encode()


def record_frame(frame: Frame, *, redact: bool) -> RecordedFrame:
    out = RecordedFrame({"size": len(frame)})
    body = frame
    if body.endswith(b"\r"):
        body = body[:-1]
        out.fields["eol"] = "\r\n"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        out.fields["raw"] = bytes(body).decode("utf-8", errors="replace")
        out.fields["raw_base64"] = base64.b64encode(body).decode("ascii")
        return out
    if not text.strip() or not _is_json(text):
        out.fields["raw"] = redact_text(text)[0] if redact else text
        return out
    if redact and may_need_redaction(text):
        try:
            cleaned, count = redact_json(json.loads(text))
        except RecursionError:  # deeper than Python's stack: recorded as text, redacted as text
            out.fields["raw"] = redact_text(text)[0]
            return out
        if count:
            out.fields["redacted"] = count
            out.msg_bytes = _dumps(cleaned)
            return out
    out.msg_bytes = body
    return out
