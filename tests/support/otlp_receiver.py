"""A small OTLP/HTTP receiver with known behaviour: it decodes every request and answers as told."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass
class Receiver:
    url: str = ""
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    answers: list[tuple[int, bytes, dict[str, str]]] = field(default_factory=list)
    """Queued answers (status, body, headers); when empty, 200 with an empty response."""
    hold: threading.Event = field(default_factory=threading.Event)
    """Cleared: requests wait until it is set (an endpoint that has stopped answering)."""
    arrived: threading.Event = field(default_factory=threading.Event)
    """Set when a request comes in."""

    @property
    def spans(self) -> list[Span]:
        return [s for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]

    def resource(self) -> dict[str, str]:
        attributes = self.requests[0].resource_spans[0].resource.attributes
        return {a.key: a.value.string_value for a in attributes}


def reject(count: int, message: str) -> tuple[int, bytes, dict[str, str]]:
    response = ExportTraceServiceResponse()
    response.partial_success.rejected_spans = count
    response.partial_success.error_message = message
    return 200, response.SerializeToString(), {}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up before its answer is written (an exporter giving up) is no error here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    receiver.hold.set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            receiver.arrived.set()
            receiver.hold.wait(30)
            with lock:
                receiver.paths.append(self.path)
                receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, answer, extra = receiver.answers.pop(0) if receiver.answers else (200, b"", {})
                if status == 200:
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    receiver.requests.append(request)
            self.send_response(status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = _QuietServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.hold.set()
        server.shutdown()
        server.server_close()
