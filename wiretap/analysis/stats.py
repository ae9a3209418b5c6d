"""Distributions of times that stay small however long the recording: exact up to a point, then
log-spaced buckets (0.5 % relative error) so that memory does not grow with the recording."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

EXACT_LIMIT = 10_000
_RATIO = math.log(1.01)


@dataclass(frozen=True)
class Summary:
    count: int
    min: float
    median: float
    p95: float
    max: float

    def as_dict(self, scale: float = 1.0, digits: int = 3) -> dict[str, float | int]:
        return {
            "count": self.count,
            "min": round(self.min * scale, digits),
            "median": round(self.median * scale, digits),
            "p95": round(self.p95 * scale, digits),
            "max": round(self.max * scale, digits),
        }


def _key(value: float) -> int:
    return -1_000_000 if value <= 0 else math.floor(math.log(value) / _RATIO)


class Distribution:
    def __init__(self) -> None:
        self._exact: array[float] | None = array("d")
        self._buckets: dict[int, int] = {}
        self._last: tuple[float, int] = (math.nan, 0)
        self.count = 0
        self.min = math.inf
        self.max = -math.inf

    @classmethod
    def of(cls, values: Iterable[float]) -> Distribution:
        distribution = cls()
        distribution.extend(values)
        return distribution

    def extend(self, values: Iterable[float]) -> None:
        """``add`` for each value; while they all fit the exact part, without a call per value."""
        values = values if isinstance(values, list) else list(values)
        if not values:
            return
        self.count += len(values)
        self.min = min(self.min, min(values))
        self.max = max(self.max, max(values))
        if self._exact is not None and len(self._exact) <= EXACT_LIMIT - len(values):
            self._exact.extend(values)
            return
        if self._exact is not None:  # past the exact part: every value so far goes to its bucket
            values = [*self._exact, *values]
            self._exact = None
        buckets = self._buckets
        for value, times in Counter(values).items():  # (a cadence repeats its values: one logarithm each)
            key = _key(value)
            buckets[key] = buckets.get(key, 0) + times

    def add(self, value: float) -> None:
        self.count += 1
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        if self._exact is not None:
            self._exact.append(value)
            if len(self._exact) > EXACT_LIMIT:
                for kept in self._exact:
                    self._bucket(kept)
                self._exact = None
        else:
            self._bucket(value)

    def _bucket(self, value: float) -> None:
        if value == self._last[0]:  # a steady cadence repeats its value: no logarithm for it again
            key = self._last[1]
        else:
            key = _key(value)
            self._last = (value, key)
        self._buckets[key] = self._buckets.get(key, 0) + 1

    def quantile(self, q: float) -> float:
        """Nearest-rank quantile (the median of 1, 2, 3, 4 is 2.5: averaged for an even count at 0.5)."""
        if self.count == 0:
            return math.nan
        if self._exact is not None:
            ordered = sorted(self._exact)
            if q == 0.5 and len(ordered) % 2 == 0:
                return (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
            return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
        rank, seen = q * self.count, 0
        for key in sorted(self._buckets):
            seen += self._buckets[key]
            if seen >= rank:
                return 0.0 if key == -1_000_000 else min(self.max, max(self.min, math.exp((key + 0.5) * _RATIO)))
        return self.max

    def summary(self) -> Summary | None:
        if self.count == 0:
            return None
        return Summary(self.count, self.min, self.quantile(0.5), self.quantile(0.95), self.max)


def median(values: Iterable[float]) -> float | None:
    """The median every figure of a report uses (``Distribution``'s); None for no values."""
    distribution = Distribution.of(values)
    return distribution.quantile(0.5) if distribution.count else None
