"""``wiretap lab``: the lab's servers and agents."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from pathlib import Path

import click

from wiretap.errors import BadInput


@click.group()
def lab() -> None:
    """A client-behaviour investigation: wiretap lab [--scripted] -- CLIENT [ARGS...] runs a client against
    the probe server and prints a row per condition; serve runs the probes alone."""


@lab.command()
@click.option("--a2a", "a2a", is_flag=True, help="Serve the A2A agent (JSON-RPC and HTTP+JSON, A2A 1.0 and 0.3).")
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    default=None,
    help="Serve over HTTP at HOST:PORT (loopback only; port 0 picks a free one) and print the URL on stdout. "
    "Without it the MCP probe serves stdio; the A2A agent always serves HTTP (default 127.0.0.1:0).",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The server's own log (created 0600): one JSON line per message and event, wall and monotonic ns.",
)
def serve(a2a: bool, address: str | None, log_path: Path | None) -> None:
    """Serve the lab's probe MCP server (stdio, or Streamable HTTP with --http); with --a2a, the A2A agent."""
    if a2a:
        host, port = loopback_address(address or "127.0.0.1:0")
        from wiretap.lab.a2a.server import serve as serve_a2a

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_a2a(host, port, log_path))
        return
    if address is None:
        import os
        import sys

        from wiretap.lab.probe.stdio import serve as serve_stdio

        asyncio.run(serve_stdio(log_path))
        # The client waits to see its server gone (Claude Code sends SIGTERM 100 ms after SIGINT): its log
        # closed and stdout flushed, the probe skips the interpreter's teardown, so its exit is the client's
        # shutdown sequence and not a machine's load.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(0)
    host, port = loopback_address(address)
    from wiretap.lab.probe.http import serve as serve_http

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_http(host, port, log_path))


def loopback_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` of a loopback address; BadInput naming the value otherwise."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if host == "localhost":
        host = "127.0.0.1"
    try:
        number = int(port)
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise BadInput(f"--http {address!r}: expected HOST:PORT with a loopback host, e.g. 127.0.0.1:8765") from None
    if not loopback:
        raise BadInput(f"--http {address!r}: the lab listens on loopback only (127.0.0.1 or ::1)")
    if not 0 <= number <= 65535:
        raise BadInput(f"--http {address!r}: the port must be 0–65535")
    return host, number


SUBCOMMANDS = ("serve", "report", "run")


def routed(args: list[str]) -> list[str]:
    """``lab [OPTIONS] -- CLIENT …`` is ``lab run [OPTIONS] -- CLIENT …`` (the arguments after ``lab``)."""
    if "--" in args and (not args or args[0] not in SUBCOMMANDS):
        return ["run", *args]
    return args


CONDITIONS_HELP = "Only these conditions, by name or tool, comma-separated (default: all): e.g. poll-interval,progress."


@lab.command("run", hidden=True, context_settings={"allow_interspersed_args": False})
@click.option("--scripted", is_flag=True, help="Drive the client with a loopback fake model, in a throwaway home.")
@click.option("--conditions", "conditions_text", metavar="A,B", help=CONDITIONS_HELP)
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Session folder (as wiretap --out).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "html"]),
    default="text",
    show_default=True,
    help="How to print the investigation at the end.",
)
@click.argument("client", nargs=-1, required=True, type=click.UNPROCESSED)
def run(scripted: bool, conditions_text: str | None, out: Path | None, fmt: str, client: tuple[str, ...]) -> None:
    """Run a client with the lab's probe server added: wiretap lab [--scripted] -- claude [ARGS...]"""
    import os
    import sys

    from wiretap.lab.conditions import parse_conditions
    from wiretap.lab.run import run_lab
    from wiretap.transports.process import exit_like
    from wiretap.wrap.session import ClientNotStarted

    conditions = parse_conditions(conditions_text)
    try:
        returncode, folder = run_lab(list(client), conditions=conditions, scripted=scripted, out=out, env=os.environ)
    except ClientNotStarted as exc:
        click.echo(f"wiretap: {exc}", err=True)
        sys.exit(exc.status)
    try:
        click.echo(investigation_of(folder, conditions_text, fmt), nl=False)
    except BadInput as exc:  # the client never started the lab server: nothing was recorded
        click.echo(f"wiretap lab: no investigation: {exc}", err=True)
    exit_like(returncode)


@lab.command("report")
@click.argument("session", type=click.Path(path_type=Path))
@click.option("--conditions", "conditions_text", metavar="A,B", help=CONDITIONS_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "html"]), default="text", show_default=True)
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False, path_type=Path), help="Write it here.")
def report(session: Path, conditions_text: str | None, fmt: str, out: Path | None) -> None:
    """The investigation of a lab session (or any recording): a row per condition, the client's answers."""
    text = investigation_of(session, conditions_text, fmt)
    if out is None:
        click.echo(text, nl=False)
        return
    from wiretap.files import write_private

    write_private(out, text)


def investigation_of(path: Path, conditions_text: str | None, fmt: str) -> str:
    """The investigation of a session folder or a recording, rendered; the manifest's conditions by default."""
    from wiretap.export.report_output import load_report
    from wiretap.lab.conditions import parse_conditions
    from wiretap.lab.investigation import build_investigation
    from wiretap.lab.investigation_output import render

    conditions = parse_conditions(conditions_text)
    report = load_report(path, "html" if fmt == "html" else "text")
    if conditions is None and report.parts:
        from wiretap.recording.folders import open_session

        found = open_session(path).manifest.get("lab")
        names = found.get("conditions") if isinstance(found, dict) else None
        if isinstance(names, list) and names:
            conditions = parse_conditions(",".join(str(n) for n in names))
    return render(build_investigation(report, conditions), report, fmt)
