"""``wiretap proxy``: a recording HTTP proxy, reverse or forward."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from wiretap.commands.common import MAX_SIZE_OPTION, OVERLOAD_OPTION, recording_out
from wiretap.commands.guard_options import guard_options, guard_settings
from wiretap.otel.live import follow_recording, otlp_done, otlp_options


@click.command()
@click.option("--upstream", "-u", help="The server or agent's URL (http:// or https://); not with --forward.")
@click.option(
    "--forward",
    is_flag=True,
    help="Be the client's HTTPS_PROXY/HTTP_PROXY instead: clients keep the real URLs; prints shell lines to eval.",
)
@click.option(
    "--intercept",
    "intercept",
    multiple=True,
    metavar="HOST[:PORT]",
    help="With --forward: record this host, or one port of it (repeatable; default: every host); others pass "
    "through unrecorded.",
)
@click.option("--keep-ca", is_flag=True, help="With --forward: keep the run's CA folder when the run ends.")
@click.option("--record-as", "record_as", multiple=True, hidden=True, help="With --forward: ORIGIN=NAME (sessions).")
@click.option(
    "--listen",
    "-l",
    default="127.0.0.1:0",
    show_default=True,
    help="HOST:PORT to listen on (0: a free port).",
)
@click.option(
    "--out", "-o", type=click.Path(), callback=recording_out, help="Recording file, or a folder for it (DIR/)."
)
@click.option("--name", "-n", help="Name for the upstream in the recording (default: its host).")
@click.option("--no-redact", is_flag=True, help="Record credentials as they are (they are redacted by default).")
@click.option(
    "--upstream-cafile",
    type=click.Path(path_type=Path, dir_okay=False, readable=False),
    help="Trust this CA (PEM) for an https upstream.",
)
@click.option("--insecure", is_flag=True, help="Do not verify an https upstream's certificate.")
@click.option("--ui", "with_ui", is_flag=True, help="Also serve the live view (wiretap ui); its URL goes to stderr.")
@guard_options
@otlp_options
@click.option(*OVERLOAD_OPTION[0], **OVERLOAD_OPTION[1])
@click.option(*MAX_SIZE_OPTION[0], **MAX_SIZE_OPTION[1])
def proxy(
    upstream: str | None,
    forward: bool,
    intercept: tuple[str, ...],
    keep_ca: bool,
    record_as: tuple[str, ...],
    listen: str,
    out: Path | None,
    name: str | None,
    no_redact: bool,
    on_overload: str,
    max_size: int,
    upstream_cafile: Path | None,
    insecure: bool,
    with_ui: bool = False,
    **guard: Any,
) -> None:
    """Proxy an MCP Streamable HTTP server or an A2A agent, streaming, and record every message.

    Prints the URL clients should use, then serves until interrupted. With --forward, prints
    `export` lines for HTTPS_PROXY and the run's CA, then `# ready`; one recording per host.
    """
    from wiretap.run.forward import forward_tls
    from wiretap.run.proxy import BadUpstream, ssl_context
    from wiretap.run.proxy import proxy as run_proxy
    from wiretap.ui.beside import proxy_with_ui

    if forward:
        _forward(
            upstream,
            intercept,
            keep_ca,
            record_as,
            listen,
            out,
            name,
            no_redact,
            on_overload,
            max_size,
            forward_tls(upstream_cafile, insecure),
            with_ui,
            guard,
        )
        return
    if upstream is None:
        raise click.UsageError("Missing option '--upstream' / '-u' (or --forward).")
    if intercept or keep_ca or record_as:
        raise click.UsageError("--intercept and --keep-ca go with --forward.")

    out = proxy_with_ui(upstream, out, name) if with_ui else out
    follow_recording(out)
    try:
        run_proxy(
            upstream,
            listen=listen,
            out=out,
            name=name,
            redact=not no_redact,
            on_overload=on_overload,
            max_size=max_size,
            tls=ssl_context(upstream_cafile, insecure),
            **guard_settings(guard),
        )
    except BadUpstream as exc:
        raise click.BadParameter(str(exc)) from None
    # Stopped: the recorder finishes the file on its own; skip the interpreter's teardown (~0.2 s),
    # once the live span follower (--otlp) has had its bounded wait.
    otlp_done()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _forward(
    upstream: str | None,
    intercept: tuple[str, ...],
    keep_ca: bool,
    record_as: tuple[str, ...],
    listen: str,
    out: Path | None,
    name: str | None,
    no_redact: bool,
    on_overload: str,
    max_size: int,
    tls: Any,
    with_ui: bool,
    guard: dict[str, Any],
) -> None:
    from wiretap.run.forward import forward as run_forward
    from wiretap.run.proxy import BadUpstream

    if upstream is not None or name is not None or with_ui:
        raise click.UsageError("--forward takes no --upstream, --name or --ui: the client names its servers.")
    settings = guard_settings(guard)
    if settings["expose"] or settings["allow_hosts"] or settings["allow_origins"]:
        raise click.UsageError("--forward listens on loopback only; --expose/--allow-host/--allow-origin do not apply.")
    if out is not None and out.exists() and not out.is_dir():
        raise click.BadParameter(f"{out}: --forward records one file per host; give a folder (DIR/)")
    try:
        run_forward(
            listen=listen,
            out=out if out is None or str(out).endswith("/") or out.is_dir() else Path(f"{out}/"),
            redact=not no_redact,
            intercept=frozenset(intercept),
            keep_ca=keep_ca,
            record_as=dict(item.rpartition("=")[::2] for item in record_as) if record_as else None,
            on_overload=on_overload,
            max_size=max_size,
            tls=tls,
            limits=settings["limits"],
        )
    except BadUpstream as exc:
        raise click.BadParameter(str(exc)) from None
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
