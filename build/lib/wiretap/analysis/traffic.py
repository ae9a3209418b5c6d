"""Message counts per direction and latency per method."""

from __future__ import annotations

from typing import Any

from wiretap.analysis.conversation import RESPONSE, Message, OtherBody
from wiretap.analysis.stats import Distribution
from wiretap.recording.events import Event, Kind


class Traffic:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {"c2s": 0, "s2c": 0}
        self.raw = 0
        self.latency: dict[str, Distribution] = {}
        self.errors: dict[str, int] = {}
        self.other: dict[str, int] = {}
        """Bodies that are not JSON-RPC (nor A2A REST) messages, by what they are: never counted as messages."""

    def feed_event(self, event: Event) -> None:
        if event.get("kind") == Kind.MESSAGE and "raw" in event:
            self.raw += 1

    def feed_other(self, body: OtherBody) -> None:
        self.other[body.what] = self.other.get(body.what, 0) + 1

    def feed(self, m: Message) -> None:
        self.counts[m.dir] = self.counts.get(m.dir, 0) + 1
        if m.kind != RESPONSE or m.request is None or m.latency is None or not m.method:
            return
        if m.request.answers > 1:  # a stream's later events are not the request's latency
            return
        self.latency.setdefault(m.method, Distribution()).add(m.latency)
        if m.error is not None:
            self.errors[m.method] = self.errors.get(m.method, 0) + 1

    def table(self) -> list[dict[str, Any]]:
        rows = []
        for method, distribution in sorted(self.latency.items(), key=lambda kv: (-kv[1].count, kv[0])):
            summary = distribution.summary()
            assert summary is not None
            rows.append(
                {
                    "method": method,
                    "count": summary.count,
                    "errors": self.errors.get(method, 0),
                    "p50_ms": round(summary.median * 1000, 1),
                    "p95_ms": round(summary.p95 * 1000, 1),
                    "max_ms": round(summary.max * 1000, 1),
                }
            )
        return rows
