"""How a headless client answers a question it cannot show: with a cancel, at once."""

from __future__ import annotations

AT_ONCE = 1.0
"""A question cancelled within this many seconds of opening, with no poll between, was never shown to
anyone: no person reads a form and declines it within a second, and a headless client on a loaded machine
can take hundreds of milliseconds to answer with a cancel."""


def cancelled_at_once(opened: float, closed: float | None, cancelled_instead: bool, polls: list[float]) -> bool:
    """Whether the client answered the question with a cancel the moment it arrived (a headless client)."""
    return cancelled_instead and closed is not None and not polls and closed - opened <= AT_ONCE
