"""The MCP duration metrics from wiretap's spans: ``mcp.{client,server}.operation.duration`` and
``mcp.{client,server}.session.duration``, histograms in seconds with the conventions' bucket advice, as an
OTLP ``ExportMetricsServiceRequest`` (OTLP/JSON, encoded like the spans).

wiretap measures on the wire between the two sides, so the client's and the server's durations are the
same observation: the time from the request's bytes to the response's bytes passing by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wiretap.otel.otlp_json import SCOPE, key_values
from wiretap.otel.spans import AttributeValue, Span

BOUNDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
OPERATION = ("mcp.client.operation.duration", "mcp.server.operation.duration")
SESSION = ("mcp.client.session.duration", "mcp.server.session.duration")
DESCRIPTIONS = {
    "mcp.client.operation.duration": "The duration of the MCP request or notification as observed on the sender.",
    "mcp.server.operation.duration": "MCP request processing duration.",
    "mcp.client.session.duration": "The duration of the MCP session as observed on the MCP client.",
    "mcp.server.session.duration": "The duration of the MCP session as observed on the MCP server.",
}
OPERATION_KEYS = (
    "mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name", "rpc.response.status_code",
    "gen_ai.operation.name", "jsonrpc.protocol.version", "mcp.protocol.version", "network.protocol.name",
    "network.protocol.version", "network.transport", "server.address", "server.port",
)  # fmt: skip
SESSION_KEYS = (
    "jsonrpc.protocol.version", "mcp.protocol.version", "network.protocol.name", "network.protocol.version",
    "network.transport", "server.address", "server.port",
)  # fmt: skip
SERVER_ONLY_DROPPED = frozenset({"server.address", "server.port"})
"""The server-side metrics' attribute lists leave these out."""
CUMULATIVE = 2


@dataclass
class Histogram:
    start_ns: int
    end_ns: int
    values: list[float] = field(default_factory=list)

    def add(self, seconds: float, start_ns: int, end_ns: int) -> None:
        self.values.append(seconds)
        self.start_ns = min(self.start_ns, start_ns)
        self.end_ns = max(self.end_ns, end_ns)

    def bucket_counts(self) -> list[int]:
        counts = [0] * (len(BOUNDS) + 1)
        for value in self.values:
            counts[next((i for i, bound in enumerate(BOUNDS) if value <= bound), len(BOUNDS))] += 1
        return counts


Key = tuple[str, tuple[tuple[str, AttributeValue], ...]]


class Durations:
    """Histograms keyed by metric and attribute set, fed with finished spans."""

    def __init__(self) -> None:
        self.histograms: dict[Key, Histogram] = {}

    def add_spans(self, spans: Iterable[Span]) -> None:
        for span in spans:
            self.add_span(span)

    def add_span(self, span: Span) -> None:
        attributes = span.attributes
        if "wiretap.recording.name" in attributes and attributes.get("wiretap.protocol") == "mcp":
            self._observe(SESSION, span, SESSION_KEYS)
        elif (
            "mcp.method.name" in attributes
            and "jsonrpc.request.id" in attributes
            and not attributes.get("wiretap.unanswered")
        ):
            self._observe(OPERATION, span, OPERATION_KEYS)

    def _observe(self, names: tuple[str, str], span: Span, keys: tuple[str, ...]) -> None:
        seconds = max(0, span.end_ns - span.start_ns) / 1e9
        for name in names:
            dropped = SERVER_ONLY_DROPPED if name.startswith("mcp.server.") else frozenset()
            chosen = tuple((k, span.attributes[k]) for k in keys if k in span.attributes and k not in dropped)
            histogram = self.histograms.setdefault((name, chosen), Histogram(span.start_ns, span.end_ns))
            histogram.add(seconds, span.start_ns, span.end_ns)

    def export_request(self, resource: Mapping[str, AttributeValue]) -> dict[str, Any]:
        """One ``ExportMetricsServiceRequest``: a histogram per metric, a data point per attribute set."""
        points: dict[str, list[dict[str, Any]]] = {}
        for (name, attributes), histogram in sorted(self.histograms.items(), key=lambda item: item[0]):
            points.setdefault(name, []).append(_point(dict(attributes), histogram))
        metrics = [
            {
                "name": name, "description": DESCRIPTIONS[name], "unit": "s",
                "histogram": {"dataPoints": data, "aggregationTemporality": CUMULATIVE},
            }
            for name, data in points.items()
        ]  # fmt: skip
        scope = {"scope": SCOPE, "metrics": metrics}
        return {"resourceMetrics": [{"resource": {"attributes": key_values(dict(resource))}, "scopeMetrics": [scope]}]}


def _point(attributes: dict[str, AttributeValue], histogram: Histogram) -> dict[str, Any]:
    return {
        "attributes": key_values(attributes),
        "startTimeUnixNano": str(histogram.start_ns),
        "timeUnixNano": str(histogram.end_ns),
        "count": str(len(histogram.values)),
        "sum": sum(histogram.values),
        "bucketCounts": [str(c) for c in histogram.bucket_counts()],
        "explicitBounds": list(BOUNDS),
        "min": min(histogram.values),
        "max": max(histogram.values),
    }
