"""``wiretap sessions``: recent sessions, and pruning old ones."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from wiretap.errors import BadInput, ExitStatus


@click.command()
@click.option(
    "--in",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("wiretap-sessions"),
    show_default=True,
    help="Where the sessions are.",
)
@click.option("--limit", "-n", type=click.IntRange(1), help="List at most this many (default: 20).")
@click.option("--prune", is_flag=True, help="Remove old sessions (by --keep, --older-than); never running ones.")
@click.option("--keep", metavar="N", help="With --prune: keep the N newest sessions.")
@click.option(
    "--older-than", metavar="DURATION", help="With --prune: only sessions that started longer ago (30d, 12h, 90m, 45s)."
)
@click.option("--dry-run", is_flag=True, help="With --prune: list what would be removed; remove nothing.")
def sessions(
    root: Path, limit: int | None, prune: bool, keep: str | None, older_than: str | None, dry_run: bool
) -> None:
    """List recent sessions recorded by 'wiretap -- CLIENT …', newest first; or prune old ones.

    A session goes only when every rule given lets it go: --keep 10 --older-than 30d keeps the
    10 newest and every session from the last 30 days."""
    if prune:
        if limit is not None:
            raise BadInput("--limit lists sessions; it does not go with --prune")
        _prune_sessions(root, keep, older_than, dry_run)
        return
    pruning = {"--keep": keep is not None, "--older-than": older_than is not None, "--dry-run": dry_run}
    if given := [name for name, is_given in pruning.items() if is_given]:
        raise BadInput(f"{given[0]} goes with --prune")
    from wiretap.recording.folders import recent_sessions

    found = recent_sessions(root, limit or 20)
    if not found:
        click.echo(f"no sessions under {root}", err=True)
        return
    for session in found:
        click.echo(session.describe())


def _prune_sessions(root: Path, keep: str | None, older_than: str | None, dry_run: bool) -> None:
    import time

    from wiretap.render.progress import progress_bar
    from wiretap.wrap import prune

    rule = prune.rule_from(keep, older_than)
    if not root.is_dir():
        click.echo(f"no sessions under {root}", err=True)
        return
    plan = prune.plan(root, rule, time.time())
    for path, reason in plan.skipped:
        click.echo(f"skipped {path}: {reason}")
    done = []
    with progress_bar(len(plan.remove), "measuring" if dry_run else "removing") as advance:
        for removed in prune.remove_sessions(plan.remove, dry_run=dry_run):
            done.append(removed)
            print(prune.removed_line(removed, dry_run=dry_run), file=sys.stderr if removed.error else sys.stdout)
            advance(removed.path.name)
    click.echo(prune.summary_line(plan, done, dry_run=dry_run))
    if any(r.error for r in done):
        sys.exit(int(ExitStatus.UNREADABLE))
