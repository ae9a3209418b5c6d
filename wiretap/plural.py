"""Counted nouns as people write them: 1 task, 2 tasks, 1 poll, no finding."""

from __future__ import annotations

_IRREGULAR = {"was": "were", "is": "are", "this": "these"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 task``, ``3 tasks``; ``many`` for an irregular plural."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {many or _IRREGULAR.get(noun) or _plural_of(noun)}"


def _plural_of(noun: str) -> str:
    head, _, tail = noun.partition(" ")
    if tail:  # "poll inside" → "polls inside"
        return f"{_plural_of(head)} {tail}"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"
