"""Which timeline rows a person asked to see."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from wiretap.analysis.timeline import IN, OUT, Row


@dataclass(frozen=True)
class RowFilter:
    methods: tuple[str, ...] = ()
    """Glob patterns; a response matches through its request's method."""
    direction: str | None = None
    """"in" (to the server) or "out" (from it); lifecycle rows then drop out."""
    text: str | None = None
    since: float | None = None
    until: float | None = None

    def __call__(self, row: Row) -> bool:
        if self.since is not None and row.t < self.since:
            return False
        if self.until is not None and row.t > self.until:
            return False
        if self.direction and row.lane != {"in": IN, "out": OUT}[self.direction]:
            return False
        if self.methods and not (row.method and any(fnmatch.fnmatchcase(row.method, m) for m in self.methods)):
            return False
        return not self.text or self._mentions(row, self.text.lower())

    @staticmethod
    def _mentions(row: Row, needle: str) -> bool:
        return needle in f"{row.title} {row.summary}".lower() or needle in json.dumps(row.event).lower()


def select(rows: Iterable[Row], keep: RowFilter) -> Iterator[Row]:
    return (row for row in rows if keep(row))
