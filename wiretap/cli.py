"""The command line: a thin layer of click over the modules that do the work."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import click

from wiretap import __version__
from wiretap.commands.common import MAX_SIZE_OPTION, quiet_broken_pipe
from wiretap.errors import ExitStatus, user_error
from wiretap.otel.live import client_env, follow_session, otlp_done, otlp_options
from wiretap.transports.process import exit_like

LAZY = {
    "check": "wiretap.commands.check:check",
    "compare": "wiretap.commands.diff:compare",
    "config": "wiretap.commands.config:config_snippet",
    "demo": "wiretap.commands.demo:demo",
    "diff": "wiretap.commands.diff:diff",
    "export": "wiretap.commands.export:export",
    "import": "wiretap.commands.imports:import_group",
    "lab": "wiretap.commands.lab:lab",
    "mcp": "wiretap.commands.mcp:mcp",
    "otel": "wiretap.commands.otel:otel",
    "proxy": "wiretap.commands.proxy:proxy",
    "replay": "wiretap.commands.replay:replay",
    "report": "wiretap.commands.report:report",
    "schema": "wiretap.commands.schema:schema",
    "scrub": "wiretap.commands.scrub:scrub",
    "sessions": "wiretap.commands.sessions:sessions",
    "show": "wiretap.commands.show:show",
    "tap": "wiretap.commands.tap:tap",
    "ui": "wiretap.commands.ui:ui",
}
"""Every command but ``wrap``, imported only when it is run (``wiretap/commands/``): every ``wiretap tap``
start (one per MCP server a client launches) would otherwise import them all."""


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


@click.group(cls=Wiretap, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="wiretap")
def cli() -> None:
    """See what really crosses the wire between an AI client and its MCP servers and A2A agents."""


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


def routed(args: list[str]) -> list[str]:
    """The arguments as the commands take them: ``wiretap [--out DIR] -- claude …`` is the wrap command
    without its name, ``wiretap lab [OPTIONS] -- claude …`` the lab's run command."""
    if "--" in args and (not args or not is_command(args[0])):
        return ["wrap", *args]
    if args[:1] == ["lab"] and "--" in args:
        from wiretap.commands.lab import routed as lab_routed

        return ["lab", *lab_routed(args[1:])]
    return args


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    cli(args=routed(args), prog_name="wiretap")
