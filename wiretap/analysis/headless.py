"""How a headless client answers a question it cannot show: with a cancel, at once."""

from __future__ import annotations

AT_ONCE = 0.25
"""A question cancelled within this many seconds of opening, with no poll between, was never shown to
anyone: no person reads a form and declines it that fast, and a headless client under load can take
longer than one tick of its event loop to answer with a cancel."""


def cancelled_at_once(opened: float, closed: float | None, cancelled_instead: bool, polls: list[float]) -> bool:
    """Whether the client answered the question with a cancel the moment it arrived (a headless client)."""
    return cancelled_instead and closed is not None and not polls and closed - opened <= AT_ONCE
