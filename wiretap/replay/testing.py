"""Recordings as test fixtures, in a few lines.

```python
from wiretap.replay.testing import recorded_server, replayed_server

def test_my_client_against_the_recorded_server(tmp_path):
    with replayed_server("tests/data/reports.jsonl", strict=True) as server:
        run_my_client(server_command=server.command)      # or server.url with http=True

def test_record_the_real_server_once(tmp_path):
    run_my_client(server_command=recorded_server(["python", "-m", "reports"], tmp_path / "reports.jsonl"))
```

``replayed_server`` runs ``wiretap replay`` as the client would (a separate process), and on leaving
the block raises ``ReplayMisses`` if ``strict`` and the client asked for anything the recording does
not hold. ``replay_client`` drives a live server with a recorded client and returns the comparison.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WIRETAP = [sys.executable, "-m", "wiretap"]


class ReplayMisses(AssertionError):
    """The live client sent requests that the recording holds no match for."""


@dataclass
class ReplayedServer:
    recording: Path
    command: list[str]
    """The command that serves the replay on stdio (put it where the server command was)."""
    url: str | None = None
    """With ``http=True``: the URL to point an HTTP client at."""
    summary_path: Path = field(default_factory=Path)
    final: dict[str, Any] | None = None
    """The summary as the block ended (its file goes with the block)."""

    def summary(self) -> dict[str, Any]:
        """What the replay answered, and what it could not (``misses``), once the replay has ended."""
        if self.final is not None:
            return self.final
        try:
            loaded: dict[str, Any] = json.loads(self.summary_path.read_text())
        except (OSError, ValueError):
            return {"misses": [], "ended": False}
        return loaded

    @property
    def misses(self) -> list[dict[str, Any]]:
        return list(self.summary().get("misses", []))


def replay_command(recording: Path | str, *options: str) -> list[str]:
    return [*WIRETAP, "replay", str(recording), *options]


@contextlib.contextmanager
def replayed_server(
    recording: Path | str,
    *,
    pace: str = "fast",
    match_on: Sequence[str] = ("method", "params"),
    ignore: Sequence[str] = (),
    strict: bool = False,
    http: bool = False,
) -> Iterator[ReplayedServer]:
    """A replay of ``recording`` as the server: a stdio command, or (``http``) a running HTTP server."""
    with tempfile.TemporaryDirectory(prefix="wiretap-replay-") as folder:
        summary = Path(folder) / "summary.json"
        options = ["--pace", pace, "--match-on", ",".join(match_on), "--summary", str(summary)]
        options += [f"--ignore={key}" for key in ignore]
        server = ReplayedServer(Path(recording), replay_command(recording, *options), summary_path=summary)
        if http:
            with _serving_http(server) as url:
                server.url = url
                yield server
        else:
            yield server
        server.final = server.summary()
        if strict and server.misses:
            lines = [
                f"{m['method']} {json.dumps(m['params'])[:100]}: {'; '.join(m['differed'])}" for m in server.misses
            ]
            raise ReplayMisses(f"{len(lines)} request(s) not in {recording}:\n" + "\n".join(lines))


@contextlib.contextmanager
def _serving_http(server: ReplayedServer) -> Iterator[str]:
    command = [*server.command, "--listen", "127.0.0.1:0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"wiretap replay did not start (exit status {proc.wait(10)})")
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()


def recorded_server(server: Sequence[str], out: Path | str, *, name: str | None = None) -> list[str]:
    """The command that runs ``server`` through ``wiretap tap``, recording to ``out``."""
    return [*WIRETAP, "tap", "--out", str(out), *(["--name", name] if name else []), "--", *server]


def replay_client(
    recording: Path | str,
    server: Sequence[str] = (),
    *,
    upstream: str | None = None,
    out: Path | None = None,
    pace: str = "fast",
    timeout: float = 30.0,
) -> Any:
    """Drive a live ``server`` command (or ``upstream`` URL) with the recorded client; return the
    ``ClientResult`` (``.differing``, ``.exit_status``, ``.summary()``)."""
    from wiretap.replay.client import replay_client as run
    from wiretap.replay.drive import ClientOptions
    from wiretap.replay.loader import load_script
    from wiretap.replay.pace import Pace

    options = ClientOptions(pace=Pace.parse(pace), timeout=timeout, out=out)
    quiet = io.StringIO()
    return run(load_script(Path(recording)), list(server), upstream, options, out=quiet, notes=quiet)
