"""A progress bar for long work: rich, on stderr, when stderr is a terminal; nothing otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(total: int, what: str) -> Iterator[Callable[[str], None]]:
    """Yields ``advance(name)``: one more item done, the bar showing its name."""
    if not sys.stderr.isatty():
        yield lambda _name: None
        return
    from rich.console import Console
    from rich.progress import Progress

    # Lines printed meanwhile go above the bar when stdout is the terminal too; into a pipe or file otherwise.
    with Progress(transient=True, console=Console(stderr=True), redirect_stdout=sys.stdout.isatty()) as bar:
        task = bar.add_task(what, total=total)
        yield lambda name: bar.update(task, advance=1, description=name[-40:])
