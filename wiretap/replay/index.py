"""The recorded requests by what the matchers compare, so a live request finds its match, or on a miss
its closest recorded request, in time independent of how long the recording is.

Requests are filed under a hash of their matchers' keys (keys.py); a request found that way is still
checked with the matchers (two keys may share a hash). A ``match_on`` naming a registered matcher of
one's own has no key: the index then falls back to asking every matcher of every recorded request, as
vcrpy does.

On a miss, the closest recorded request is looked for among at most ``CLOSEST_CANDIDATES`` of them:
half of them asking for the same tool, prompt or resource (``params.name`` or ``params.uri``), the rest
with the same method; in each group the first not used yet and those after it (a client that strays
from its recorded script mostly strays at the request it is at), then the ones just before it; when the
recording holds fewer requests with that method, the first request of each other method.
"""

from __future__ import annotations

from collections.abc import Sequence

from wiretap.replay.keys import DEFAULT, KEYS, key, name_key
from wiretap.replay.matchers import Request, closest, failures
from wiretap.replay.script import Exchange

CLOSEST_CANDIDATES = 40
"""How many recorded requests a miss compares with the live one, at most."""

Bucket = Exchange | list[Exchange]
"""One exchange (most keys have one), or those sharing a key in recording order."""


class Index:
    def __init__(
        self, exchanges: Sequence[Exchange], match_on: Sequence[str], named: dict[int, list[Exchange]] | None = None
    ) -> None:
        """``named``: the exchanges by ``keys.name_key`` (Script.named), to find a miss's closest request
        among those asking for the same tool, prompt or resource."""
        self.exchanges = exchanges
        self.named = named or {}
        self.match_on = tuple(match_on)
        self.compared = 0
        """How many recorded requests were compared with live ones (matched, or measured for a miss)."""
        self.buckets: dict[int, Bucket] | None = None
        self._unused: dict[int, int] = {}
        """Per bucket of several: where its first exchange not used yet is (exchanges are used in order)."""
        self.by_method: dict[str, list[Exchange]] = {}
        self._unused_in: dict[int, int] = {}
        """Per group of candidates (by id of its list): where its first exchange not used yet is."""
        for exchange in exchanges:
            self.by_method.setdefault(exchange.method, []).append(exchange)
        if all(name in KEYS for name in self.match_on):
            try:
                self.buckets = self._file(exchanges)
            except (RecursionError, TypeError, ValueError):  # a value too deep or not JSON: ask the matchers
                self.buckets = None

    def _file(self, exchanges: Sequence[Exchange]) -> dict[int, Bucket]:
        buckets: dict[int, Bucket] = {}
        for exchange in exchanges:
            filed = exchange.key if self.match_on == DEFAULT else key(exchange.request, self.match_on)
            if filed is None:
                raise ValueError("no key")
            bucket = buckets.setdefault(filed, exchange)
            if bucket is not exchange:
                if isinstance(bucket, list):
                    bucket.append(exchange)
                else:
                    buckets[filed] = [bucket, exchange]
        return buckets

    def find(self, live: Request) -> tuple[Exchange, bool] | None:
        """The recorded exchange that answers ``live`` (the first not used yet, else the last of those
        that match) and whether it was used before; None when none matches."""
        if self.buckets is None:
            return self._scan(live)
        try:
            filed = key(live, self.match_on)
        except (RecursionError, TypeError, ValueError):
            return self._scan(live)
        bucket = self.buckets.get(filed)
        if bucket is None:
            return None
        if isinstance(bucket, Exchange):
            return (bucket, bucket.used > 0) if self._matches(bucket, live) else None
        at = self._unused.get(filed, 0)
        while at < len(bucket) and bucket[at].used:
            at += 1
        self._unused[filed] = at
        found = (bucket[at], False) if at < len(bucket) else (bucket[-1], True)
        if self._matches(found[0], live):
            return found
        return self._first_unused([e for e in bucket if self._matches(e, live)])  # hashes that collided

    def _matches(self, exchange: Exchange, live: Request) -> bool:
        self.compared += 1
        return not failures(exchange.request, live, self.match_on)

    def _scan(self, live: Request) -> tuple[Exchange, bool] | None:
        return self._first_unused([e for e in self.exchanges if self._matches(e, live)])

    @staticmethod
    def _first_unused(matching: list[Exchange]) -> tuple[Exchange, bool] | None:
        if not matching:
            return None
        unused = [e for e in matching if e.used == 0]
        return (unused[0], False) if unused else (matching[-1], True)

    def closest(self, live: Request) -> tuple[Exchange, list[str]] | None:
        """For a miss: the closest recorded request (matchers.closest, among the candidates) and what
        differed from it; None when the recording holds no request."""
        candidates = self.candidates(live)
        self.compared += len(candidates)
        near = closest([e.request for e in candidates], live, self.match_on)
        return None if near is None else (candidates[near.index], near.failed)

    def candidates(self, live: Request) -> list[Exchange]:
        """At most CLOSEST_CANDIDATES recorded exchanges, in recording order (see the module's doc)."""
        if len(self.exchanges) <= CLOSEST_CANDIDATES:
            return list(self.exchanges)
        named = name_key(live.method, live.params)
        picked: dict[int, Exchange] = {}
        if named is not None:
            self._around_unused(self.named.get(named, []), CLOSEST_CANDIDATES // 2, picked)
        self._around_unused(self.by_method.get(live.method, []), CLOSEST_CANDIDATES, picked)
        for method, group in self.by_method.items():
            if len(picked) >= CLOSEST_CANDIDATES:
                break
            if method != live.method:
                picked[group[0].number] = group[0]
        return [picked[number] for number in sorted(picked)]

    def _around_unused(self, group: list[Exchange], most: int, picked: dict[int, Exchange]) -> None:
        """Add to ``picked`` (up to ``most`` in all) the group's first exchange not used yet and those after
        it, then those just before it."""
        if not group:
            return
        at = self._unused_in.get(id(group), 0)
        while at < len(group) and group[at].used:
            at += 1
        self._unused_in[id(group)] = at
        for exchange in [*group[at : at + most], *reversed(group[max(0, at - most) : at])]:
            if len(picked) >= most:
                break
            picked.setdefault(exchange.number, exchange)
