"""``wiretap sessions --prune``: which session folders go, by count and by age, and removing them.

A session goes only when every rule given lets it go, and never while it may still be running: its
manifest says ``running`` (or does not say it ended), or a process holds one of its files locked for
writing. Only folders directly under the root whose ``manifest.json`` is a wiretap session manifest are
sessions; nothing is followed through a symlink.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from wiretap.errors import BadInput, Unavailable
from wiretap.plural import plural
from wiretap.recording.complete import writers_gone
from wiretap.recording.folders import MANIFEST, NotASession, SessionFolder, open_session

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"([0-9]+)([smhd])")
FOLDER_STAMP = re.compile(r"([0-9]{8}T[0-9]{6}\.[0-9]{3}Z)(\.[0-9]+)?")
"""A default session folder's name: its UTC start (``utc_stamp``), ``.N`` for a second run in the same ms."""


@dataclass(frozen=True)
class Rule:
    keep: int | None = None
    """The N newest sessions stay."""
    older_than: int | None = None
    """Only sessions that started more than this many seconds ago may go."""

    def lets_go(self, rank: int, age: float) -> bool:
        """``rank``: 0 for the newest session."""
        beyond_count = self.keep is None or rank >= self.keep
        beyond_age = self.older_than is None or age > self.older_than
        return beyond_count and beyond_age


def parse_keep(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text):
        raise BadInput(f"--keep {text}: not a number of sessions (a whole number, 0 or more)")
    return int(text)


def parse_duration(text: str) -> int:
    """Seconds in ``45s``, ``90m``, ``12h`` or ``30d``."""
    match = DURATION.fullmatch(text)
    if match is None:
        raise BadInput(f"--older-than {text}: not a duration (a whole number and s, m, h or d: 45s, 90m, 12h, 30d)")
    return int(match[1]) * UNITS[match[2]]


def rule_from(keep: str | None, older_than: str | None) -> Rule:
    if keep is None and older_than is None:
        raise BadInput("--prune needs --keep N or --older-than DURATION (or both); it never removes every session")
    return Rule(
        keep=None if keep is None else parse_keep(keep),
        older_than=None if older_than is None else parse_duration(older_than),
    )


@dataclass(frozen=True)
class Found:
    path: Path
    session: SessionFolder | None
    """None when the folder has a ``manifest.json`` that cannot be read as a session's."""
    problem: str | None = None
    """Why the manifest cannot be read, when it cannot."""

    @property
    def started(self) -> float | None:
        """The manifest's ``started`` (wall clock), else the time in a default folder name."""
        if self.session is None:
            return None
        if (started := self.session.started_at) is not None:
            return started
        match = FOLDER_STAMP.fullmatch(self.path.name)
        if match is None:
            return None
        return datetime.strptime(match[1], "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC).timestamp()


@dataclass
class Plan:
    remove: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    """Sessions the rules would let go, or cannot judge, that stay; with the reason."""
    kept: int = 0
    """Sessions the rules keep."""


def find_sessions(root: Path) -> Iterator[Found]:
    """The folders directly under ``root`` that have a ``manifest.json`` of their own (not a symlink)."""
    with os.scandir(root) as entries:
        folders = sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
    for folder in folders:
        try:
            manifest = (folder / MANIFEST).lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            yield Found(folder, None, f"{MANIFEST}: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(manifest.st_mode):
            yield Found(folder, None, f"{MANIFEST} is not a file wiretap wrote")
            continue
        try:
            yield Found(folder, open_session(folder))
        except (NotASession, Unavailable) as exc:
            yield Found(folder, None, str(exc).removeprefix(f"{folder}{os.sep}"))


def still_running(session: SessionFolder) -> str | None:
    """Why the session may still be running; None once it has surely ended."""
    running = session.manifest.get("running")
    if running is True:
        return "running (its manifest says so)"
    if running is not False:
        return "its manifest does not say the session ended"
    for file in _own_files(session.path):
        if not writers_gone(file):
            return f"running (a process is writing {file.name})"
    return None


def _own_files(folder: Path) -> list[Path]:
    """The regular files in ``folder`` itself; never a symlink's target or a FIFO (opening one would block)."""
    with os.scandir(folder) as entries:
        return sorted(Path(e.path) for e in entries if e.is_file(follow_symlinks=False))


def plan(root: Path, rule: Rule, now: float) -> Plan:
    result = Plan()
    dated: list[tuple[float, Found]] = []
    for found in find_sessions(root):
        started = found.started
        if found.session is None:
            result.skipped.append((found.path, f"not read as a session: {found.problem}"))
        elif started is None:
            result.skipped.append((found.path, "no start time in its manifest or its name"))
        else:
            dated.append((started, found))
    dated.sort(key=lambda pair: (pair[0], pair[1].path.name), reverse=True)
    for rank, (started, found) in enumerate(dated):
        if not rule.lets_go(rank, now - started):
            result.kept += 1
        elif found.session is not None and (reason := still_running(found.session)) is not None:
            result.skipped.append((found.path, reason))
        else:
            result.remove.append(found.path)
    result.skipped.sort()
    result.remove.sort()
    return result


def folder_size(folder: Path) -> int:
    """Bytes of everything in ``folder``, links counted as themselves, never followed."""
    total = 0
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            entry = os.lstat(os.path.join(parent, name))
            if not stat.S_ISDIR(entry.st_mode):
                total += entry.st_size
    return total


@dataclass(frozen=True)
class Removed:
    path: Path
    size: int
    error: str | None = None


def remove_sessions(folders: list[Path], *, dry_run: bool) -> Iterator[Removed]:
    """Each folder removed (or, with ``dry_run``, measured only), as it is done."""
    for folder in folders:
        try:
            size = folder_size(folder)
            if not dry_run:
                # Deletes links inside, never what they point to (rmtree works on descriptors here).
                shutil.rmtree(folder)
        except OSError as exc:
            yield Removed(folder, 0, exc.strerror or str(exc))
        else:
            yield Removed(folder, size)


def removed_line(removed: Removed, *, dry_run: bool) -> str:
    if removed.error is not None:
        return f"could not remove {removed.path}: {removed.error}"
    return f"{'would remove' if dry_run else 'removed'} {removed.path}  {removed.size} bytes"


def summary_line(plan: Plan, done: list[Removed], *, dry_run: bool) -> str:
    ok = [r for r in done if r.error is None]
    failed = len(done) - len(ok)
    parts = [
        f"{'would remove' if dry_run else 'removed'} {plural(len(ok), 'session')}, {sum(r.size for r in ok)} bytes",
        f"kept {plan.kept}",
        f"skipped {len(plan.skipped)}",
    ]
    if failed:
        parts.append(f"could not remove {failed}")
    return "; ".join(parts)
