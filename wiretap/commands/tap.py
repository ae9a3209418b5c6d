"""``wiretap tap``: a stdio server run through the tap."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from wiretap.commands.common import MAX_SIZE_OPTION, OVERLOAD_OPTION, recording_out
from wiretap.otel.live import follow_recording, otlp_done, otlp_options
from wiretap.transports.process import exit_like


@click.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--out", "-o", type=click.Path(), callback=recording_out, help="Recording file, or a folder for it (DIR/)."
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
