"""What ``replay --as client`` found: each recorded response against the live one, and the exit status."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from wiretap.replay.script import Exchange, Json
from wiretap.wire.structural_diff import Difference, describe


class Unreachable(Exception):
    """The live server could not be reached (nothing listens, it does not answer) or started."""


UNREACHABLE_STATUS = 3
"""``replay --as client`` exits 3 when the live server cannot be reached or started (1: it differs)."""


@dataclass
class Compared:
    exchange: Exchange
    live: Json | None
    differences: list[Difference]
    timing: str | None = None
    """Why a difference was let go: a poll that caught the task in another recorded state."""
    refused: str | None = None
    """How the live server refused the request instead of answering it (``HTTP 404 Not Found``)."""

    @property
    def differs(self) -> bool:
        return self.live is None or bool(self.differences)

    def describe(self) -> str:
        head = f"#{self.exchange.number} {self.exchange.request.describe(80)}"
        if self.live is None:
            return f"{head}: no live response" + (f" ({self.refused})" if self.refused else "")
        return f"{head}: {describe(self.differences, limit=5)}"


@dataclass
class ClientResult:
    compared: list[Compared] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    """Requests from the live server that the recording could not answer."""
    recording: Path | None = None
    server_status: int | None = None
    unreachable: str | None = None
    """Why the live server could not be reached or started (nothing was compared)."""
    exited: str | None = None
    """How the live server exited while the recorded client still expected answers."""

    @property
    def differing(self) -> list[Compared]:
        return [c for c in self.compared if c.differs]

    @property
    def exit_status(self) -> int:
        if self.unreachable is not None:
            return UNREACHABLE_STATUS
        return 1 if self.differing or self.unexpected else 0

    def summary(self) -> dict[str, Any]:
        return {
            "responses": len(self.compared),
            "differing": [
                {
                    "number": c.exchange.number,
                    "method": c.exchange.method,
                    "live": c.live is not None,
                    "refused": c.refused,
                    "differences": [d.as_dict() for d in c.differences],
                }
                for c in self.differing
            ],
            "timing": [{"number": c.exchange.number, "why": c.timing} for c in self.compared if c.timing],
            "unexpected": self.unexpected,
            "recording": None if self.recording is None else str(self.recording),
            "server_status": self.server_status,
            "unreachable": self.unreachable,
            "exited": self.exited,
        }

    def report(self, out: IO[str]) -> None:
        for compared in self.differing:
            print(compared.describe(), file=out)
        for note in self.unexpected:
            print(note, file=out)
        if self.exited is not None:
            print(self.exited, file=out)
