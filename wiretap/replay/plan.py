"""What a replayed server is told and tells: its options, where its messages go, and its plan for each live
request (the recorded exchange that answers it, or the miss that says why none does)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from wiretap.replay.matchers import DEFAULT_MATCH_ON, Request
from wiretap.replay.pace import RECORDED, Pace
from wiretap.replay.script import Exchange, Json, Step
from wiretap.replay.volatile import Volatile

MISS_CODE = -32099
"""The JSON-RPC error code of an answer to a request the recording does not hold."""


@dataclass(frozen=True)
class ReplayOptions:
    match_on: tuple[str, ...] = DEFAULT_MATCH_ON
    pace: Pace = RECORDED
    volatile: Volatile = field(default_factory=Volatile)
    replay_stderr: bool = True
    """Write the server's recorded stderr lines to our stderr, at their offsets."""


class Outlet(Protocol):
    """Where the player's messages go: stdout, an HTTP response's event stream, a GET stream."""

    async def send(self, step: Step, message: Json | None) -> None:
        """Send ``message`` (``step.message`` remapped), or ``step.raw`` when it is None."""


@dataclass
class Miss:
    at: float
    """Live seconds since the replay started."""
    request: Request
    closest: Exchange | None
    failed: list[str]

    def reason(self) -> str:
        if self.closest is None:
            return "the recording holds no request"
        return f"closest is {self.closest.describe()} ({'; '.join(self.failed)})"

    def message(self) -> str:
        return f"wiretap replay: no recorded request matches {self.request.describe()}; {self.reason()}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": round(self.at, 3),
            "method": self.request.method,
            "params": self.request.raw_params,
            "closest": None
            if self.closest is None
            else {
                "number": self.closest.number,
                "method": self.closest.request.method,
                "params": self.closest.request.raw_params,
                "t": round(self.closest.t, 3),
            },
            "differed": self.failed,
        }


@dataclass
class Plan:
    """How the player answers one live request."""

    message: Json
    arrived: float
    exchange: Exchange | None = None
    miss: Miss | None = None
    response: Json | None = None
    """A task poll's response, chosen by the client's clock (None: the exchange's own)."""
    replied: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the response went out (or never will)."""

    @property
    def event_stream(self) -> bool:
        """Whether the recorded answer came as an event stream (HTTP)."""
        exchange = self.exchange
        if exchange is None:
            return False
        if exchange.http is not None:
            return exchange.http.event_stream
        return len(exchange.steps) > 1


class ClientGone(Exception):
    """The live client closed its end: a question to it will never be answered."""
