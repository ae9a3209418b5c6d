"""A bounded queue of finished spans and a thread that sends them in batches: a slow or absent endpoint
costs dropped spans (counted), never a blocked producer."""

from __future__ import annotations

import queue
import sys
import threading
from typing import IO

from wiretap.otel.endpoint import Target
from wiretap.otel.otlp_json import export_request
from wiretap.otel.protobuf import decode_response, encode_request
from wiretap.otel.push import Unreachable, post
from wiretap.otel.spans import AttributeValue, Span

QUEUE_SPANS = 4096
BATCH_SPANS = 512
LINGER_SECONDS = 1.0
"""How long a partial batch waits for more spans: calls show up in the backend within about a second."""
_STOP = object()


class BatchSender:
    def __init__(
        self, target: Target, resource: dict[str, AttributeValue], *, capacity: int = QUEUE_SPANS,
        stderr: IO[str] = sys.stderr,
    ) -> None:  # fmt: skip
        self.target = target
        self.resource = resource
        self.sent = self.refused = self.dropped = self.failed = 0
        self._stderr = stderr
        self._queue: queue.Queue[object] = queue.Queue(capacity)
        self._said: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="wiretap-otlp", daemon=True)
        self._thread.start()

    def offer(self, span: Span) -> bool:
        """Queue a span, or count it dropped when the queue is full."""
        try:
            self._queue.put_nowait(span)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def close(self, timeout: float) -> None:
        """Send what is queued, waiting at most ``timeout`` seconds."""
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            batch: list[Span] = []
            item = self._queue.get()
            while item is not _STOP:
                assert isinstance(item, Span)
                batch.append(item)
                if len(batch) >= BATCH_SPANS:
                    break
                try:
                    item = self._queue.get(timeout=LINGER_SECONDS)
                except queue.Empty:
                    break
            if batch:
                self._send(batch)
            if item is _STOP:
                return

    def _send(self, batch: list[Span]) -> None:
        try:
            rejected, message = decode_response(post(self.target, encode_request(export_request(batch, self.resource))))
        except Unreachable as exc:
            self.failed += len(batch)
            self._say(f"wiretap: otlp: {exc}")
            return
        self.sent += len(batch) - rejected
        self.refused += rejected
        if message:
            self._say(f"wiretap: otlp: the endpoint refused {rejected} span(s): {message}")

    def _say(self, line: str) -> None:
        """Each distinct problem once: a dead endpoint must not flood the client's stderr."""
        if line not in self._said:
            self._said.add(line)
            print(line, file=self._stderr, flush=True)
