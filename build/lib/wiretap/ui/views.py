"""The rows a filter keeps, kept up to date incrementally as the source grows."""

from __future__ import annotations

import fnmatch
import re
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from wiretap.ui.index import LANES
from wiretap.ui.source import Source

MAX_VIEWS = 8
"""Filters remembered per source (least recently used dropped)."""
SCAN_STEP = 20_000
"""Rows matched per step before the loop gets a turn."""


@dataclass(frozen=True)
class Query:
    """The HTML report's filters: words, a method glob, a direction, errors only, a server."""

    text: str = ""
    method: str = ""
    lane: str = ""
    errors: bool = False
    server: int | None = None

    @classmethod
    def of(cls, params: Mapping[str, str]) -> Query:
        server = params.get("server", "")
        return cls(
            text=params.get("q", "").strip().lower()[:200],
            method=params.get("m", "").strip()[:200],
            lane=params.get("dir", "") if params.get("dir", "") in LANES else "",
            errors=params.get("err", "") in ("1", "true"),
            server=int(server) if server.isdigit() else None,
        )

    @property
    def empty(self) -> bool:
        return self == Query()


class View:
    def __init__(self, source: Source, query: Query) -> None:
        self.source = source
        self.query = query
        self.positions = array("q")
        self.scanned = 0
        self._words = [w.encode() for w in query.text.split()]
        self._glob = re.compile(fnmatch.translate(query.method)) if query.method else None
        self._lane = LANES.index(query.lane) if query.lane else -1

    def __len__(self) -> int:
        return len(self.source.order) if self.query.empty else len(self.positions)

    def catch_up(self, limit: int = SCAN_STEP) -> bool:
        """Match up to ``limit`` more rows; true when there are more to match."""
        if self.query.empty:
            return False
        end = min(len(self.source.order), self.scanned + limit)
        for position in range(self.scanned, end):
            if self._keeps(position):
                self.positions.append(position)
        self.scanned = end
        return end < len(self.source.order)

    def _keeps(self, position: int) -> bool:
        recording, n = self.source.at(position)
        q = self.query
        if q.server is not None and recording.server != q.server:
            return False
        if self._lane >= 0 and recording.lanes[n] != self._lane:
            return False
        if q.errors and not recording.errors[n]:
            return False
        method = recording.method_names[recording.methods[n]] if recording.methods[n] >= 0 else None
        if self._glob is not None and (method is None or not self._glob.match(method)):
            return False
        if self._words:
            # A response mentions its request's method, as its row does.
            hay = recording.line(n).lower() + (method or "").lower().encode()
            return all(w in hay for w in self._words)
        return True

    def window(self, start: int, count: int) -> range | list[int]:
        if self.query.empty:
            return range(max(0, start), min(len(self.source.order), start + count))
        return list(self.positions[max(0, start) : start + count])

    def index_of(self, position: int) -> int:
        if self.query.empty:
            return position if 0 <= position < len(self.source.order) else -1
        at = bisect_left(self.positions, position)
        return at if at < len(self.positions) and self.positions[at] == position else -1


class Views:
    def __init__(self, source: Source) -> None:
        self.source = source
        self._views: OrderedDict[Query, View] = OrderedDict()

    def get(self, query: Query) -> View:
        view = self._views.pop(query, None) or View(self.source, query)
        self._views[query] = view
        while len(self._views) > MAX_VIEWS:
            self._views.popitem(last=False)
        return view
