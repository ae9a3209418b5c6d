"""The recorded requests by what the matchers compare, so a live request finds its match in constant
time however long the recording is.

Each built-in matcher has a key that two requests share exactly when the matcher passes: the method,
the path, and for parameters their canonical JSON (keys sorted, ``1.0`` written as ``1``: the matchers
hold 1 and 1.0 equal, and true and 1 apart). A ``match_on`` naming a registered matcher of one's own has
no key: the index then falls back to asking every matcher of every recorded request, as vcrpy does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from wiretap.replay.matchers import Request, failures
from wiretap.replay.script import Exchange


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _canon(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canon(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def canonical(value: Any) -> str:
    return json.dumps(_canon(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _name(request: Request) -> str:
    return canonical(request.params.get("name", request.params.get("uri")))


KEYS: dict[str, Callable[[Request], str]] = {
    "method": lambda request: request.method,
    "params": lambda request: canonical(request.params),
    "name": _name,
    "arguments": lambda request: canonical(request.params.get("arguments")),
    "id": lambda request: f"{type(request.id).__name__}:{canonical(request.id)}",
    "path": lambda request: str(request.path),
}


class Index:
    def __init__(self, exchanges: Sequence[Exchange], match_on: Sequence[str]) -> None:
        self.exchanges = exchanges
        self.match_on = tuple(match_on)
        self.buckets: dict[tuple[str, ...], list[Exchange]] | None = None
        self._unused: dict[tuple[str, ...], int] = {}
        """Per bucket: where its first exchange not used yet is (exchanges are used in order)."""
        if all(name in KEYS for name in self.match_on):
            try:
                buckets: dict[tuple[str, ...], list[Exchange]] = {}
                for exchange in exchanges:
                    buckets.setdefault(self._key(exchange.request), []).append(exchange)
                self.buckets = buckets
            except (RecursionError, TypeError, ValueError):  # a value too deep or not JSON: ask the matchers
                self.buckets = None

    def _key(self, request: Request) -> tuple[str, ...]:
        return tuple(KEYS[name](request) for name in self.match_on)

    def find(self, live: Request) -> tuple[Exchange, bool] | None:
        """The recorded exchange that answers ``live`` (the first not used yet, else the last of those
        that match) and whether it was used before; None when none matches."""
        if self.buckets is None:
            return self._scan(live)
        try:
            key = self._key(live)
        except (RecursionError, TypeError, ValueError):
            return self._scan(live)
        bucket = self.buckets.get(key)
        if not bucket:
            return None
        at = self._unused.get(key, 0)
        while at < len(bucket) and bucket[at].used:
            at += 1
        self._unused[key] = at
        return (bucket[at], False) if at < len(bucket) else (bucket[-1], True)

    def _scan(self, live: Request) -> tuple[Exchange, bool] | None:
        matching = [e for e in self.exchanges if not failures(e.request, live, self.match_on)]
        if not matching:
            return None
        unused = [e for e in matching if e.used == 0]
        return (unused[0], False) if unused else (matching[-1], True)
