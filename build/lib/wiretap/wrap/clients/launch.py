"""How a client is started with its servers wrapped: its argv, extra environment, and private files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Set on top of the user's environment for the client (and so for what it starts)."""
    private: list[Path] = field(default_factory=list)
    """Generated files and folders, removed when the client has exited."""

    def cleanup(self) -> None:
        for path in self.private:
            if path.is_dir() and not path.is_symlink():
                # rmtree removes a symlink without following it: the user's files it points at stay.
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def private_json(data: Any, prefix: str = "wiretap-mcp-", folder: Path | None = None, name: str = "") -> Path:
    """A 0600 JSON file, in a fresh temporary file or as ``folder/name``."""
    if folder is not None:
        path = folder / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    else:
        fd, text = tempfile.mkstemp(prefix=prefix, suffix=".json")
        path = Path(text)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2)
    return path
