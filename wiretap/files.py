"""Creating files and directories the way wiretap promises: files 0600, directories 0700, and never a
write through a symlink wiretap did not create (a new name is created exclusively, then renamed)."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def private_dirs(folder: Path) -> None:
    """``mkdir -p`` where every directory created (intermediate ones too) is 0700."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process: not ours to chmod
            os.mkdir(directory, DIR_MODE)
            os.chmod(directory, DIR_MODE)  # whatever the umask


def create_private(path: Path, *, append: bool = False) -> int:
    """A new file, 0600, created exclusively (an existing file or symlink there is an error)."""
    private_dirs(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | (os.O_APPEND if append else 0)
    fd = os.open(path, flags, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def write_private(path: Path, data: bytes | str | Iterable[str]) -> None:
    """Replace ``path`` with ``data`` (or its pieces, written as they come): written to a fresh 0600 file
    beside it, then renamed over it, so a symlink planted at ``path`` is replaced, never followed."""
    private_dirs(path.parent)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = create_private(temporary)
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in [data] if isinstance(data, bytes | str) else data:
                f.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
