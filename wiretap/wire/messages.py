"""Sans-IO: what one frame becomes in a recording (a parsed JSON-RPC message, or a raw frame)."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import msgspec

from wiretap.wire.framing import Frame
from wiretap.wire.redact import redact_json, redact_text
from wiretap.wire.token_precheck import may_need_redaction


class FrameFields(TypedDict):
    """What a message event records of its frame, apart from ``msg``."""

    size: int
    eol: NotRequired[str]
    raw: NotRequired[str]
    raw_base64: NotRequired[str]
    redacted: NotRequired[int]


@dataclass(slots=True)
class RecordedFrame:
    """Event fields for a frame, and the JSON text of the message to splice in as ``msg``.

    A clean JSON frame is recorded verbatim (``msg_bytes`` is the frame itself), so the recording
    keeps the sender's key order and number spelling, and large messages are not re-serialized.
    """

    fields: FrameFields
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


_SCAN = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]  # set in __init__, not in the stubs
_BLANK = re.compile(r"[ \t\n\r]*")  # what JSONDecoder.decode skips around a value


def is_verbatim_json(frame: Frame) -> bool:
    """True when ``record_frame`` would record ``frame`` as it is, with its size alone (if it needs no
    redaction): one strict JSON value in UTF-8, not ending in ``\\r``.

    msgspec's decoder (in C, the fast path) reads it first; it refuses everything the
    strict stdlib decoder refuses (a lone surrogate escape and a number beyond a double too), so what it
    refuses is asked again of the stdlib, the judge. One more case: a value nested deeper than the
    stdlib's recursion limit, which msgspec reads up to 1,000 levels, goes to the stdlib as well."""
    if not frame or frame[-1] == 13:  # "\r": record_frame keeps the line end apart
        return False
    try:
        value = _FAST_DECODE(frame)
    except Exception:  # whatever msgspec refuses, and however: the stdlib decides
        return _stdlib_verbatim(frame)
    return len(frame) < 2 * _DEEP or _shallow(value) or _stdlib_verbatim(frame)


def are_verbatim_json(frames: list[Frame]) -> bool:
    """True when ``is_verbatim_json`` holds for every one of ``frames``, read in one msgspec pass; False
    when some may not (then ask frame by frame).

    The pass reads ``[f1]\\n[f2]\\n…[fN]`` as JSON lines, each a 1-item array. No frame holds a newline,
    and ``]``, blanks, ``[`` is valid JSON only between two top-level values: so N values, each a
    1-item array, means that each frame is one JSON value. Frames of 1,600 bytes and more (which could
    nest 800 deep) and frames ending in ``\\r`` are left to ``is_verbatim_json``."""
    if max(map(len, frames)) >= 2 * _DEEP:
        return False
    joined = b"[" + b"]\n[".join(frames) + b"]"
    if (b"\r" in joined and b"\r]" in joined) or not _is_utf8(joined):  # (memchr first: a 2-byte search is slow)
        return False
    try:
        return len(_RAW_LINES(joined)) == len(frames)
    except Exception:  # some frame is not JSON, or not to msgspec's taste: frame by frame then
        return False


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_FAST_DECODE = msgspec.json.Decoder().decode
_RAW_LINES = msgspec.json.Decoder(tuple[msgspec.Raw]).decode_lines
"""Checks each line's syntax without building its value (~3x faster than decoding it), but not its
UTF-8: ``are_verbatim_json`` checks that on the whole."""
_DEEP = 800
"""Nesting at which a value is handed to the stdlib to judge (its own limit is ~1000 less the stack)."""


def _shallow(value: Any) -> bool:
    """Whether ``value`` nests fewer than ``_DEEP`` containers: walks the containers only."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth >= _DEEP:
            return False
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        stack += [(child, depth + 1) for child in children if type(child) is dict or type(child) is list]
    return True


def _stdlib_verbatim(frame: Frame) -> bool:
    """``is_verbatim_json`` by the stdlib's strict decoder: its scanner called directly, blanks skipped
    only where there are any."""
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return False
    start = _BLANK.match(text).end() if text[0] in " \t\n\r" else 0  # type: ignore[union-attr]
    try:
        end = _SCAN(text, start)[1]
    except (StopIteration, ValueError, RecursionError):
        return False
    return end == len(text) or _BLANK.match(text, end).end() == len(text)  # type: ignore[union-attr]


def _dumps(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate ("\\ud800" in the message) stays an escape
        return json.dumps(value, separators=(",", ":")).encode()


_HARMLESS_KEY = '"progressToken":'
"""In nearly every MCP request (``_meta``) and progress notification; its "token" sends them down the
redaction walk, which finds nothing under a key that names no secret (``names_secret`` says so: tested)."""


def _only_harmless_keys(text: str, body: Frame) -> bool:
    """Whether ``text`` is JSON whose only trace of a secret is a ``progressToken`` key: then the walk
    could redact nothing. In JSON that spelling is a key, never inside a string (its quotes would be
    escaped); keys are only read by the walk to judge the value under them, and every other place a
    rule could match is still in the text the pre-check reads."""
    if _HARMLESS_KEY not in text or may_need_redaction(text.replace(_HARMLESS_KEY, '"":')):
        return False
    return is_verbatim_json(body) or _is_json(text)


def record_frame(frame: Frame, *, redact: bool, clean: bool = False) -> RecordedFrame:
    """``clean``: the pre-check already found nothing to redact in the frame (``may_hold_token_in``)."""
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
    if not text.strip():
        out.fields["raw"] = text
        return out
    if not redact or clean or not may_need_redaction(text) or _only_harmless_keys(text, body):
        if is_verbatim_json(body) or _is_json(text):
            out.msg_bytes = body
        else:  # (redact_text would find nothing to redact in it)
            out.fields["raw"] = text
        return out
    try:
        value = _STRICT_DECODER.decode(text)  # (parsed once: the check that it is JSON, and what is redacted)
    except (ValueError, RecursionError):
        out.fields["raw"] = redact_text(text)[0]
        return out
    try:
        cleaned, count = redact_json(value)
    except RecursionError:  # deeper than Python's stack: recorded as text, redacted as text
        out.fields["raw"] = redact_text(text)[0]
        return out
    if count:
        out.fields["redacted"] = count
        out.msg_bytes = _dumps(cleaned)
        return out
    out.msg_bytes = body
    return out
