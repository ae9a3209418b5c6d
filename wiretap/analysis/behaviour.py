"""What a client does on the wire, as plain values: the handshake, its steps, the server's requests and
their answers, its HTTP habits and its shutdown. ``observe.Observer`` produces them; a behaviour profile
(``profile.py``) and the report's shutdown verdict read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Handshake:
    method: str | None
    """``initialize``, ``server/discover``, or None when the client went straight to work (stateless HTTP)."""
    protocol_version: str | None
    era: str
    client_name: str | None
    client_version: str | None
    capabilities: dict[str, Any] | None
    meta_keys: tuple[str, ...]
    """``_meta`` keys seen on the client's requests."""
    meta_on: str
    """On how many of the client's requests ``_meta`` came: every, some, none."""
    id_types: tuple[str, ...]
    key_order: tuple[str, ...]
    """Each distinct key order of the client's requests, as ``method,params,jsonrpc,id``."""
    attempts: tuple[str, ...] = ()
    """Handshake requests in order with their outcome, e.g. ``server/discover (error -32601)``."""


@dataclass(frozen=True)
class Step:
    """Messages in flight together: their order among themselves is no behaviour."""

    items: tuple[str, ...]
    repeated: bool = False

    def label(self) -> str:
        text = " | ".join(self.items) if len(self.items) > 1 else self.items[0]
        return f"{{{text}}}" if len(self.items) > 1 else text + (" (repeated)" if self.repeated else "")


@dataclass(frozen=True)
class ServerRequest:
    method: str
    answer: str
    """``result: accept``, ``error -32601``, ``retry with inputResponses: cancel``, ``unanswered``…"""


@dataclass(frozen=True)
class HttpTraits:
    session_id: bool
    get_stream: bool
    delete_on_exit: bool
    mcp_headers: tuple[str, ...]
    protocol_version_header: tuple[str, ...]
    """The values of ``mcp-protocol-version`` seen; empty when the client never sent it."""
    methods: tuple[str, ...]


@dataclass(frozen=True)
class ShutdownStep:
    what: str
    after: float
    """Seconds after the first step."""


@dataclass(frozen=True)
class Shutdown:
    steps: tuple[ShutdownStep, ...]
    server: str | None
    """How the server ended: ``exited with code 0``, ``was killed by SIGKILL``, or None (not seen)."""
    recording_complete: bool
    """The tap or proxy wrote its closing line (a relay killed outright cannot)."""
    orphaned: bool | None
    """The server outlived the client (known only from a session manifest)."""

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(step.what for step in self.steps)


@dataclass(frozen=True)
class Behaviour:
    """What the report's pass saw the client do, for a behaviour profile (``Report.behaviour``)."""

    handshake: Handshake
    sequence: tuple[Step, ...]
    server_requests: tuple[ServerRequest, ...]
    http: HttpTraits | None
    """Only for an HTTP recording."""
    shutdown: Shutdown
