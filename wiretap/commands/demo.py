"""``wiretap demo``: the bundled demo."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Where to write the demo recording.")
def demo(out: Path | None) -> None:
    """Run a bundled demo server and client through the tap, then show the recording."""
    from wiretap.demo.run import run_demo

    sys.exit(run_demo(out))
