"""VictoriaMetrics as a real metrics backend: started on a free loopback port, OTLP metrics in at
``/opentelemetry/v1/metrics``, every stored sample read back through ``/api/v1/export``."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.phoenix_backend import free_port
from support.processes import serving

READY_SECONDS = 60


@dataclass
class VictoriaMetrics:
    url: str

    @property
    def otlp_metrics_url(self) -> str:
        return f"{self.url}/opentelemetry/v1/metrics"

    def flush(self) -> None:
        """Make what was ingested searchable now rather than within a second or so."""
        with urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=30):
            pass

    def _export(self, match: str) -> list[dict[str, Any]]:
        self.flush()
        query = urllib.parse.urlencode({"match[]": match, "start": "0"})
        with urllib.request.urlopen(f"{self.url}/api/v1/export?{query}", timeout=30) as response:
            return sorted(
                (json.loads(line) for line in response.read().splitlines() if line.strip()),
                key=lambda series: json.dumps(series["metric"], sort_keys=True),
            )

    def export(
        self, match: str, seconds: float = 30, until: Callable[[list[dict[str, Any]]], bool] | None = None
    ) -> list[dict[str, Any]]:
        """Every stored series matching ``match``, over all time: {"metric": labels, "values", "timestamps"}.
        New series become searchable a while after they are ingested, longer on a busy machine: read again
        until ``until`` holds of what was read (by default: two reads in a row agree), or ``seconds`` pass
        (the caller's assert then says what is missing)."""
        deadline = time.monotonic() + seconds
        last, now = None, self._export(match)
        while not (until(now) if until is not None else bool(now) and now == last) and time.monotonic() < deadline:
            time.sleep(0.5)
            last, now = now, self._export(match)
        return now


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def running_victoria_metrics(command: Path, working_dir: Path, *flags: str) -> Iterator[VictoriaMetrics]:
    port = free_port()
    log_path = working_dir / "victoria-metrics.log"
    argv = [
        str(command), f"-storageDataPath={working_dir / 'data'}", f"-httpListenAddr=127.0.0.1:{port}",
        "-retentionPeriod=100y", *flags,
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with serving(argv, log_path=log_path, ready=lambda: _healthy(url), ready_seconds=READY_SECONDS):
        yield VictoriaMetrics(url)
