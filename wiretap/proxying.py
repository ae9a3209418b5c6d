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

from wiretap.model import Header, Kind
from wiretap.paths import recording_path, safe_name
from wiretap.recording.recorder import Recorder
from wiretap.tapping import open_writer
from wiretap.transports.http import HttpProxy, ProxyConfig
from wiretap.transports.process import EXIT_WITH_STDIN


class BadUpstream(ValueError):
    pass


def check_upstream(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadUpstream(f"--upstream must be an http:// or https:// URL with a host, not {url!r}")
    return url


def parse_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BadUpstream(f"--listen must be HOST:PORT (PORT 0 for a free one), not {listen!r}")
    return host, int(port)


def ssl_context(cafile: Path | None, insecure: bool) -> ssl.SSLContext | bool | None:
    if insecure:
        return False
    if cafile is not None:
        return ssl.create_default_context(cafile=str(cafile))
    return None


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
    url = await proxy.start(host, port)
    proxy.recorder.event(Kind.LISTEN, url=url, upstream=proxy.config.upstream)
    print(url, file=announce, flush=True)
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
    tls: ssl.SSLContext | bool | None = None,
    announce: IO[str] = sys.stdout,
    stderr: IO[str] = sys.stderr,
) -> None:
    """Run the proxy until SIGINT or SIGTERM; print the URL clients should use on ``announce``."""
    check_upstream(upstream)
    host, port = parse_listen(listen)
    started = time.time()
    name = name or safe_name(urlsplit(upstream).hostname or "upstream")
    writer = open_writer(recording_path(out, name, started), stderr)
    header = Header(
        transport="http",
        name=name,
        argv=[],
        started_epoch=started,
        redacted=redact,
        extra={"upstream": upstream},
    )
    recorder = Recorder(writer, header, redact=redact, stderr=stderr, on_overload=on_overload)
    print(f"wiretap: recording to {writer.path}", file=stderr, flush=True)
    http_proxy = HttpProxy(ProxyConfig(upstream, tls), recorder, stderr=stderr)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(_serve(http_proxy, host, port, announce))
    finally:
        # The recorder process finishes the recording on its own: the proxy exits now.
        recorder.close(settle=False, **http_proxy.ending)
