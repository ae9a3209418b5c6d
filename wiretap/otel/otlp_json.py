"""Spans as OTLP/JSON: an ``ExportTraceServiceRequest`` in protobuf's JSON mapping, one per line in
the file the Collector's file exporter writes (ids as hex, 64-bit integers and times as strings)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from wiretap import __version__
from wiretap.otel.spans import AttributeValue, Span, SpanEvent

BATCH = 512
"""Spans per request (a line of the file, a POST): what an SDK's batch processor sends at once."""
SCOPE = {"name": "wiretap", "version": __version__}


def any_value(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


_KEY_VALUES: dict[tuple[str, type, AttributeValue], dict[str, Any]] = {}
KEY_VALUES_KEPT = 4096
"""Attribute pairs kept made: most repeat in every span (the transport's, a method's name)."""


def key_values(attributes: dict[str, AttributeValue]) -> list[dict[str, Any]]:
    """The attributes as OTLP key-values. A pair already made is given again, the same object: the
    documents are written, never changed."""
    pairs = []
    made = _KEY_VALUES
    for key, value in attributes.items():
        if type(value) is list:
            pairs.append({"key": key, "value": any_value(value)})
            continue
        found = made.get(whose := (key, type(value), value))
        if found is None:
            if len(made) >= KEY_VALUES_KEPT:
                made.clear()
            found = made[whose] = {"key": key, "value": any_value(value)}
        pairs.append(found)
    return pairs


def _event(event: SpanEvent) -> dict[str, Any]:
    return {"timeUnixNano": str(event.time_ns), "name": event.name, "attributes": key_values(event.attributes)}


def span_json(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "name": span.name,
        "kind": int(span.kind),
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": key_values(span.attributes),
        "status": {"code": int(span.status), **({"message": span.status_message} if span.status_message else {})},
    }
    if span.parent_id is not None:
        out["parentSpanId"] = span.parent_id.hex()
    if span.events:
        out["events"] = [_event(e) for e in span.events]
    if span.links:
        out["links"] = [{"traceId": link.trace_id.hex(), "spanId": link.span_id.hex()} for link in span.links]
    return out


def export_request(spans: Iterable[Span], resource: dict[str, AttributeValue]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest``: one resource, wiretap's scope, the spans."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": key_values(resource)},
                "scopeSpans": [{"scope": SCOPE, "spans": [span_json(s) for s in spans]}],
            }
        ]
    }


def batches(spans: Iterable[Span], size: int = BATCH) -> Iterator[list[Span]]:
    batch: list[Span] = []
    for span in spans:
        batch.append(span)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
