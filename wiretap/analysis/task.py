"""One long-running task as the messages show it: its polls (kept compact), its states, the cancels and
answers the client sent, and when it ended. ``analysis.tasks`` builds them; every figure reads them."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wiretap.analysis.states import State


class PollLog:
    """A task's polls, kept compact (16 bytes a poll) since a long recording may hold millions."""

    def __init__(self) -> None:
        self.times = array("d")
        self.answered = array("d")
        """When each poll was answered; NaN while it is not."""
        self.errors: dict[int, int | None] = {}
        """Which polls failed, with the error code if there was one (sparse)."""
        self.abandoned: dict[int, float] = {}
        """Polls the client stopped waiting for (it closed their HTTP exchange unanswered), by when (sparse)."""

    def __len__(self) -> int:
        return len(self.times)

    def add(self, t: float) -> None:
        self.times.append(t)
        self.answered.append(math.nan)

    def answer(self, asked_at: float, t: float, error_code: int | None, failed: bool) -> int | None:
        """Mark the poll made at ``asked_at`` answered; return its index."""
        for index in range(len(self.times) - 1, -1, -1):
            if self.times[index] == asked_at:
                self.answered[index] = t
                if failed:
                    self.errors[index] = error_code
                return index
        return None

    def abandon(self, asked_at: float, t: float) -> None:
        for index in range(len(self.times) - 1, -1, -1):
            if self.times[index] == asked_at:
                if math.isnan(self.answered[index]):
                    self.abandoned.setdefault(index, t)
                return

    def last_error(self) -> int | None:
        return self.errors.get(len(self.times) - 1) if self.times else None

    def trailing_failures(self) -> int:
        run = 0
        for index in range(len(self.times) - 1, -1, -1):
            if index not in self.errors:
                break
            run += 1
        return run

    def waits(self, end: float) -> Iterator[tuple[float, float | None]]:
        """(asked at, answered at or None) for every poll."""
        for asked, answered in zip(self.times, self.answered, strict=True):
            yield asked, None if math.isnan(answered) else answered


@dataclass
class Task:
    id: str
    protocol: str
    design: str
    created_at: float
    tool: str | None = None
    requested_poll_ms: int | None = None
    seen_first_by_poll: bool = False
    polls: PollLog = field(default_factory=PollLog)
    states: list[tuple[float, State]] = field(default_factory=list)
    cancels: list[tuple[float, str]] = field(default_factory=list)
    answers: list[tuple[float, str]] = field(default_factory=list)
    refused: list[tuple[float, str, int | None]] = field(default_factory=list)
    """Cancels and messages the server refused (with its error code): they changed nothing."""
    input_keys: dict[float, list[str]] = field(default_factory=dict)
    """The keys a task asked for (2026-07-28 ``inputRequests``), by the time its question opened."""
    create_request_id: Any = None
    terminal_at: float | None = None
    told_terminal_at: float | None = None
    """When an answer to one of the client's own requests showed the end (a notification may go unread)."""
    not_found_at: float | None = None
    cancel_answered_at: float | None = None
    """When the server answered a cancel without an error: the task is over even if no state says so."""

    @property
    def state(self) -> State | None:
        return self.states[-1][1] if self.states else None

    def live_at(self, t: float) -> bool:
        """Whether the task had begun and had not ended, nor been forgotten by the server, at ``t``."""
        ends = (self.terminal_at, self.not_found_at, self.cancel_answered_at)
        ended = min((x for x in ends if x is not None), default=None)
        return self.created_at <= t and (ended is None or ended > t)
