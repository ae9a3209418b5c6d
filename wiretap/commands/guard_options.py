"""The proxy's guard flags, as click options (kept apart so the CLI registers them with one line)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from wiretap.wire.http.guard import Limits

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULT = Limits()

_OPTIONS = (
    click.option(
        "--allow-host",
        "allow_hosts",
        multiple=True,
        metavar="NAME",
        help="Also accept requests whose Host is NAME (or NAME:PORT; '*' for any). Default: loopback only.",
    ),
    click.option(
        "--allow-origin",
        "allow_origins",
        multiple=True,
        metavar="ORIGIN",
        help="Also accept requests from this browser Origin ('*' for any). Default: loopback origins only.",
    ),
    click.option("--expose", is_flag=True, help="Allow --listen on an address beyond loopback (prints a warning)."),
    click.option(
        "--connect-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=_DEFAULT.upstream_connect,
        show_default=True,
        help="Seconds to connect to the upstream (then 504).",
    ),
    click.option(
        "--upstream-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=_DEFAULT.upstream_head,
        show_default=True,
        help="Seconds for the upstream's response head (then 504).",
    ),
    click.option(
        "--client-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=_DEFAULT.client_head,
        show_default=True,
        help="Seconds a client connection may wait without sending a request head (idle ones too),"
        " or without a byte in the middle of a request body (then 408 and closed).",
    ),
    click.option(
        "--max-idle",
        type=click.IntRange(min=0),
        default=_DEFAULT.max_idle,
        show_default=True,
        help="Idle client connections kept at most (the longest idle are closed first).",
    ),
)


def guard_options(command: F) -> F:
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def guard_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments for ``proxying.proxy`` from the parsed options."""
    return {
        "allow_hosts": frozenset(options["allow_hosts"]),
        "allow_origins": frozenset(options["allow_origins"]),
        "expose": options["expose"],
        "limits": Limits(
            upstream_connect=options["connect_timeout"],
            upstream_head=options["upstream_timeout"],
            client_head=options["client_timeout"],
            max_idle=options["max_idle"],
        ),
    }
