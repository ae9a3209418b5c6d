"""The command line: a thin layer of click over the modules that do the work."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap import __version__
from wiretap.export.command import export
from wiretap.recording.migrate import UnsupportedFormat
from wiretap.recording.reader import NotARecording
from wiretap.render.console import printer_for
from wiretap.render.filters import RowFilter
from wiretap.replay.cli import replay
from wiretap.sessions import NotASession, is_session, open_session, recent_sessions
from wiretap.show import show as show_timeline
from wiretap.transports.process import exit_like

if TYPE_CHECKING:
    from wiretap.checking import Judged


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="wiretap")
def cli() -> None:
    """See what really crosses the wire between an AI client and its MCP servers and A2A agents."""


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Recording file, or a directory for it.")
@click.option("--name", "-n", help="Name for the server in the recording (default: from the command).")
@click.option("--no-redact", is_flag=True, help="Record credentials as they are (they are redacted by default).")
@click.argument("server", nargs=-1, required=True, type=click.UNPROCESSED)
def tap(out: Path | None, name: str | None, no_redact: bool, server: tuple[str, ...]) -> None:
    """Run an MCP stdio SERVER, relay its stdio byte for byte, and record every message.

    Use it where a client's config names the server command: wiretap tap -- SERVER [ARGS...]
    """
    from wiretap.tapping import tap as run_tap

    returncode = run_tap(list(server), out=out, name=name, redact=not no_redact)
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
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Recording file, or a directory for it.")
@click.option("--name", "-n", help="Name for the upstream in the recording (default: its host).")
@click.option("--no-redact", is_flag=True, help="Record credentials as they are (they are redacted by default).")
@click.option(
    "--upstream-cafile",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Trust this CA (PEM) for an https upstream.",
)
@click.option("--insecure", is_flag=True, help="Do not verify an https upstream's certificate.")
def proxy(
    upstream: str,
    listen: str,
    out: Path | None,
    name: str | None,
    no_redact: bool,
    upstream_cafile: Path | None,
    insecure: bool,
) -> None:
    """Proxy an MCP Streamable HTTP server or an A2A agent, streaming, and record every message.

    Prints the URL clients should use, then serves until interrupted.
    """
    from wiretap.proxying import BadUpstream, ssl_context
    from wiretap.proxying import proxy as run_proxy

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
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {listen}: {exc.strerror or exc}") from None


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path))
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
    as_json: bool,
    color: bool | None,
) -> None:
    """Print a recording (or each recording of a session folder) as a timeline."""
    keep = RowFilter(methods, direction, text, since, until)
    out = sys.stdout
    try:
        for heading, path in _recordings_of(recording):
            if heading and not as_json:
                out.write(f"== {heading}\n")
            printer = printer_for(out, as_json=as_json, color=color)
            show_timeline(path, printer, out, keep, follow=follow, notes=sys.stderr)
    except (NotARecording, UnsupportedFormat, NotASession) as exc:
        raise click.ClickException(str(exc)) from None
    except BrokenPipeError:
        quiet_broken_pipe()
    except OSError as exc:
        raise click.ClickException(f"{recording}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        pass


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default="text",
    show_default=True,
    help="Rich tables, JSON for CI, Markdown for an issue or a post, or one self-contained HTML page.",
)
@click.option("--summary", is_flag=True, help="Also append the markdown report to $GITHUB_STEP_SUMMARY.")
def report(recording: Path, fmt: str, summary: bool) -> None:
    """Measure a recording (or a session folder): poll intervals, cancel on exit, open questions, findings."""
    import json

    from rich.console import Console

    from wiretap.analysis.report import report_recording
    from wiretap.render.report import render_markdown, render_text

    try:
        client_exit = open_session(recording).client_exited_monotonic if is_session(recording) else None
        results = [report_recording(path, client_exited_monotonic=client_exit) for _, path in _recordings_of(recording)]
    except (NotARecording, UnsupportedFormat, NotASession) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{recording}: {exc.strerror or exc}") from None
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
    if summary:
        _report_summary(results)


def _report_summary(results: list[dict[str, object]]) -> None:
    import io

    from wiretap import ci
    from wiretap.render.report import render_markdown

    text = io.StringIO()
    for result in results:
        render_markdown(result, text)
    try:
        ci.append_step_summary(text.getvalue())
    except OSError as exc:
        raise click.ClickException(f"{exc.filename}: {exc.strerror or exc}") from None


@cli.command()
@click.argument("recording", type=click.Path(path_type=Path))
@click.option(
    "--expect",
    "-e",
    "expectations",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The expectations (YAML; see recordings/*.expect.yaml).",
)
@click.option("--junit-xml", type=click.Path(path_type=Path, dir_okay=False), help="Also write JUnit XML here.")
@click.option("--summary", is_flag=True, help="Append markdown to $GITHUB_STEP_SUMMARY (GitHub Actions).")
def check(recording: Path, expectations: Path, junit_xml: Path | None, summary: bool) -> None:
    """Check a recording (or session folder) against expectations; exit 1 if any fails, 2 on a bad file."""
    from wiretap.checking import check as run_checks
    from wiretap.checking import load_expectations
    from wiretap.expect.schema import BadExpectations

    try:
        judged = run_checks(recording, load_expectations(expectations))
    except BadExpectations as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except (NotARecording, UnsupportedFormat, NotASession) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{recording}: {exc.strerror or exc}") from None
    failed = [j for j in judged if not j.outcome.ok]
    for j in judged:
        mark = "ok  " if j.outcome.ok else "FAIL"
        where = f"  [{j.recording.name}]" if is_session(recording) else ""
        click.echo(f"{mark} {expectations}:{j.expectation.line} {j.expectation.name}: {j.outcome.summary}{where}")
        for line in [] if j.outcome.ok else j.outcome.evidence:
            click.echo(f"       {line}")
    click.echo(f"{len(judged) - len(failed)} of {len(judged)} expectations hold")
    _ci_outputs(judged, expectations, junit_xml, summary)
    sys.exit(1 if failed else 0)


def _ci_outputs(judged: list[Judged], expectations: Path, junit_xml: Path | None, summary: bool) -> None:
    from wiretap import ci

    try:
        if junit_xml is not None:
            junit_xml.write_bytes(ci.junit_xml(judged, expectations))
        if summary:
            ci.append_step_summary(ci.check_markdown(judged, expectations))
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or junit_xml}: {exc.strerror or exc}") from None


@cli.command()
@click.argument("a", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("b", type=click.Path(path_type=Path, dir_okay=False))
def diff(a: Path, b: Path) -> None:
    """Compare two recordings by behaviour; exit 1 when they differ."""
    from wiretap.diffing import diff as compare

    try:
        result = compare(a, b)
    except (NotARecording, UnsupportedFormat) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename}: {exc.strerror or exc}") from None
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
@click.option("--out", "-o", type=click.Path(path_type=Path, file_okay=False), help="Session folder.")
@click.argument("client", nargs=-1, required=True, type=click.UNPROCESSED)
def wrap(out: Path | None, client: tuple[str, ...]) -> None:
    """Run an MCP client with every server it uses tapped: wiretap -- claude [ARGS...]"""
    from wiretap.clients import UnknownClient
    from wiretap.clients.claude_code import ConfigError
    from wiretap.session import ClientNotStarted, Session

    try:
        session = Session(list(client), out=out, cwd=Path.cwd(), env=os.environ)
        returncode = session.run()
    except ClientNotStarted as exc:
        click.echo(f"wiretap: {exc}", err=True)
        sys.exit(exc.status)
    except (UnknownClient, ConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    except FileExistsError as exc:
        raise click.ClickException(f"{exc.filename}: exists; choose another --out") from None
    except (OSError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    exit_like(returncode)


def _recordings_of(path: Path) -> list[tuple[str, Path]]:
    """A recording, or a session folder's recordings with a heading each."""
    if path.is_dir():
        session = open_session(path)
        return [(f"{server['name']} ({server['transport']}): {file}", file) for server, file in session.recordings]
    return [("", path)]


@cli.command()
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Where to write the demo recording.")
def demo(out: Path | None) -> None:
    """Run a bundled demo server and client through the tap, then show the recording."""
    from wiretap.demo.run import run_demo

    sys.exit(run_demo(out))


def quiet_broken_pipe() -> None:
    """The reader went away (``| head``): stop quietly, as other Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


cli.add_command(replay)
cli.add_command(export)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # "wiretap [--out DIR] -- claude …" is the wrap command without its name.
    if "--" in args and (not args or args[0] not in cli.commands):
        args = ["wrap", *args]
    cli(args=args, prog_name="wiretap")
