"""Putting a proxy together: the recording, the recorder, the HTTP transport, and a clean stop."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import signal
import ssl
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast
from urllib.parse import urlsplit

from wiretap.errors import BadInput, Unavailable, describe_os_error
from wiretap.otel.live import expect_recording
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.recording.events import Header, Kind
from wiretap.recording.paths import recording_path, safe_name
from wiretap.recording.recorder import Recorder
from wiretap.recording.writer import RecordingWriter, create_unique
from wiretap.run.finish import finish_recording
from wiretap.transports.http import HttpProxy
from wiretap.transports.process import EXIT_WITH_STDIN
from wiretap.transports.proxy_config import ProxyConfig
from wiretap.wire.http.guard import Limits, is_loopback
from wiretap.wire.redact import redact_url


class BadUpstream(BadInput):
    pass


def check_upstream(url: str) -> str:
    shown = redact_url(url)  # (stderr ends up in CI logs, and in a session's proxy log)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port out of range or not a number, a broken [IPv6] host
        raise BadUpstream(f"--upstream is not a valid URL ({exc}): {shown!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadUpstream(f"--upstream must be an http:// or https:// URL with a host, not {shown!r}")
    if port == 0:
        raise BadUpstream(f"--upstream cannot name port 0: {shown!r}")
    return url


def parse_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BadUpstream(f"--listen must be HOST:PORT (PORT 0 for a free one), not {listen!r}")
    return host, int(port)


def check_listen(host: str, expose: bool, stderr: IO[str]) -> None:
    if is_loopback(host):
        return
    if not expose:
        raise BadUpstream(
            f"--listen {host} reaches beyond this machine's loopback; pass --expose to mean it "
            "(and --allow-host NAME for the names clients will use)"
        )
    print(
        f"wiretap: warning: listening on {host}: anyone who can reach this machine can reach the upstream "
        "through wiretap (requests must still name an allowed Host)",
        file=stderr,
        flush=True,
    )


def ssl_context(cafile: Path | None, insecure: bool) -> ssl.SSLContext | bool | None:
    if insecure:
        return False
    if cafile is not None:
        try:
            return ssl.create_default_context(cafile=str(cafile))
        except ssl.SSLError as exc:
            raise BadInput(f"{cafile}: not a CA certificate in PEM format ({exc.reason})") from None
        except OSError as exc:
            raise Unavailable(f"{cafile}: {exc.strerror or exc}") from None
    return None


def _open_writer(wanted: Path, stderr: IO[str]) -> RecordingWriter:
    """Unlike a tap, a proxy has no client depending on it yet: a recording it cannot create stops it."""
    try:
        fd, path = create_unique(wanted)
    except OSError as exc:
        raise Unavailable(f"cannot record to {wanted}: {describe_os_error(exc)}") from None
    if path != wanted:
        print(f"wiretap: {wanted} exists; recording to {path}", file=stderr, flush=True)
    return RecordingWriter(fd, path, stderr=stderr)


STOP_RECORDING_WITHIN = 0.05
"""Seconds a stopping proxy waits for a recorder that is behind. With the exchanges' grace (0.1 s)
and the recorder's read size (64 KiB of its work at most before the signal is seen), the proxy is
gone within half a second of SIGTERM, whatever the backlog; bench/exit_latency.py measures it."""


def _stop_when_stdin_ends(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    def readable() -> None:
        try:
            data = os.read(0, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(0)
            stop.set()

    with contextlib.suppress(OSError, ValueError):
        os.set_blocking(0, False)
        loop.add_reader(0, readable)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when it is installed (the ``fast`` extra) and not turned off with WIRETAP_UVLOOP=0."""
    if os.environ.get("WIRETAP_UVLOOP") == "0":
        return None
    try:
        uvloop = importlib.import_module("uvloop")  # optional: typed only where it is installed
    except ImportError:
        return None
    return cast("Callable[[], asyncio.AbstractEventLoop]", uvloop.new_event_loop)


async def _serve(proxy: HttpProxy, host: str, port: int, announce: IO[str]) -> None:
    try:
        url = await proxy.start(host, port)
    except OSError as exc:
        await proxy.stop()
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise Unavailable(f"cannot listen on {host}:{port}: {reason}") from None
    shown = redact_url if proxy.recorder.redact else str
    proxy.recorder.event(Kind.LISTEN, url=shown(url), upstream=shown(proxy.config.upstream))
    stop = asyncio.Event()

    def stop_on(signum: int) -> None:
        proxy.recorder.event(Kind.SIGNAL, signal=signal.Signals(signum).name, signum=signum)
        proxy.ending = {"ended": "signal", "signals": [signal.Signals(signum).name]}
        # A backlog must not hold the exit up: past this, what the recorder cannot take is counted.
        proxy.recorder.stop_by(time.monotonic() + STOP_RECORDING_WITHIN)
        stop.set()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop_on, signum)
    if os.environ.get(EXIT_WITH_STDIN) == "1":
        _stop_when_stdin_ends(loop, stop)
    # Announced once a signal can stop it cleanly. A pipe gets the URL to use (a session's client needs
    # it whole); a terminal, the URL to read.
    print(redact_url(url) if announce.isatty() else url, file=announce, flush=True)
    try:
        await stop.wait()
    finally:
        await proxy.stop()


def proxy(
    upstream: str,
    *,
    listen: str,
    out: Path | None,
    name: str | None,
    redact: bool,
    on_overload: str = "block",
    max_size: int = DEFAULT_MAX_SIZE,
    tls: ssl.SSLContext | bool | None = None,
    allow_hosts: frozenset[str] = frozenset(),
    allow_origins: frozenset[str] = frozenset(),
    limits: Limits | None = None,
    expose: bool = False,
    announce: IO[str] = sys.stdout,
    stderr: IO[str] = sys.stderr,
) -> None:
    """Run the proxy until SIGINT or SIGTERM; print the URL clients should use on ``announce``."""
    check_upstream(upstream)
    host, port = parse_listen(listen)
    check_listen(host, expose, stderr)
    started = time.time()
    name = name or safe_name(urlsplit(upstream).hostname or "upstream")
    writer = _open_writer(recording_path(out, name, started), stderr)
    if writer.opened:
        expect_recording(writer.path)  # (for the --otlp follower, if there is one)
    header = Header(
        transport="http",
        name=name,
        argv=[],
        redacted=redact,
        extra={"upstream": redact_url(upstream) if redact else upstream},
    )
    recorder = Recorder(writer, header, redact=redact, stderr=stderr, on_overload=on_overload, max_size=max_size)
    print(f"wiretap: recording to {writer.path}", file=stderr, flush=True)
    config = ProxyConfig(upstream, tls, allow_hosts, allow_origins, limits or Limits())
    http_proxy = HttpProxy(config, recorder, stderr=stderr)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(_serve(http_proxy, host, port, announce))
    finally:
        finish_recording(recorder, stderr, http_proxy.ending)
