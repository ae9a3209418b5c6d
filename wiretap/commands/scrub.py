"""``wiretap scrub``: a copy of a recording or session that is safe to attach or commit."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress

from wiretap.scrub.rewrite import Scrubber, scrub_recording, scrub_session


@contextmanager
def _progress(source: Path) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    files = [p for p in source.iterdir() if p.suffix == ".jsonl"] if source.is_dir() else [source]
    with Progress(transient=True, console=Console(stderr=True)) as progress:
        task = progress.add_task("scrubbing", total=sum(f.stat().st_size for f in files))
        yield lambda n: progress.advance(task, n)


def _default_out(source: Path) -> Path:
    if source.is_dir():
        return source.with_name(f"{source.name}.scrubbed")
    return source.with_name(f"{source.stem}.scrubbed{source.suffix or '.jsonl'}")


@click.command()
@click.argument("source", metavar="RECORDING|SESSION", type=click.Path(path_type=Path, exists=True))
@click.option("--out", "-o", type=click.Path(path_type=Path), help="Where the copy goes (default: NAME.scrubbed…).")
@click.option("--drop-stderr", is_flag=True, help="Leave the server's stderr out.")
@click.option(
    "--drop-bodies",
    "methods",
    multiple=True,
    metavar="METHOD",
    help="Replace the params and results of these methods (repeatable, or comma-separated).",
)
def scrub(source: Path, out: Path | None, drop_stderr: bool, methods: tuple[str, ...]) -> None:
    """Copy a recording (or a session folder) with secrets redacted again, even in a --no-redact
    recording, and the machine's home, working directory, interpreter, user and host names replaced
    by placeholders. Times, sizes and order are kept: `wiretap report` of the copy says the same."""
    target = out or _default_out(source)
    if target.exists() or target.is_symlink():
        raise click.ClickException(f"{target} exists; name another with --out")
    dropped = frozenset(m.strip() for spec in methods for m in spec.split(",") if m.strip())
    scrubber = Scrubber(drop_stderr=drop_stderr, drop_bodies=dropped)
    try:
        with _progress(source) as advance:
            if source.is_dir():
                scrub_session(source, target, scrubber, advance)
            else:
                scrub_recording(source, target, scrubber, advance)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{source}: {getattr(exc, 'strerror', None) or exc}") from None
    click.echo(str(target))
