"""``wiretap schema recording|report|expect``: print a published JSON Schema."""

from __future__ import annotations

import sys

import click

from wiretap.schemas import NAMES, schema_text


@click.command()
@click.argument("name", type=click.Choice(NAMES))
def schema(name: str) -> None:
    """Print the JSON Schema of a recording line, the report JSON or an expectations file.

    Point an editor at it: a line ``# yaml-language-server: $schema=FILE`` at the top of an
    expectations file lets YAML editors complete and check it.
    """
    sys.stdout.write(schema_text(name))
