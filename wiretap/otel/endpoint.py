"""Where and how to send: the OTLP/HTTP traces URL and headers, from flags over the standard environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from wiretap.otel.resource import BadSetting, parse_pairs

ENV = "WIRETAP_OTLP"
"""The resolved settings handed to the live follower process (JSON), kept out of its command line."""
DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
METRICS_PATH = "/v1/metrics"


@dataclass(frozen=True)
class Target:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0


def _checked(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadSetting(f"{what}: {url!r} is not an http(s) URL")
    return url


def traces_url(env: Mapping[str, str], endpoint: str | None) -> str:
    """``--endpoint`` and ``OTEL_EXPORTER_OTLP_ENDPOINT`` are a base URL that gets ``/v1/traces``
    (unless it already ends so); ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is used as it is (the OTel spec)."""
    if endpoint:
        base = _checked(endpoint, "--endpoint").rstrip("/")
        return base if base.endswith(TRACES_PATH) else base + TRACES_PATH
    if traces := env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return _checked(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT
    return _checked(base, "OTEL_EXPORTER_OTLP_ENDPOINT").rstrip("/") + TRACES_PATH


def timeout_from(env: Mapping[str, str], timeout: float | None) -> float:
    """``--timeout`` seconds, else ``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` milliseconds, else 10 s."""
    if timeout is not None:
        return timeout
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        if value := env.get(name):
            try:
                milliseconds = float(value)
            except ValueError:
                raise BadSetting(f"{name}: {value!r} is not a number of milliseconds") from None
            if milliseconds <= 0:
                raise BadSetting(f"{name}: {value!r} is not a positive number of milliseconds")
            return milliseconds / 1000
    return 10.0


def target_from(
    env: Mapping[str, str], *, endpoint: str | None = None, headers: Sequence[str] = (), timeout: float | None = None
) -> Target:
    merged = parse_pairs(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""), "OTEL_EXPORTER_OTLP_HEADERS")
    merged.update(parse_pairs(env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS", ""), "OTEL_EXPORTER_OTLP_TRACES_HEADERS"))
    for header in headers:
        merged.update(parse_pairs(header, "--header"))
    return Target(traces_url(env, endpoint), merged, timeout_from(env, timeout))


def metrics_wanted(env: Mapping[str, str], flag: bool = False) -> bool:
    """Metrics go out with ``--metrics`` or ``OTEL_METRICS_EXPORTER=otlp``; by default not, as backends that
    store only traces (Phoenix, Jaeger, Tempo) refuse ``/v1/metrics``."""
    return flag or "otlp" in env.get("OTEL_METRICS_EXPORTER", "").split(",")


def metrics_target(env: Mapping[str, str], traces: Target) -> Target:
    """``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` as it is, else the traces URL's base with ``/v1/metrics``."""
    url = env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or traces.url.removesuffix(TRACES_PATH) + METRICS_PATH
    return Target(_checked(url, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"), traces.headers, traces.timeout)
