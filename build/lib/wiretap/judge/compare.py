"""``wiretap compare``: many clients' behaviour profiles side by side, a row per behaviour."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from wiretap.analysis.observe import META
from wiretap.analysis.profile import Profile
from wiretap.judge.profiles import Source

NONE = "—"


@dataclass(frozen=True)
class Row:
    behaviour: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    clients: tuple[str, ...]
    sources: tuple[str, ...]
    rows: tuple[Row, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "clients": [{"client": c, "source": s} for c, s in zip(self.clients, self.sources, strict=True)],
            "rows": [{"behaviour": r.behaviour, "values": list(r.values)} for r in self.rows],
        }


def _join(values: list[str]) -> str:
    unique = list(dict.fromkeys(v for v in values if v and v != NONE))
    return "; ".join(unique) if unique else NONE


def _capabilities(p: Profile) -> str:
    caps = p.handshake.capabilities
    return NONE if caps is None else json.dumps(caps, sort_keys=True, separators=(",", ":"))


def _meta(p: Profile) -> str:
    keys = ", ".join(key.removeprefix(META) for key in p.handshake.meta_keys)
    return f"{p.handshake.meta_on}: {keys}" if keys else NONE


def _answers(prefix: str) -> Callable[[Profile], str]:
    def row(p: Profile) -> str:
        return _join([r.answer for r in p.server_requests if r.method.startswith(prefix)]) or NONE

    return row


def _cadence(p: Profile) -> str:
    shown = []
    for task in p.tasks:
        asked = f"asked {task.requested_poll_ms} ms" if task.requested_poll_ms is not None else "asked nothing"
        every = f"{task.settled_interval:.2f} s" if task.settled_interval is not None else "not polled"
        shown.append(f"{every} ({asked})")
    return _join(shown)


def _cancel(p: Profile) -> str:
    return NONE if p.cancel_on_exit is None else "yes" if p.cancel_on_exit else "no"


def _shutdown(p: Profile) -> str:
    return ", ".join(f"{s.what} +{s.after * 1000:.0f} ms" for s in p.shutdown.steps) or NONE


def _orphaned(p: Profile) -> str:
    return NONE if p.shutdown.orphaned is None else "yes" if p.shutdown.orphaned else "no"


def _yes(value: bool) -> str:
    return "yes" if value else "no"


STDIO_ROWS: list[tuple[str, Callable[[Profile], str]]] = [
    ("handshake", lambda p: ", ".join(p.handshake.attempts) or "none (straight to work)"),
    ("protocol version", lambda p: p.handshake.protocol_version or NONE),
    ("era", lambda p: p.handshake.era),
    ("declared capabilities", _capabilities),
    ("_meta keys", _meta),
    ("id types", lambda p: ", ".join(p.handshake.id_types) or NONE),
    ("key order", lambda p: " | ".join(p.handshake.key_order) or NONE),
    ("answers elicitation", _answers("elicitation/")),
    ("answers roots/list", _answers("roots/")),
    ("answers sampling", _answers("sampling/")),
    ("poll cadence vs requested", _cadence),
    ("cancel on exit", _cancel),
]
EXIT_ROWS: list[tuple[str, Callable[[Profile], str]]] = [
    ("shutdown of a stdio server", _shutdown),
    ("the server ended", lambda p: p.shutdown.server or NONE),
    ("server orphaned", _orphaned),
    ("recording complete", lambda p: _yes(p.shutdown.recording_complete)),
]
HTTP_ROWS: list[tuple[str, Callable[[Profile], str]]] = [
    (
        "HTTP: mcp-protocol-version header",
        lambda p: ", ".join(p.http.protocol_version_header) or "not sent" if p.http else NONE,
    ),
    ("HTTP: mcp-* headers", lambda p: ", ".join(p.http.mcp_headers) or "none" if p.http else NONE),
    ("HTTP: session id", lambda p: _yes(p.http.session_id) if p.http else NONE),
    ("HTTP: GET stream", lambda p: _yes(p.http.get_stream) if p.http else NONE),
    ("HTTP: DELETE on exit", lambda p: _yes(p.http.delete_on_exit) if p.http else NONE),
    ("HTTP: shutdown", _shutdown),
]


def _cell(source: Source, transports: tuple[str, ...], measure: Callable[[Profile], str]) -> str:
    chosen = [p for p in source.profiles.values() if p.transport in transports]
    return _join([measure(p) for p in chosen])


def compare(sources: list[Source]) -> Comparison:
    rows = [Row(name, tuple(_cell(s, ("stdio", "http", "sse"), f) for s in sources)) for name, f in STDIO_ROWS]
    rows += [Row(name, tuple(_cell(s, ("stdio",), f) for s in sources)) for name, f in EXIT_ROWS]
    rows += [Row(name, tuple(_cell(s, ("http", "sse"), f) for s in sources)) for name, f in HTTP_ROWS]
    return Comparison(tuple(s.client for s in sources), tuple(str(s.path) for s in sources), tuple(rows))
