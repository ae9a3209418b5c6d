"""``wiretap diff`` and ``wiretap compare``: behaviour of recordings side by side."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap.commands.common import quiet_broken_pipe

if TYPE_CHECKING:
    from wiretap.judge.profiles import Source


@click.command()
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


@click.command()
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


def _sources(*paths: Path) -> list[Source]:
    """Recordings or session folders as profiles; a bad one is a one-line error and exit status 2."""
    from wiretap.judge.profiles import load

    return [load(path) for path in paths]
