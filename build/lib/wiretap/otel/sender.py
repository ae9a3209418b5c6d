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
"""Spans waiting to be sent beyond which new ones are dropped (OTEL_BSP_MAX_QUEUE_SIZE)."""
FLUSH_SECONDS = 10.0
"""How long the follower may go on sending once wiretap has stopped (OTEL_BSP_EXPORT_TIMEOUT)."""
BATCH_SPANS = 512
LINGER_SECONDS = 1.0
"""How long a partial batch waits for more spans: calls show up in the backend within about a second."""
_STOP = object()


class BatchSender:
    def __init__(
        self, target: Target, resource: dict[str, AttributeValue], *, capacity: int = QUEUE_SPANS,
        stderr: IO[str] = sys.stderr, defer: bool = False,
    ) -> None:  # fmt: skip
        """``defer``: keep problems to say at the end (a client's full-screen UI owns the terminal till then)."""
        self.target = target
        self.resource = resource
        self.sent = self.refused = self.dropped = self.failed = 0
        self._in_flight = 0
        self._stderr = stderr
        self.capacity = capacity
        # Unbounded underneath: the capacity binds ordinary spans; the few that carry the counts (a
        # recording's root) always get in.
        self._queue: queue.Queue[object] = queue.Queue()
        self._said: set[str] = set()
        self._defer = defer
        self.deferred: list[str] = []
        self._thread = threading.Thread(target=self._run, name="wiretap-otlp", daemon=True)
        self._thread.start()

    def offer(self, span: Span, *, essential: bool = False) -> bool:
        """Queue a span, or count it dropped when the queue is full (an essential one is never dropped)."""
        if not essential and self._queue.qsize() >= self.capacity:
            self.dropped += 1
            return False
        self._queue.put_nowait(span)
        return True

    def close(self, timeout: float) -> int:
        """Send what is queued, waiting at most ``timeout`` seconds; return how many spans are left unsent."""
        self._queue.put_nowait(_STOP)
        self._thread.join(timeout)
        return max(0, self._queue.qsize() - 1) + self._in_flight if self._thread.is_alive() else 0

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
        self._in_flight = len(batch)
        try:
            rejected, message = decode_response(post(self.target, encode_request(export_request(batch, self.resource))))
        except Unreachable as exc:
            self._in_flight = 0
            self.failed += len(batch)
            self._say(f"wiretap: otlp: {exc}")
            return
        self._in_flight = 0
        self.sent += len(batch) - rejected
        self.refused += rejected
        if message:
            self._say(f"wiretap: otlp: the endpoint refused {rejected} span(s): {message}")

    def _say(self, line: str) -> None:
        """Each distinct problem once: a dead endpoint must not flood the client's stderr."""
        if line in self._said:
            return
        self._said.add(line)
        if self._defer:
            self.deferred.append(line)
        else:
            print(line, file=self._stderr, flush=True)
