"""VictoriaMetrics as a real metrics backend: started on a free loopback port, OTLP metrics in at
``/opentelemetry/v1/metrics``, every stored sample read back through ``/api/v1/export``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.phoenix_backend import free_port

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

    def export(self, match: str, seconds: float = 30) -> list[dict[str, Any]]:
        """Every stored series matching ``match``, over all time: {"metric": labels, "values", "timestamps"};
        once two reads in a row agree (new series become searchable shortly after they are ingested)."""
        deadline = time.monotonic() + seconds
        last, now = None, self._export(match)
        while (not now or now != last) and time.monotonic() < deadline:
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
    log = log_path.open("wb")
    argv = [
        str(command), f"-storageDataPath={working_dir / 'data'}", f"-httpListenAddr=127.0.0.1:{port}",
        "-retentionPeriod=100y", *flags,
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"victoria-metrics did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        yield VictoriaMetrics(url)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
