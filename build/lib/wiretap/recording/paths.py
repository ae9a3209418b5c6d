"""Where recordings go when nobody says, and what they are called."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_DIR = Path("wiretap-recordings")
_LAUNCHERS = {
    "python",
    "python3",
    "node",
    "npx",
    "uv",
    "uvx",
    "pipx",
    "bun",
    "bunx",
    "deno",
    "sh",
    "bash",
    "env",
}


def default_name(argv: Sequence[str]) -> str:
    """A short name for a server command: the script or package, not the interpreter that runs it."""
    words = [Path(a).name for a in argv]
    for word in words:
        stem = re.sub(r"\.(py|js|mjs|ts)$", "", word)
        if word.startswith("-") or re.fullmatch(r"python3?(\.\d+)?", word) or word in _LAUNCHERS or word == "run":
            continue
        if stem:
            return stem
    return words[0] if words else "server"


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "server"


def utc_stamp(epoch: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if epoch is None else epoch, UTC)
    return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"


def recording_path(out: Path | None, name: str, epoch: float) -> Path:
    """``out`` if it is a new file; a fresh name inside it if it is a directory; never an existing file."""
    if out is None or out.is_dir() or str(out).endswith("/"):
        folder = DEFAULT_DIR if out is None else out
        return folder / f"{utc_stamp(epoch)}-{safe_name(name)}.jsonl"
    return out
