"""The command line: a thin layer of click over the modules that do the work."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from wiretap import __version__
from wiretap.errors import ExitStatus, user_error
from wiretap.export.command import export
from wiretap.otel.command import otel
from wiretap.otel.live import follow_recording, follow_session, otlp_done, otlp_options
from wiretap.render.console import printer_for
from wiretap.render.filters import RowFilter
from wiretap.replay.cli import replay
from wiretap.sessions import is_session, one_recording, open_session, recent_sessions
from wiretap.show import show as show_timeline
from wiretap.transports.process import exit_like
from wiretap.ui.beside import proxy_with_ui, start_ui_beside
from wiretap.ui.command import ui


class Wiretap(click.Group):
    """The command group: user errors from any command become one line and a documented exit status."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            quiet_broken_pipe()
        except KeyboardInterrupt:
            ctx.exit(int(ExitStatus.INTERRUPTED))
        except Exception as exc:
            known = user_error(exc)
            if known is None:
                raise
            message, status = known
            click.echo(f"Error: {message}", err=True)
            ctx.exit(int(status))

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[--out DIR] -- CLIENT [ARGS]...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="   or: ")

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-") and _is_client(args[0]):
            hint = f"to run that client with its servers tapped: wiretap -- {' '.join(args)}"
            raise click.UsageError(f"no command {args[0]!r}; {hint}")
        return super().resolve_command(ctx, args)


def _is_client(word: str) -> bool:
    from shutil import which

    from wiretap.clients import CLIENTS

    return Path(word).name in CLIENTS or which(word) is not None


def _recording_out(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Path | None:
    """``--out DIR/`` names a folder even when it does not exist yet: create it (a failure is the recorder's to say)."""
    if value is None:
        return None
    if value.endswith(("/", os.sep)):
        with contextlib.suppress(OSError):
            Path(value).mkdir(parents=True, exist_ok=True, mode=0o700)
    return Path(value)


@click.group(cls=Wiretap, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="wiretap")
def cli() -> None:
    """See what really crosses the wire between an AI client and its MCP servers and A2A agents."""


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--out", "-o", type=click.Path(), callback=_recording_out, help="Recording file, or a folder for it (DIR/)."
)
@click.option("--name", "-n", help="Name for the server in the recording (default: from the command).")
@click.option("--no-redact", is_flag=True, help="Record credentials as they are (they are redacted by default).")
@click.argument("server", nargs=-1, required=True, type=click.UNPROCESSED)
@otlp_options
def tap(out: Path | None, name: str | None, no_redact: bool, server: tuple[str, ...]) -> None:
    """Run an MCP stdio SERVER, relay its stdio byte for byte, and record every message.

    Use it where a client's config names the server command: wiretap tap -- SERVER [ARGS...]
    """
    from wiretap.tapping import tap as run_tap

    follow_recording(out)
    returncode = run_tap(list(server), out=out, name=name, redact=not no_redact)
    otlp_done()
    sys.stderr.flush()
    exit_like(returncode)


@cli.command()
@click.option("--upstream", "-u", required=True, help="The server or agent's URL (http:// or https://).")
@click.option(
    "--listen",
    "-l",
    default="127.0.0.1:0",
    show_default=True,
    help="HOST:PORT to listen on (0: a free port).",
)
@click.option(
    "--out", "-o", type=click.Path(), callback=_recording_out, help="Recording file, or a folder for it (DIR/)."
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
@otlp_options
def proxy(
    upstream: str,
    listen: str,
    out: Path | None,
    name: str | None,
    no_redact: bool,
    upstream_cafile: Path | None,
    insecure: bool,
    with_ui: bool = False,
) -> None:
    """Proxy an MCP Streamable HTTP server or an A2A agent, streaming, and record every message.

    Prints the URL clients should use, then serves until interrupted.
    """
    from wiretap.proxying import BadUpstream, ssl_context
    from wiretap.proxying import proxy as run_proxy

    out = proxy_with_ui(upstream, out, name) if with_ui else out
    follow_recording(out)
    try:
        run_proxy(
            upstream,
            listen=listen,
            out=out,
            name=name,
            redact=not no_redact,
            tls=ssl_context(upstream_cafile, insecure),
        )
    except BadUpstream as exc:
        raise click.BadParameter(str(exc)) from None


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option("--follow", "-f", is_flag=True, help="Keep showing events as the recording grows.")
@click.option("--method", "-m", "methods", multiple=True, help="Only these methods (glob; repeatable).")
@click.option(
    "--dir",
    "direction",
    type=click.Choice(["in", "out"]),
    help="Only messages to (in) or from (out) the server.",
)
@click.option("--grep", "-g", "text", help="Only events that mention TEXT (case-insensitive).")
@click.option("--since", type=float, help="Only from this many seconds on.")
@click.option("--until", type=float, help="Only up to this many seconds.")
@click.option("--server", "-s", help="Only this server's recording (of a session folder).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per row, for machines.")
@click.option("--color/--no-color", default=None, help="Colour (default: when stdout is a terminal).")
def show(
    recording: Path,
    follow: bool,
    methods: tuple[str, ...],
    direction: str | None,
    text: str | None,
    since: float | None,
    until: float | None,
    server: str | None,
    as_json: bool,
    color: bool | None,
) -> None:
    """Print a recording as a timeline; a session folder's recordings interleave on one clock
    (0: the client's start), with a server column."""
    if since is not None and until is not None and since > until:
        raise click.BadParameter(f"--since {since:g} is after --until {until:g}: nothing could be shown")
    keep = RowFilter(methods, direction, text, since, until)
    printer = printer_for(sys.stdout, as_json=as_json, color=color)
    with contextlib.suppress(KeyboardInterrupt):
        show_timeline(recording, printer, sys.stdout, keep, server=server, follow=follow, notes=sys.stderr)


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default="text",
    show_default=True,
    help="Rich tables, JSON for CI, Markdown for an issue or a post, or one self-contained HTML page.",
)
def report(recording: Path, fmt: str) -> None:
    """Measure a recording (or a session folder): poll intervals, cancel on exit, open questions, findings."""
    import json

    from rich.console import Console

    from wiretap.analysis.report import report_recording
    from wiretap.render.report import render_markdown, render_text

    client_exit = open_session(recording).client_exited_monotonic if is_session(recording) else None
    results = [report_recording(path, client_exited_monotonic=client_exit) for _, path in _recordings_of(recording)]
    out = sys.stdout
    try:
        if fmt == "json":
            document: object = (
                results[0]
                if not is_session(recording)
                else {"session": open_session(recording).manifest, "reports": results}
            )
            out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        elif fmt == "markdown":
            for result in results:
                render_markdown(result, out)
        elif fmt == "html":
            from wiretap.export.html import render_html

            out.write(render_html(results))
        else:
            console = Console(file=out, highlight=False, soft_wrap=not out.isatty())
            for result in results:
                render_text(result, console)
    except BrokenPipeError:
        quiet_broken_pipe()


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--expect",
    "-e",
    "expectations",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, readable=False),
    help="The expectations (YAML; see recordings/*.expect.yaml).",
)
def check(recording: Path, expectations: Path) -> None:
    """Check a recording (or session folder) against expectations; exit 1 if any fails, 2 on a bad file."""
    from wiretap.checking import check as run_checks
    from wiretap.checking import load_expectations

    judged = run_checks(recording, load_expectations(expectations))
    failed = [j for j in judged if not j.outcome.ok]
    for j in judged:
        mark = "ok  " if j.outcome.ok else "FAIL"
        where = f"  [{j.recording.name}]" if is_session(recording) else ""
        click.echo(f"{mark} {expectations}:{j.expectation.line} {j.expectation.name}: {j.outcome.summary}{where}")
        for line in [] if j.outcome.ok else j.outcome.evidence:
            click.echo(f"       {line}")
    click.echo(f"{len(judged) - len(failed)} of {len(judged)} expectations hold")
    sys.exit(1 if failed else 0)


@cli.command()
@click.argument("a", type=click.Path(path_type=Path, readable=False))
@click.argument("b", type=click.Path(path_type=Path, readable=False))
def diff(a: Path, b: Path) -> None:
    """Compare two recordings by behaviour; exit 1 when they differ."""
    from wiretap.diffing import diff as compare

    result = compare(one_recording(a), one_recording(b))
    for title, lines in {**result.sections, **result.notes}.items():
        if lines:
            click.echo(f"== {title}" + (" (for information)" if title in result.notes else ""))
            for line in lines:
                click.echo(f"  {line}")
    click.echo("the recordings behave differently" if result.differs else "no difference in behaviour")
    sys.exit(1 if result.differs else 0)


@cli.command()
@click.option(
    "--in",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("wiretap-sessions"),
    show_default=True,
    help="Where the sessions are.",
)
@click.option("--limit", "-n", type=click.IntRange(1), default=20, show_default=True)
def sessions(root: Path, limit: int) -> None:
    """List recent sessions recorded by 'wiretap -- CLIENT …', newest first."""
    found = recent_sessions(root, limit)
    if not found:
        click.echo(f"no sessions under {root}", err=True)
        return
    for session in found:
        click.echo(session.describe())


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path),
    help="Session folder (if it holds an earlier session: a new one beside it, NAME.1, NAME.2…).",
)
@click.option("--ui", "with_ui", is_flag=True, help="Also serve the live view (wiretap ui); its URL goes to stderr.")
@click.argument("client", nargs=-1, required=True, type=click.UNPROCESSED)
@otlp_options
def wrap(out: Path | None, client: tuple[str, ...], with_ui: bool = False) -> None:
    """Run an MCP client with every server it uses tapped: wiretap -- claude [ARGS...]"""
    from wiretap.session import ClientNotStarted, Session

    try:
        session = Session(list(client), out=out, cwd=Path.cwd(), env=os.environ)
        if with_ui:
            start_ui_beside(session.folder)
        follow_session(session.folder)
        returncode = session.run()
    except ClientNotStarted as exc:
        click.echo(f"wiretap: {exc}", err=True)
        sys.exit(exc.status)
    otlp_done()
    exit_like(returncode)


def _recordings_of(path: Path) -> list[tuple[str, Path]]:
    """A recording, or a session folder's recordings with a heading each."""
    if path.is_dir():
        session = open_session(path)
        return [(f"{server['name']} ({server['transport']}): {file}", file) for server, file in session.recordings_of()]
    return [("", path)]


@cli.command()
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Where to write the demo recording.")
def demo(out: Path | None) -> None:
    """Run a bundled demo server and client through the tap, then show the recording."""
    from wiretap.demo.run import run_demo

    sys.exit(run_demo(out))


def quiet_broken_pipe() -> NoReturn:
    """The reader went away (``| head``): stop quietly, as other Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


cli.add_command(replay)
cli.add_command(export)
cli.add_command(ui)
cli.add_command(otel)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # "wiretap [--out DIR] -- claude …" is the wrap command without its name.
    if "--" in args and (not args or args[0] not in cli.commands):
        args = ["wrap", *args]
    cli(args=args, prog_name="wiretap")
