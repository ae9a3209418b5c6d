"""Which recorded request a live one stands for: vcrpy's ``match_on``, for JSON-RPC.

A matcher takes the recorded request and the live one and returns nothing when they match, or raises
``AssertionError`` saying what differed. A live request matches a recorded one when every matcher in
``match_on`` passes; on a miss, the closest recorded request is the one that passes the most of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wiretap.replay.volatile import Volatile
from wiretap.wire.json_values import as_dict
from wiretap.wire.structural_diff import describe, differences


@dataclass(frozen=True, slots=True)
class Request:
    """A request as the matchers see it: parsed, with its volatile parts already taken out of ``params``."""

    method: str
    params: dict[str, Any]
    """Normalized (volatile.Volatile.normalize)."""
    id: Any = None
    path: str | None = None
    """The HTTP path it was posted to (None on stdio)."""
    raw_params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, message: dict[str, Any], volatile: Volatile, path: str | None = None) -> Request:
        params = message.get("params")
        params = as_dict(params)
        return cls(str(message.get("method")), volatile.normalize(params), message.get("id"), path, params)

    def describe(self, limit: int = 120) -> str:
        text = json.dumps(self.raw_params, ensure_ascii=False, separators=(",", ":"))
        text = text if len(text) <= limit else text[: limit - 1] + "…"
        return f"{self.method} {text}" if self.raw_params else self.method


Matcher = Callable[[Request, Request], None]
"""Raises AssertionError saying what differed (explicitly: ``assert`` vanishes under ``python -O``)."""


def method(recorded: Request, live: Request) -> None:
    if not (recorded.method == live.method):
        raise AssertionError(f"method: recorded {recorded.method}, live {live.method}")


def params(recorded: Request, live: Request) -> None:
    found = differences(recorded.params, live.params, "params")
    if found:
        raise AssertionError(describe(found))


def name(recorded: Request, live: Request) -> None:
    """The tool, prompt or resource asked for: ``params.name`` or ``params.uri``."""
    a = recorded.params.get("name", recorded.params.get("uri"))
    b = live.params.get("name", live.params.get("uri"))
    if not (a == b):
        raise AssertionError(f"name: recorded {a!r}, live {b!r}")


def arguments(recorded: Request, live: Request) -> None:
    found = differences(recorded.params.get("arguments"), live.params.get("arguments"), "params.arguments")
    if found:
        raise AssertionError(describe(found))


def request_id(recorded: Request, live: Request) -> None:
    if not (recorded.id == live.id):
        raise AssertionError(f"id: recorded {recorded.id!r}, live {live.id!r}")


def path(recorded: Request, live: Request) -> None:
    if not (recorded.path == live.path):
        raise AssertionError(f"path: recorded {recorded.path}, live {live.path}")


MATCHERS: dict[str, Matcher] = {
    "method": method,
    "params": params,
    "name": name,
    "arguments": arguments,
    "id": request_id,
    "path": path,
}
DEFAULT_MATCH_ON = ("method", "params")


def register_matcher(matcher_name: str, matcher: Matcher) -> None:
    """Add a matcher that ``--match-on`` (and ``match_on=``) can then name."""
    MATCHERS[matcher_name] = matcher


def parse_match_on(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"method,params"`` (or a list of names) checked against the registered matchers."""
    names = tuple(n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip())
    unknown = [n for n in names if n not in MATCHERS]
    if unknown or not names:
        raise ValueError(
            f"unknown matcher(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(sorted(MATCHERS))}"
        )
    return names


def failures(recorded: Request, live: Request, match_on: Sequence[str]) -> list[str]:
    """Why ``live`` does not match ``recorded``: one message per failing matcher (empty: it matches)."""
    out = []
    for matcher_name in match_on:
        try:
            MATCHERS[matcher_name](recorded, live)
        except AssertionError as failure:
            out.append(str(failure) or matcher_name)
    return out


@dataclass(frozen=True)
class Closest:
    index: int
    """Which of the candidates."""
    failed: list[str]


def closest(candidates: Sequence[Request], live: Request, match_on: Sequence[str]) -> Closest | None:
    """The candidate that passes the most matchers; on a tie, the one whose params differ least
    (vcrpy's ``find_requests_with_most_matches``)."""
    best: tuple[tuple[int, int, int], Closest] | None = None
    for index, candidate in enumerate(candidates):
        failed = failures(candidate, live, match_on)
        same_method = 0 if candidate.method == live.method else 1
        score = (len(failed), same_method, len(differences(candidate.params, live.params)))
        if best is None or score < best[0]:
            best = (score, Closest(index, failed))
    return None if best is None else best[1]
