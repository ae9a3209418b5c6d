"""OTLP/JSON to the protobuf body OTLP/HTTP carries, and the endpoint's answer back (needs wiretap[otel])."""

from __future__ import annotations

import base64
import json
from typing import Any

from wiretap.errors import BadInput

INSTALL = "wiretap otel needs the OpenTelemetry packages: pip install 'wiretap[otel]'"
ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


class MissingExtra(BadInput):
    def __init__(self) -> None:
        super().__init__(INSTALL)


def _base64_ids(value: Any) -> Any:
    """OTLP/JSON has hex ids where protobuf's JSON mapping has base64."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode() if k in ID_KEYS else _base64_ids(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_base64_ids(v) for v in value]
    return value


def encode_request(request: dict[str, Any]) -> bytes:
    try:
        from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise MissingExtra() from None
    message = ParseDict(_base64_ids(json.loads(json.dumps(request))), ExportTraceServiceRequest())
    return bytes(message.SerializeToString())


def encode_metrics(request: dict[str, Any]) -> bytes:
    try:
        from google.protobuf.json_format import ParseDict
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    except ImportError:
        raise MissingExtra() from None
    return bytes(ParseDict(json.loads(json.dumps(request)), ExportMetricsServiceRequest()).SerializeToString())


def decode_metrics_response(body: bytes) -> tuple[int, str]:
    """(data points the endpoint rejected, its message) from an ``ExportMetricsServiceResponse``."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse

    response = ExportMetricsServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:
        return 0, ""
    return int(response.partial_success.rejected_data_points), str(response.partial_success.error_message)


def decode_response(body: bytes) -> tuple[int, str]:
    """(spans the endpoint rejected, its message) from an ``ExportTraceServiceResponse``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    response = ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:
        return 0, ""
    return int(response.partial_success.rejected_spans), str(response.partial_success.error_message)


def status_message(body: bytes) -> str:
    """The message of a ``google.rpc.Status`` error body, else the body's first line."""
    try:
        from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

        status = Status()
        status.ParseFromString(body)
        if status.message:
            return str(status.message)
    except Exception:
        pass
    return body.decode("utf-8", "replace").strip().splitlines()[0][:200] if body.strip() else ""
