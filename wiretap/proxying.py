"""Putting a proxy together: the recording, the recorder, the HTTP transport, and a clean stop."""

from __future__ import annotations

import asyncio
import signal
import ssl
import sys
import time
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from wiretap.http.guard import Limits, is_loopback
from wiretap.model import Header, Kind
from wiretap.paths import recording_path, safe_name
from wiretap.recording.recorder import Recorder
from wiretap.redact import redact_url
from wiretap.tapping import open_writer
from wiretap.transports.http import HttpProxy, ProxyConfig


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
        return ssl.create_default_context(cafile=str(cafile))
    return None


async def _serve(proxy: HttpProxy, host: str, port: int, announce: IO[str]) -> None:
    url = await proxy.start(host, port)
    shown = redact_url if proxy.recorder.redact else str
    proxy.recorder.event(Kind.LISTEN, url=shown(url), upstream=shown(proxy.config.upstream))
    # A pipe gets the URL to use (a session's client needs it whole); a terminal, the URL to read.
    print(redact_url(url) if announce.isatty() else url, file=announce, flush=True)
    stop = asyncio.Event()

    def stop_on(signum: int) -> None:
        proxy.recorder.event(Kind.SIGNAL, signal=signal.Signals(signum).name, signum=signum)
        stop.set()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop_on, signum)
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
    writer = open_writer(recording_path(out, name, started), stderr)
    header = Header(
        transport="http",
        name=name,
        argv=[],
        started_epoch=started,
        redacted=redact,
        extra={"upstream": redact_url(upstream) if redact else upstream},
    )
    recorder = Recorder(writer, header, redact=redact, stderr=stderr)
    print(f"wiretap: recording to {writer.path}", file=stderr, flush=True)
    config = ProxyConfig(upstream, tls, allow_hosts, allow_origins, limits or Limits())
    http_proxy = HttpProxy(config, recorder, stderr=stderr)
    try:
        asyncio.run(_serve(http_proxy, host, port, announce))
    finally:
        recorder.close()
