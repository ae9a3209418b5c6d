"""``wiretap replay``: the click command, a thin layer over the player (server) and the driver (client)."""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap.errors import Unavailable
from wiretap.replay.matchers import DEFAULT_MATCH_ON, MATCHERS, parse_match_on
from wiretap.replay.pace import Pace
from wiretap.replay.volatile import Volatile

if TYPE_CHECKING:  # the player pulls in the analyses: imported when a replay runs, not with every command
    from wiretap.replay.plan import ReplayOptions
    from wiretap.replay.player import Player
    from wiretap.replay.script import Script


def _pace(_ctx: click.Context, _param: click.Parameter, value: str) -> Pace:
    try:
        return Pace.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _match_on(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[str, ...]:
    try:
        return parse_match_on(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("recording", type=click.Path(path_type=Path, dir_okay=False, readable=False))
@click.option(
    "--as",
    "role",
    type=click.Choice(["server", "client"]),
    default="server",
    show_default=True,
    help="Play the recorded server to a live client, or the recorded client to a live server.",
)
@click.option("--listen", "-l", help="Serve HTTP on HOST:PORT (0: a free port) instead of stdio (--as server).")
@click.option("--upstream", "-u", help="The live server's URL (--as client, instead of a SERVER command).")
@click.option(
    "--match-on",
    default=",".join(DEFAULT_MATCH_ON),
    show_default=True,
    callback=_match_on,
    help=f"What must agree for a live request to match a recorded one: {', '.join(MATCHERS)}.",
)
@click.option(
    "--pace",
    default="recorded",
    show_default=True,
    callback=_pace,
    help="recorded (wait as long as the recording did), fast, or a factor (2: twice as fast).",
)
@click.option("--ignore", "ignored", multiple=True, help="Also ignore this key wherever it appears (repeatable).")
@click.option("--strict", is_flag=True, help="Exit non-zero if any live request had no recorded match.")
@click.option("--no-stderr", is_flag=True, help="Do not replay the server's recorded stderr lines.")
@click.option("--summary", type=click.Path(path_type=Path, dir_okay=False), help="Write a JSON summary here.")
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Record the live run here (--as client).")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds to wait for each live response (--as client).",
)
@click.argument("server", nargs=-1, type=click.UNPROCESSED)
def replay(
    recording: Path,
    role: str,
    listen: str | None,
    upstream: str | None,
    match_on: tuple[str, ...],
    pace: Pace,
    ignored: tuple[str, ...],
    strict: bool,
    no_stderr: bool,
    summary: Path | None,
    out: Path | None,
    timeout: float,
    server: tuple[str, ...],
) -> None:
    """Replay a RECORDING: as the server (stdio, or HTTP with --listen), or as the client against a live
    server (-- SERVER [ARGS...], or --upstream URL).

    \b
    wiretap replay rec.jsonl                       # a stdio server: put it where the server command was
    wiretap replay rec.jsonl --listen 127.0.0.1:0  # an HTTP server; prints its URL
    wiretap replay rec.jsonl --as client -- python -m my_server
    """
    from wiretap.replay.loader import load_script
    from wiretap.replay.plan import ReplayOptions

    volatile = Volatile.with_extra(ignored)
    script = load_script(recording, volatile)
    # What was loaded lives as long as the replay: the cyclic collector need not walk it again (with a
    # long recording, a full collection landing on a live request would hold it up for milliseconds).
    gc.freeze()
    if role == "client":
        if listen is not None:
            raise click.UsageError("--listen is for --as server; --as client talks to -- SERVER or --upstream URL")
        if bool(server) == bool(upstream):
            raise click.UsageError("--as client needs a SERVER command after -- or --upstream URL (one of them)")
        if upstream is not None:
            from wiretap.run.proxy import check_upstream

            check_upstream(upstream)
        from wiretap.replay.client import replay_client
        from wiretap.replay.drive import ClientOptions

        options = ClientOptions(pace=pace, volatile=volatile, timeout=timeout, match_on=match_on, out=out)
        result = replay_client(script, list(server), upstream, options, out=sys.stdout, notes=sys.stderr)
        _write_summary(summary, result.summary())
        sys.exit(result.exit_status)
    if server or upstream or out is not None:
        raise click.UsageError("--as server takes no SERVER command, --upstream or --out (those are for --as client)")
    options_ = ReplayOptions(match_on=match_on, pace=pace, volatile=volatile, replay_stderr=not no_stderr)
    player = _serve(script, options_, listen)
    player.report_misses(sys.stderr)
    _write_summary(summary, player.summary())
    sys.exit(1 if strict and player.misses else 0)


def _serve(script: Script, options: ReplayOptions, listen: str | None) -> Player:
    import asyncio

    from wiretap.replay.player import Player

    async def run() -> Player:
        player = Player(script, options)
        if listen is None:
            from wiretap.replay.stdio import serve_stdio

            await serve_stdio(player)
        else:
            from wiretap.replay.http import serve_http

            await serve_http(player, listen, announce=sys.stdout)
        return player

    try:
        return asyncio.run(run())
    except OSError as exc:
        raise Unavailable(f"cannot listen on {listen}: {os.strerror(exc.errno) if exc.errno else exc}") from None


def _write_summary(path: Path | None, summary: dict[str, object]) -> None:
    if path is not None:
        path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
