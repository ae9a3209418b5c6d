"""Which headers a proxy passes on, and how they are recorded."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from multidict import CIMultiDict

from wiretap.wire.redact import redact_header

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


def end_to_end(headers: Iterable[tuple[str, str]], connection: str | None) -> CIMultiDict[str]:
    """The headers that travel end to end: everything but hop-by-hop ones and those named in Connection."""
    named = {token.strip().lower() for token in (connection or "").split(",") if token.strip()}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in headers:
        lower = name.lower()
        if lower not in HOP_BY_HOP and lower not in named:
            out.add(name, value)
    return out


def recorded_headers(headers: Iterable[tuple[str, str]], *, redact: bool) -> dict[str, Any]:
    """Headers as a jq-friendly dict with lower-case names; a repeated header becomes a list."""
    out: dict[str, Any] = {}
    for name, value in headers:
        lower = name.lower()
        _add(out, lower, redact_header(lower, value) if redact else value)
    return out


def _add(out: dict[str, Any], lower: str, value: str) -> None:
    """A header into ``out``; a repeated one becomes a list."""
    if lower in out:
        previous = out[lower]
        out[lower] = [*previous, value] if isinstance(previous, list) else [previous, value]
    else:
        out[lower] = value


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class HeaderRecorder:
    """``recorded_headers`` for raw (bytes) headers, remembering each header it redacted: a proxy sees
    the same few headers on every request, and redaction is a pure function of name and value."""

    def __init__(self, *, redact: bool, size: int = 4096) -> None:
        self._redact = redact
        self._size = size
        self._known: dict[tuple[bytes, bytes], tuple[str, str, str]] = {}

    def _shown(self, pair: tuple[bytes, bytes]) -> tuple[str, str, str]:
        """(lower-case name, value as recorded, ``"name":"value"`` as JSON)."""
        shown = self._known.get(pair)
        if shown is None:
            lower, value = pair[0].decode("latin-1").lower(), pair[1].decode("latin-1")
            value = redact_header(lower, value) if self._redact else value
            shown = (lower, value, f"{_JSON.encode(lower)}:{_JSON.encode(value)}")
            if len(self._known) >= self._size:
                self._known.clear()
            self._known[pair] = shown
        return shown

    def json(self, headers: list[tuple[bytes, bytes]]) -> str:
        """``json.dumps(self(headers))`` (compact), from the JSON of each header, remembered too."""
        shown = [self._shown(pair) for pair in headers]
        if len({lower for lower, _, _ in shown}) < len(shown):  # a repeated header: a list, the long way
            return _JSON.encode(self(headers))
        return "{" + ",".join(text for _, _, text in shown) + "}"

    def __call__(self, headers: Iterable[tuple[bytes, bytes]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for pair in headers:
            lower, value, _ = self._shown(pair)
            _add(out, lower, value)
        return out
