"""The command line: a thin layer of click over the modules that do the work."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from wiretap import __version__
from wiretap.errors import BadInput, ExitStatus, user_error
from wiretap.http.guard_options import guard_options, guard_settings
from wiretap.otel.live import client_env, follow_recording, follow_session, otlp_done, otlp_options
from wiretap.transports.process import exit_like

if TYPE_CHECKING:
    from wiretap.analysis.model import Report
    from wiretap.judge.check import Judged
    from wiretap.judge.profiles import Source


LAZY = {
    "export": "wiretap.export.command:export",
    "import": "wiretap.importers.command:import_group",
    "lab": "wiretap.lab.command:lab",
    "mcp": "wiretap.mcp.command:mcp",
    "otel": "wiretap.otel.command:otel",
    "replay": "wiretap.replay.cli:replay",
    "schema": "wiretap.schemas.command:schema",
    "scrub": "wiretap.scrub.command:scrub",
    "ui": "wiretap.ui.command:ui",
}
"""Command groups imported only when they are run: every ``wiretap tap`` start (one per MCP server a
client launches) would otherwise import them all."""


class Wiretap(click.Group):
    """The command group: user errors from any command become one line and a documented exit status."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY:
            module, name = LAZY[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

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
        if args and not is_command(args[0]) and not args[0].startswith("-") and _is_client(args[0]):
            hint = f"to run that client with its servers tapped: wiretap -- {' '.join(args)}"
            raise click.UsageError(f"no command {args[0]!r}; {hint}")
        return super().resolve_command(ctx, args)


def is_command(word: str) -> bool:
    return word in cli.commands or word in LAZY


def _is_client(word: str) -> bool:
    from shutil import which

    from wiretap.wrap.clients import CLIENTS

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


OVERLOAD_OPTION: tuple[tuple[str], dict[str, Any]] = (
    ("--on-overload",),
    {
        "type": click.Choice(["block", "drop"]),
        "default": "block",
        "show_default": True,
        "help": "When the recorder falls behind by its whole buffer: slow the traffic down (block), "
        "or keep its pace and record exact counts of what was not recorded (drop).",
    },
)


def _max_size(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    from wiretap.recording.cap import parse_size

    return parse_size(value)


MAX_SIZE_OPTION: tuple[tuple[str], dict[str, Any]] = (
    ("--max-size",),
    {
        "default": "1G",
        "show_default": True,
        "metavar": "SIZE",
        "callback": _max_size,
        "help": "Store at most SIZE per recording (each server's, in a session): 500K, 64M, 1G, bytes; "
        "unlimited or 0: no cap. Past it the traffic still passes whole; the recording counts what it does not store.",
    },
)


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--out", "-o", type=click.Path(), callback=_recording_out, help="Recording file, or a folder for it (DIR/)."
)
@click.option("--name", "-n", help="Name for the server in the recording (default: from the command).")
@click.option("--no-redact", is_flag=True, help="Record credentials as they are (they are redacted by default).")
@click.option(*OVERLOAD_OPTION[0], **OVERLOAD_OPTION[1])
@click.option(*MAX_SIZE_OPTION[0], **MAX_SIZE_OPTION[1])
@click.argument("server", nargs=-1, required=True, type=click.UNPROCESSED)
@otlp_options
def tap(
    out: Path | None, name: str | None, no_redact: bool, on_overload: str, max_size: int, server: tuple[str, ...]
) -> None:
    """Run an MCP stdio SERVER, relay its stdio byte for byte, and record every message.

    Use it where a client's config names the server command: wiretap tap -- SERVER [ARGS...]
    """
    from wiretap.run.tap import tap as run_tap

    follow_recording(out)
    returncode = run_tap(
        list(server), out=out, name=name, redact=not no_redact, on_overload=on_overload, max_size=max_size
    )
    otlp_done()
    sys.stderr.flush()
    exit_like(returncode)


@cli.command()
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
@click.option("--absolute", is_flag=True, help="Times as UTC wall-clock times (to the millisecond), not seconds.")
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
    absolute: bool,
    color: bool | None,
) -> None:
    """Print a recording as a timeline; a session folder's recordings interleave on one clock
    (0: the client's start), with a server column."""
    if since is not None and until is not None and since > until:
        raise click.BadParameter(f"--since {since:g} is after --until {until:g}: nothing could be shown")
    from wiretap.render.console import printer_for
    from wiretap.render.filters import RowFilter
    from wiretap.render.show import show as show_timeline

    keep = RowFilter(methods, direction, text, since, until)
    printer = printer_for(sys.stdout, as_json=as_json, color=color)
    with contextlib.suppress(KeyboardInterrupt):
        show_timeline(
            recording, printer, sys.stdout, keep, server=server, follow=follow, absolute=absolute, notes=sys.stderr
        )


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
@click.option("--server", help="For a session folder: only this server (default: every server, on one clock).")
@click.option("--summary", is_flag=True, help="Also append the markdown report to $GITHUB_STEP_SUMMARY.")
def report(recording: Path, fmt: str, server: str | None, summary: bool) -> None:
    """Measure a recording (or a session folder): poll intervals, cancel on exit, open questions, findings."""
    from wiretap.export.report_output import load_report, write_report

    result = load_report(recording, fmt, server)
    try:
        write_report(result, fmt, sys.stdout)
    except BrokenPipeError:
        quiet_broken_pipe()
    if summary:
        _report_summary(result)


def _report_summary(result: Report) -> None:
    import io

    from wiretap.render import ci
    from wiretap.render.report_text import render_markdown

    text = io.StringIO()
    render_markdown(result, text)
    ci.append_step_summary(text.getvalue())


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
@click.option("--junit-xml", type=click.Path(path_type=Path, dir_okay=False), help="Also write JUnit XML here.")
@click.option("--summary", is_flag=True, help="Append markdown to $GITHUB_STEP_SUMMARY (GitHub Actions).")
def check(recording: Path, expectations: Path, junit_xml: Path | None, summary: bool) -> None:
    """Check a recording (or session folder) against expectations; exit 1 if any fails, 2 on a bad file."""
    from wiretap.judge.check import check as run_checks
    from wiretap.judge.check import load_expectations
    from wiretap.recording.folders import is_session

    judged = run_checks(recording, load_expectations(expectations))
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
    from wiretap.files import write_private
    from wiretap.render import ci

    if junit_xml is not None:
        write_private(junit_xml, ci.junit_xml(judged, expectations))
    if summary:
        ci.append_step_summary(ci.check_markdown(judged, expectations))


@cli.command()
@click.argument("a", type=click.Path(path_type=Path, readable=False))
@click.argument("b", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format", "-f", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True
)
@click.option("--summary", is_flag=True, help="Also append the markdown diff to $GITHUB_STEP_SUMMARY.")
def diff(a: Path, b: Path, fmt: str, summary: bool) -> None:
    """Compare two recordings or session folders by behaviour; exit 0 same, 1 different, 2 bad input."""
    import io

    from wiretap.judge.diff import diff as compare
    from wiretap.render import ci
    from wiretap.render.diff import RENDERERS

    result = compare(*_sources(a, b))
    try:
        RENDERERS[fmt](result, sys.stdout)
    except BrokenPipeError:
        quiet_broken_pipe()
    if summary:
        text = io.StringIO()
        RENDERERS["markdown"](result, text)
        ci.append_step_summary(text.getvalue())
    sys.exit(1 if result.differs else 0)


@cli.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format", "-f", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True
)
def compare(sources: tuple[Path, ...], fmt: str) -> None:
    """Tabulate clients' behaviour side by side: a column per SESSION or RECORDING, a row per behaviour."""
    from wiretap.judge.compare import compare as tabulate
    from wiretap.render.compare import RENDERERS

    result = tabulate(_sources(*sources))
    try:
        RENDERERS[fmt](result, sys.stdout)
    except BrokenPipeError:
        quiet_broken_pipe()


@cli.command("config")
@click.argument("client", type=click.Choice(["claude-desktop", "cursor", "vscode"]))
@click.option("--name", "-n", required=True, help="The server's name in the client's config.")
@click.option("--url", help="An HTTP server's URL (routed through 'wiretap proxy').")
@click.option("--listen", default="127.0.0.1:8765", show_default=True, help="Where that proxy listens.")
@click.option("--env", "-e", "env", multiple=True, help="KEY=VALUE for a stdio server's environment (repeatable).")
@click.option(
    "--out", "-o", type=click.Path(path_type=Path), help="Where recordings go (default: ~/wiretap-recordings)."
)
@click.argument("server", nargs=-1, type=click.UNPROCESSED)
def config_snippet(
    client: str,
    name: str,
    url: str | None,
    listen: str,
    env: tuple[str, ...],
    out: Path | None,
    server: tuple[str, ...],
) -> None:
    """Print the config snippet that routes a server through wiretap for a desktop CLIENT; edits no file.

    \b
    wiretap config cursor --name files -- npx -y @modelcontextprotocol/server-filesystem ~/notes
    wiretap config vscode --name web --url https://example.com/mcp
    """
    import json

    from wiretap.wrap.desktop import NotSupported, http_snippet, stdio_snippet

    folder = (out or Path.home() / "wiretap-recordings").expanduser().resolve()
    pairs = dict(item.split("=", 1) for item in env if "=" in item)
    try:
        if bool(url) == bool(server):
            raise NotSupported("give either --url URL or -- COMMAND [ARGS...], not both or neither")
        if len(pairs) != len(env):
            raise NotSupported(f"--env takes KEY=VALUE, not {next(e for e in env if '=' not in e)!r}")
        snippet = (
            http_snippet(client, name, url, listen, folder)
            if url
            else stdio_snippet(client, name, list(server), pairs, folder)
        )
    except NotSupported as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    click.echo(json.dumps(snippet.config, indent=2))
    for note in snippet.notes:
        click.echo(f"# {note}", err=True)


def _sources(*paths: Path) -> list[Source]:
    """Recordings or session folders as profiles; a bad one is a one-line error and exit status 2."""
    from wiretap.judge.profiles import load

    return [load(path) for path in paths]


@cli.command()
@click.option(
    "--in",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("wiretap-sessions"),
    show_default=True,
    help="Where the sessions are.",
)
@click.option("--limit", "-n", type=click.IntRange(1), help="List at most this many (default: 20).")
@click.option("--prune", is_flag=True, help="Remove old sessions (by --keep, --older-than); never running ones.")
@click.option("--keep", metavar="N", help="With --prune: keep the N newest sessions.")
@click.option(
    "--older-than", metavar="DURATION", help="With --prune: only sessions that started longer ago (30d, 12h, 90m, 45s)."
)
@click.option("--dry-run", is_flag=True, help="With --prune: list what would be removed; remove nothing.")
def sessions(
    root: Path, limit: int | None, prune: bool, keep: str | None, older_than: str | None, dry_run: bool
) -> None:
    """List recent sessions recorded by 'wiretap -- CLIENT …', newest first; or prune old ones.

    A session goes only when every rule given lets it go: --keep 10 --older-than 30d keeps the
    10 newest and every session from the last 30 days."""
    if prune:
        if limit is not None:
            raise BadInput("--limit lists sessions; it does not go with --prune")
        _prune_sessions(root, keep, older_than, dry_run)
        return
    pruning = {"--keep": keep is not None, "--older-than": older_than is not None, "--dry-run": dry_run}
    if given := [name for name, is_given in pruning.items() if is_given]:
        raise BadInput(f"{given[0]} goes with --prune")
    from wiretap.recording.folders import recent_sessions

    found = recent_sessions(root, limit or 20)
    if not found:
        click.echo(f"no sessions under {root}", err=True)
        return
    for session in found:
        click.echo(session.describe())


def _prune_sessions(root: Path, keep: str | None, older_than: str | None, dry_run: bool) -> None:
    import time

    from wiretap.render.progress import progress_bar
    from wiretap.wrap import prune

    rule = prune.rule_from(keep, older_than)
    if not root.is_dir():
        click.echo(f"no sessions under {root}", err=True)
        return
    plan = prune.plan(root, rule, time.time())
    for path, reason in plan.skipped:
        click.echo(f"skipped {path}: {reason}")
    done = []
    with progress_bar(len(plan.remove), "measuring" if dry_run else "removing") as advance:
        for removed in prune.remove_sessions(plan.remove, dry_run=dry_run):
            done.append(removed)
            print(prune.removed_line(removed, dry_run=dry_run), file=sys.stderr if removed.error else sys.stdout)
            advance(removed.path.name)
    click.echo(prune.summary_line(plan, done, dry_run=dry_run))
    if any(r.error for r in done):
        sys.exit(int(ExitStatus.UNREADABLE))


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path),
    help="Session folder (if it holds an earlier session: a new one beside it, NAME.1, NAME.2…).",
)
@click.option("--ui", "with_ui", is_flag=True, help="Also serve the live view (wiretap ui); its URL goes to stderr.")
@click.option(
    "--reverse",
    is_flag=True,
    help="Give HTTP servers a proxy URL each instead of one forward proxy (OAuth-protected servers refuse it).",
)
@click.option(*MAX_SIZE_OPTION[0], **MAX_SIZE_OPTION[1])
@click.argument("client", nargs=-1, required=True, type=click.UNPROCESSED)
@otlp_options
def wrap(
    out: Path | None, client: tuple[str, ...], max_size: int, with_ui: bool = False, reverse: bool = False
) -> None:
    """Run an MCP client with every server it uses tapped: wiretap -- claude [ARGS...]"""
    from wiretap.ui.beside import start_ui_beside
    from wiretap.wrap.session import ClientNotStarted, Session

    try:
        session = Session(list(client), out=out, cwd=Path.cwd(), env=os.environ, max_size=max_size, reverse=reverse)
        session.client_env = client_env(session.client.NAME, os.environ)
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
        from wiretap.recording.folders import open_session

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


def routed(args: list[str]) -> list[str]:
    """The arguments as the commands take them: ``wiretap [--out DIR] -- claude …`` is the wrap command
    without its name, ``wiretap lab [OPTIONS] -- claude …`` the lab's run command."""
    if "--" in args and (not args or not is_command(args[0])):
        return ["wrap", *args]
    if args[:1] == ["lab"] and "--" in args:
        from wiretap.lab.command import routed as lab_routed

        return ["lab", *lab_routed(args[1:])]
    return args


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    cli(args=routed(args), prog_name="wiretap")
