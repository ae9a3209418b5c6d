"""``wiretap ui PATH``: serve the live view of a recording, a session, or the newest of a sessions folder."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap.recording.folders import is_session
from wiretap.recording.migrate import UnsupportedFormat
from wiretap.recording.reader import NotARecording, open_recording

if TYPE_CHECKING:
    from wiretap.ui.server import Hub


def hub_for(path: Path, wait: bool) -> Hub:
    """What PATH is: a recording, a session folder, or a folder of sessions. Raises ClickException."""
    from wiretap.ui.server import Hub

    if path.is_dir():
        if is_session(path) or wait:
            return Hub(path, root=False)
        if any(is_session(child) for child in path.iterdir()):
            return Hub(path, root=True)
        raise click.ClickException(f"{path}: neither a recording, a session folder nor a folder of sessions")
    if path.is_file():
        try:
            open_recording(path, wait=None).close()
        except (NotARecording, UnsupportedFormat) as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:
            raise click.ClickException(f"{path}: {exc.strerror or exc}") from None
        return Hub(path, root=False)
    if wait:
        return Hub(path, root=False)
    raise click.ClickException(f"{path}: no such file or folder")


async def _run(hub: Hub, host: str, port: int, beside: bool) -> None:
    from wiretap.ui.server import bind, new_token, serve, url_of

    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    if beside:
        # Whoever started us holds our stdin open; its end (even by kill -9) is ours.
        threading.Thread(target=_until_eof, args=(loop, stop), daemon=True).start()
    token = new_token()
    serving = loop.create_task(serve(hub, sock, stop, token))
    await asyncio.sleep(0)
    host, port = sock.getsockname()[:2]
    print(url_of(host, port, token), flush=True)
    await serving


def _until_eof(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    with contextlib.suppress(OSError, ValueError):
        while sys.stdin.buffer.read(4096):
            pass
    loop.call_soon_threadsafe(stop.set)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--listen",
    "-l",
    default="127.0.0.1:0",
    show_default=True,
    help="HOST:PORT on loopback (0: a free port).",
)
@click.option(
    "--beside", is_flag=True, hidden=True, help="Started by --ui: PATH may not exist yet; stop when stdin closes."
)
def ui(path: Path, listen: str, beside: bool) -> None:
    """Watch a recording, a session folder or the newest session live in a browser; prints its URL first.

    The page follows the files as they grow: messages, filters, the timeline, verdicts and findings.
    """
    from wiretap.run.proxy import BadUpstream, parse_listen
    from wiretap.ui.guard import NotLoopback, loopback_host

    try:
        host, port = parse_listen(listen)
        host = loopback_host(host)
    except (BadUpstream, NotLoopback) as exc:
        raise click.BadParameter(str(exc), param_hint="--listen") from None
    hub = hub_for(path, beside)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_run(hub, host, port, beside))
    sys.stdout.flush()
