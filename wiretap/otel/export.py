"""``wiretap export --format otlp``: OTLP/JSON lines, as the Collector's file exporter writes them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from wiretap.otel.otlp_json import batches, export_request
from wiretap.otel.resource import resource_attributes
from wiretap.otel.sources import iter_spans_of
from wiretap.otel.spans import AttributeValue, Span


def otlp_lines(spans: Iterable[Span], resource: dict[str, AttributeValue]) -> Iterator[str]:
    for batch in batches(spans):
        yield json.dumps(export_request(batch, resource), separators=(",", ":"), ensure_ascii=False) + "\n"


def otlp_lines_of(path: Path) -> Iterator[str]:
    """A recording's (or a session's) OTLP/JSON lines, each made once its batch of spans is mapped.
    Raises NotARecording, NotASession, UnsupportedFormat, BadSetting or OSError."""
    return otlp_lines(iter_spans_of(path), resource_attributes(os.environ))
