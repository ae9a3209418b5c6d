"""``wiretap proxy --forward``: the forward proxy, its CA, the shell lines that point a client at it, and
one recording per intercepted origin."""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import shutil
import signal
import ssl
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from wiretap.errors import BadInput, Unavailable
from wiretap.forward.ca import RunCA
from wiretap.forward.proxy import ForwardConfig, ForwardProxy, Origin, split_authority
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.recording.events import Header, Kind
from wiretap.recording.paths import DEFAULT_DIR, recording_path, safe_name
from wiretap.recording.recorder import Recorder
from wiretap.run.finish import finish_recording
from wiretap.run.proxy import _loop_factory, _open_writer, _stop_when_stdin_ends, check_listen, parse_listen
from wiretap.transports.process import EXIT_WITH_STDIN
from wiretap.wire.http.guard import Limits

NODE_BUNDLE = "node-extra-ca.pem"
SYSTEM_BUNDLE = "ca-bundle.pem"


def system_roots() -> bytes:
    """The system's trusted roots as PEM (where this Python's OpenSSL finds them), or nothing."""
    paths = ssl.get_default_verify_paths()
    for candidate in (os.environ.get("SSL_CERT_FILE"), paths.cafile, paths.openssl_cafile):
        if candidate and os.path.isfile(candidate):
            try:
                return Path(candidate).read_bytes()
            except OSError:
                continue
    return b""


def write_bundles(ca: RunCA, environ: dict[str, str] | os._Environ[str]) -> tuple[Path, Path]:
    """Two trust files beside the CA: Node's extra CAs (the user's own plus the run's), and a whole bundle
    (the system's roots plus the run's) for ``SSL_CERT_FILE`` and ``REQUESTS_CA_BUNDLE``."""
    own = b""
    extra = environ.get("NODE_EXTRA_CA_CERTS")
    if extra and os.path.isfile(extra):
        own = Path(extra).read_bytes().rstrip(b"\n") + b"\n"
    node = ca.folder / NODE_BUNDLE
    node.write_bytes(own + ca.pem())
    roots = system_roots()
    whole = ca.folder / SYSTEM_BUNDLE
    whole.write_bytes((roots.rstrip(b"\n") + b"\n" if roots else b"") + ca.pem())
    return node, whole


def client_environment(proxy_url: str, node_bundle: Path, bundle: Path) -> dict[str, str]:
    """What a client needs to go through the proxy and trust its CA."""
    return {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NODE_EXTRA_CA_CERTS": str(node_bundle),
        "SSL_CERT_FILE": str(bundle),
        "REQUESTS_CA_BUNDLE": str(bundle),
        "NODE_USE_ENV_PROXY": "1",
    }


def forward_tls(cafile: Path | None, insecure: bool) -> ssl.SSLContext | bool | None:
    """Upstream verification for a proxy that reaches many hosts: the system's roots, and ``cafile``'s too."""
    if insecure:
        return False
    if cafile is None:
        return None
    context = ssl.create_default_context()
    try:
        context.load_verify_locations(cafile=str(cafile))
    except ssl.SSLError as exc:
        raise BadInput(f"{cafile}: not a CA certificate in PEM format ({exc.reason})") from None
    except OSError as exc:
        raise Unavailable(f"{cafile}: {exc.strerror or exc}") from None
    return context


def intercepting(given: frozenset[str]) -> Callable[[str, int], bool]:
    """``--intercept`` values (HOST, or HOST:PORT for one port) as a test; none: every host."""
    hosts: set[str] = set()
    origins: set[tuple[str, int]] = set()
    for item in given:
        split = split_authority(item.lower(), 0)
        if split is None:
            raise BadInput(f"--intercept {item!r}: not HOST or HOST:PORT")
        host, port = split
        if port:
            origins.add((host, port))
        else:
            hosts.add(host)
    if not given:
        return lambda host, port: True
    return lambda host, port: host in hosts or (host, port) in origins


def ca_folder(out: Path | None) -> Path:
    """A folder of the run's own for its CA, inside the folder its recordings go to: a CA left by a run
    killed with SIGKILL is found (and pruned) with that run's recordings, not in a temp folder."""
    parent = DEFAULT_DIR if out is None else out
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="wiretap-ca-", dir=parent))
    except OSError as exc:
        raise Unavailable(f"cannot create the run's CA in {parent}: {exc.strerror or exc}") from None


def forward(
    *,
    listen: str,
    out: Path | None,
    redact: bool,
    intercept: frozenset[str] = frozenset(),
    keep_ca: bool = False,
    ca_dir: Path | None = None,
    record_as: dict[str, str] | None = None,
    on_overload: str = "block",
    max_size: int = DEFAULT_MAX_SIZE,
    tls: ssl.SSLContext | bool | None = None,
    limits: Limits | None = None,
    announce: IO[str] = sys.stdout,
    stderr: IO[str] = sys.stderr,
) -> None:
    """Run the forward proxy until SIGINT or SIGTERM; print the shell lines for clients on ``announce``."""
    host, port = parse_listen(listen)
    check_listen(host, False, stderr)
    intercepts = intercepting(intercept)
    if ca_dir is not None and ca_dir.exists() and any(ca_dir.iterdir()):
        raise BadInput(f"--ca-dir {ca_dir}: not empty (the run's CA needs a folder of its own)")
    folder = ca_dir if ca_dir is not None else ca_folder(out)
    try:
        ca = RunCA.create(folder)
    except OSError as exc:
        raise Unavailable(f"cannot create the run's CA in {folder}: {exc.strerror or exc}") from None
    recorders: dict[Origin, Recorder] = {}

    def recorder_for(origin: Origin) -> Recorder:
        name = safe_name(origin.host if origin.port in (80, 443) else f"{origin.host}-{origin.port}")
        if record_as is not None:  # a session's: each server's recording under its name, the others by host
            name = record_as.get(origin.url, name)
            wanted = (out or Path(".")) / f"{name}.jsonl"
        else:
            wanted = recording_path(out, name, time.time())
        writer = _open_writer(wanted, stderr)
        header = Header(
            transport="http", name=name, argv=[], redacted=redact, extra={"upstream": origin.url, "mode": "forward"}
        )
        recorder = Recorder(writer, header, redact=redact, stderr=stderr, on_overload=on_overload, max_size=max_size)
        recorder.event(Kind.LISTEN, url=origin.url, upstream=origin.url, mode="forward")
        print(f"wiretap: {origin.url}: recording to {writer.path}", file=stderr, flush=True)
        recorders[origin] = recorder
        return recorder

    config = ForwardConfig(
        ca=ca,
        token=secrets.token_urlsafe(18),
        intercept=intercepts,
        recorder_for=recorder_for,
        upstream_tls=tls,
        limits=limits or Limits(),
    )
    proxy = ForwardProxy(config, stderr=stderr)
    ending: dict[str, object] = {"ended": "normal"}
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(_serve(proxy, host, port, announce, ending, stderr))
    finally:
        for recorder in recorders.values():
            finish_recording(recorder, stderr, ending)
        if keep_ca:
            print(f"wiretap: the run's CA is kept in {folder} (its key is {folder / 'ca-key.pem'})", file=stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


async def _serve(
    proxy: ForwardProxy, host: str, port: int, announce: IO[str], ending: dict[str, object], stderr: IO[str]
) -> None:
    try:
        bound_host, bound_port = await proxy.start(host, port)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise Unavailable(f"cannot listen on {host}:{port}: {reason}") from None
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://wiretap:{proxy.config.token}@{shown}:{bound_port}"
    node, bundle = write_bundles(proxy.config.ca, os.environ)
    stop = asyncio.Event()

    def stop_on(signum: int) -> None:
        ending.update({"ended": "signal", "signals": [signal.Signals(signum).name]})
        stop.set()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop_on, signum)
    if os.environ.get(EXIT_WITH_STDIN) == "1":  # (a session's: gone when the session is)
        _stop_when_stdin_ends(loop, stop)
    for name, value in client_environment(url, node, bundle).items():
        print(f"export {name}={shlex.quote(value)}", file=announce)
    print("# ready", file=announce, flush=True)
    try:
        await stop.wait()
    finally:
        await proxy.stop()
