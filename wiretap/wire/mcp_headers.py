"""The MCP 2026-07-28 Streamable HTTP request headers that mirror the JSON-RPC body, decoded (sans-IO).

``Mcp-Method`` mirrors ``method``; ``Mcp-Name`` mirrors ``params.name`` (``tools/call``, ``prompts/get``)
or ``params.uri`` (``resources/read``), and, in the tasks extension, ``params.taskId`` (``tasks/*``);
``MCP-Protocol-Version`` mirrors ``params._meta["io.modelcontextprotocol/protocolVersion"]``.

A value that is not plain visible ASCII travels as ``=?base64?{Base64 of its UTF-8 bytes}?=`` (only
``Mcp-Name`` and ``Mcp-Param-*`` may). The markers are case-sensitive; anything else is the value as is.
Strict reading is RFC 4648 base64 with the standard alphabet and its padding, canonical (no stray
trailing bits), decoding to UTF-8. What a lenient reader could still make of a value that breaks those
rules (missing padding, the URL-safe alphabet, stray bits, raw non-ASCII bytes) is kept as the value,
with the rule it broke as ``problem``.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

__all__ = [
    "METHOD",
    "NAME",
    "PREFIX",
    "SUFFIX",
    "VERSION",
    "HeaderValue",
    "decode_header",
    "name_field",
]

PREFIX, SUFFIX = "=?base64?", "?="
METHOD, NAME, VERSION = "mcp-method", "mcp-name", "mcp-protocol-version"
"""Header names as recordings spell them (lower case)."""
SPELLED = {METHOD: "Mcp-Method", NAME: "Mcp-Name", VERSION: "MCP-Protocol-Version"}
"""As the specification spells them."""

NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""Methods whose ``Mcp-Name`` is required, and the params field it mirrors."""
TASK_PREFIX = "tasks/"
TASK_FIELD = "taskId"

_STANDARD = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL_SAFE = re.compile(r"[A-Za-z0-9_-]*={0,2}")


@dataclass(frozen=True, slots=True)
class HeaderValue:
    sent: str
    """The value as recorded: its octets read as Latin-1."""
    value: str | None
    """What it stands for; None when it cannot be decoded at all."""
    encoded: bool = False
    """It wore the ``=?base64?…?=`` wrapper."""
    problem: str | None = None
    """The rule a strict reader holds it to that it breaks (None: it breaks none)."""


def name_field(method: str) -> tuple[str, bool] | None:
    """The params field ``Mcp-Name`` mirrors for ``method``, and whether the header is required."""
    if method in NAME_FIELDS:
        return NAME_FIELDS[method], True
    if method.startswith(TASK_PREFIX):
        return TASK_FIELD, False
    return None


def _octets(raw: bytes | str) -> tuple[bytes, str]:
    if isinstance(raw, bytes):
        return raw, raw.decode("latin-1")
    try:
        return raw.encode("latin-1"), raw
    except UnicodeEncodeError:
        return raw.encode("utf-8", "surrogatepass"), raw


def decode_header(raw: bytes | str, *, wrapper: bool = True) -> HeaderValue:
    """A header value as it arrived (octets, or their Latin-1 text as a recording holds them) and what it
    stands for. ``wrapper``: whether this header may carry the base64 form (``Mcp-Name`` does,
    ``Mcp-Method`` and ``MCP-Protocol-Version`` do not)."""
    octets, sent = _octets(raw)
    if wrapper and len(sent) >= len(PREFIX) + len(SUFFIX) and sent.startswith(PREFIX) and sent.endswith(SUFFIX):
        value, problem = _unwrap(sent[len(PREFIX) : -len(SUFFIX)])
        return HeaderValue(sent, value, True, problem)
    return _plain(octets, sent)


def _plain(octets: bytes, sent: str) -> HeaderValue:
    if any(byte >= 0x80 for byte in octets):
        try:
            value = octets.decode("utf-8")
        except UnicodeDecodeError:
            value = sent
        return HeaderValue(sent, value, problem="non-ASCII bytes without the =?base64?…?= wrapper")
    if any((byte < 0x20 and byte != 0x09) or byte == 0x7F for byte in octets):
        return HeaderValue(sent, sent, problem="control characters")
    return HeaderValue(sent, sent)


def _unwrap(payload: str) -> tuple[str | None, str | None]:
    """(the decoded text or None, the rule broken or None)."""
    if _STANDARD.fullmatch(payload) is None and _URL_SAFE.fullmatch(payload) is None:
        return None, "not base64"
    problems = []
    if _STANDARD.fullmatch(payload) is None:
        problems.append("the URL-safe alphabet (- and _), not the standard one")
        payload = payload.replace("-", "+").replace("_", "/")
    if len(payload) % 4:
        if len(payload) % 4 == 1 or "=" in payload:
            return None, "not base64 (bad length or padding)"
        problems.append("base64 padding missing")
        payload += "=" * (-len(payload) % 4)
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None, "not base64"
    if base64.b64encode(data).decode("ascii") != payload:
        problems.append("non-canonical base64 (stray trailing bits)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "base64 of bytes that are not UTF-8"
    return text, "; ".join(problems) or None
