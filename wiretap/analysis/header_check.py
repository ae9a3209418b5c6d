"""MCP 2026-07-28 request headers held against the JSON-RPC body they mirror (``header-body-mismatch``),
and protocol version strings wiretap does not know (``unknown-protocol-version``).

Which requests are checked: HTTP requests whose protocol version (the body's ``_meta``, else the
``MCP-Protocol-Version`` header) is modern by ``wire.versions``. On a published revision a required header
that is missing counts; on a pre-release (``DRAFT-…``) or an unlisted date only the headers sent are
compared, since drafts named them differently. A value that equals the body only when read leniently
(missing base64 padding, raw non-ASCII bytes…) counts only when the server rejected the request.
A value holding a redaction mark is not compared.
"""

from __future__ import annotations

from typing import Any

from wiretap.analysis.conversation import RESPONSE, Message
from wiretap.analysis.findings import HEADER_MISMATCH_CODE, Findings
from wiretap.analysis.model import HeaderMismatch
from wiretap.recording.events import Direction, Event, Kind
from wiretap.wire.json_values import as_dict
from wiretap.wire.mcp_headers import METHOD, NAME, SPELLED, VERSION, decode_header, name_field
from wiretap.wire.versions import Kind as VersionKind
from wiretap.wire.versions import parse_version

__all__ = ["HeaderCheck", "VersionWatch", "check_request"]

VERSION_META = "io.modelcontextprotocol/protocolVersion"
REDACTED = "[redacted:"


def _header(headers: dict[str, Any], name: str) -> str | None:
    value = headers.get(name)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return value if isinstance(value, str) else None


def _compare(
    name: str, sent: str | None, body: str, field: str, required: bool, request: tuple[str, Any, float]
) -> HeaderMismatch | None:
    method, rid, t = request
    if sent is None:
        if not required:
            return None
        return HeaderMismatch(SPELLED[name], None, None, None, field, body, method, rid, t, None, None, None, None)
    if REDACTED in sent or REDACTED in body:
        return None
    decoded = decode_header(sent, wrapper=name == NAME)
    if decoded.value == body and decoded.problem is None:
        return None
    return HeaderMismatch(
        SPELLED[name], sent, decoded.value, decoded.problem, field, body, method, rid, t, None, None, None, None
    )


def check_request(body: dict[str, Any], headers: dict[str, Any], t: float) -> list[HeaderMismatch]:
    """Every header of one HTTP request that does not say what its JSON-RPC body says."""
    method = body.get("method")
    if not isinstance(method, str) or "id" not in body:
        return []
    params = as_dict(body.get("params"))
    in_body = as_dict(params.get("_meta")).get(VERSION_META)
    version = in_body if isinstance(in_body, str) else _header(headers, VERSION)
    if version is None:
        return []
    parsed = parse_version(version)
    if not parsed.modern:
        return []
    required = parsed.known
    request = (method, body.get("id"), t)
    found = [_compare(METHOD, _header(headers, METHOD), method, "method", required, request)]
    if isinstance(in_body, str):
        field = f"params._meta[{VERSION_META!r}]"
        found.append(_compare(VERSION, _header(headers, VERSION), in_body, field, required, request))
    mirrored = name_field(method)
    if mirrored is not None and isinstance(value := params.get(mirrored[0]), str):
        field, needed = f"params.{mirrored[0]}", mirrored[1] and required
        found.append(_compare(NAME, _header(headers, NAME), value, field, needed, request))
    return [m for m in found if m is not None]


def _rejected(found: HeaderMismatch) -> bool:
    return (found.status or 0) >= 400 or found.error_code == HEADER_MISMATCH_CODE


def _lenient(found: HeaderMismatch) -> bool:
    """The header equals the body when read leniently: a finding only if the server refused it."""
    return found.decoded == found.body


class HeaderCheck:
    """Fed every event; holds a request's mismatches until its exchange ends, to name the server's answer."""

    def __init__(self, findings: Findings) -> None:
        self._findings = findings
        self._heads: dict[int, dict[str, Any]] = {}
        self._open: dict[int, list[HeaderMismatch]] = {}

    def feed(self, event: Event) -> None:
        ex = event.get("ex")
        if not isinstance(ex, int):
            return
        kind = event.get("kind")
        if kind == Kind.HTTP_REQUEST:
            self._heads[ex] = as_dict(event.get("headers"))
        elif kind == Kind.HTTP_RESPONSE:
            self._status(ex, event)
        elif kind == Kind.MESSAGE:
            self._message(ex, event)
        elif kind == Kind.HTTP_END:
            self._heads.pop(ex, None)
            self._close(ex)

    def finish(self) -> None:
        for ex in list(self._open):
            self._close(ex)

    def _message(self, ex: int, event: Event) -> None:
        body = event.get("msg")
        if not isinstance(body, dict):
            return
        if event.get("dir") == Direction.C2S.value:
            head = self._heads.get(ex)
            if head is not None and (mismatches := check_request(body, head, float(event["t"]))):
                self._open[ex] = mismatches
            return
        code = as_dict(body.get("error")).get("code")
        for found in self._open.get(ex, []):
            if found.error_code is None and isinstance(code, int):
                found.error_code, found.error_at = code, float(event["t"])

    def _status(self, ex: int, event: Event) -> None:
        status = event.get("status")
        for found in self._open.get(ex, []):
            if isinstance(status, int):
                found.status, found.status_at = status, float(event["t"])

    def _close(self, ex: int) -> None:
        for found in self._open.pop(ex, []):
            if not _lenient(found) or _rejected(found):
                self._findings.header_body_mismatch(found)


class VersionWatch:
    """Names each protocol version string that is neither a published revision nor a pre-release of one:
    in ``initialize`` (request and result), in a request's ``_meta`` and in the ``MCP-Protocol-Version``
    header."""

    def __init__(self, findings: Findings) -> None:
        self._findings = findings

    def feed(self, event: Event) -> None:
        """An event that is not a message."""
        t = event.get("t")
        if event.get("kind") == Kind.HTTP_REQUEST and isinstance(t, int | float):
            self._saw(_header(as_dict(event.get("headers")), VERSION), float(t), "the MCP-Protocol-Version header")

    def message(self, m: Message) -> None:
        """A message of the conversation (a response carries its request's method)."""
        if m.rest is not None:
            return
        if m.kind != RESPONSE and m.method == "initialize":
            self._saw(m.params.get("protocolVersion"), m.t, "an initialize request")
        elif m.kind == RESPONSE and isinstance(m.result, dict) and "serverInfo" in m.result:
            self._saw(m.result.get("protocolVersion"), m.t, "an initialize result")
        if "_meta" in m.params:
            self._saw(as_dict(m.params["_meta"]).get(VERSION_META), m.t, "a request's _meta")

    def _saw(self, text: Any, t: float, where: str) -> None:
        if isinstance(text, str) and REDACTED not in text:
            version = parse_version(text)
            if version.kind in (VersionKind.DATED, VersionKind.UNKNOWN):
                self._findings.unknown_protocol_version(version, t, where)
