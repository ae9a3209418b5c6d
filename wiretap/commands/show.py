"""``wiretap show``: a recording as a timeline."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from wiretap.commands.common import reading_a_whole_recording


@click.command()
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
    reading_a_whole_recording()
    from wiretap.render.console import printer_for
    from wiretap.render.filters import RowFilter
    from wiretap.render.show import show as show_timeline

    keep = RowFilter(methods, direction, text, since, until)
    printer = printer_for(sys.stdout, as_json=as_json, color=color)
    with contextlib.suppress(KeyboardInterrupt):
        show_timeline(
            recording, printer, sys.stdout, keep, server=server, follow=follow, absolute=absolute, notes=sys.stderr
        )
