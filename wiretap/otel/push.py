"""Sending spans over OTLP/HTTP with protobuf bodies: one POST per batch, the endpoint's partial success
counted, a busy endpoint retried a bounded number of times."""

from __future__ import annotations

import contextlib
import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field

from wiretap.errors import Unavailable
from wiretap.otel.endpoint import Target
from wiretap.otel.metrics import Durations
from wiretap.otel.otlp_json import batches, export_request
from wiretap.otel.protobuf import (
    decode_metrics_response,
    decode_response,
    encode_metrics,
    encode_request,
    status_message,
)  # fmt: skip
from wiretap.otel.spans import AttributeValue, Span

RETRYABLE = frozenset({429, 502, 503, 504})
ATTEMPTS = 3
MAX_BACKOFF = 5.0


class Unreachable(Unavailable):
    """The endpoint could not be reached or refused a whole batch; the message is one line."""


@dataclass
class Sent:
    accepted: int = 0
    rejected: int = 0
    messages: list[str] = field(default_factory=list)

    def add(self, other: Sent) -> None:
        self.accepted += other.accepted
        self.rejected += other.rejected
        self.messages += [m for m in other.messages if m not in self.messages]


def post(target: Target, body: bytes) -> bytes:
    headers = {**target.headers, "Content-Type": "application/x-protobuf", "User-Agent": "wiretap"}
    for attempt in range(ATTEMPTS):
        request = urllib.request.Request(target.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=target.timeout) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()
            if exc.code in RETRYABLE and attempt + 1 < ATTEMPTS:
                time.sleep(_backoff(exc.headers.get("Retry-After"), attempt))
                continue
            message = status_message(detail)
            raise Unreachable(f"{target.url} answered {exc.code}" + (f": {message}" if message else "")) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise Unreachable(f"cannot send to {target.url}: {getattr(reason, 'strerror', None) or reason}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _backoff(retry_after: object, attempt: int) -> float:
    """The endpoint's Retry-After in seconds if it gave one, else doubling from half a second; at most 5 s."""
    wait = 0.5 * (1 << attempt)
    if isinstance(retry_after, str):
        with contextlib.suppress(ValueError):
            wait = max(0.0, float(retry_after))
    return min(MAX_BACKOFF, wait)


def send(
    target: Target, spans: Iterable[Span], resource: dict[str, AttributeValue], durations: Durations | None = None
) -> Sent:
    """Raises Unreachable (and MissingExtra without wiretap[otel]). ``durations`` is fed every span sent."""
    sent = Sent()
    for batch in batches(spans):
        if durations is not None:
            durations.add_spans(batch)
        rejected, message = decode_response(post(target, encode_request(export_request(batch, resource))))
        sent.add(Sent(len(batch) - rejected, rejected, [message] if message else []))
    return sent


def send_metrics(target: Target, durations: Durations, resource: dict[str, AttributeValue]) -> Sent:
    """The histograms in one request: ``accepted`` and ``rejected`` count data points."""
    request = durations.export_request(resource)
    points = sum(len(m["histogram"]["dataPoints"]) for m in request["resourceMetrics"][0]["scopeMetrics"][0]["metrics"])
    if not points:
        return Sent()
    rejected, message = decode_metrics_response(post(target, encode_metrics(request)))
    return Sent(points - rejected, rejected, [message] if message else [])
