"""Nothing shipped in the repo names the machine it was made on: no home, checkout or interpreter
path, no user or host name in a recording, fixture or doc."""

from __future__ import annotations

import getpass
import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from support import paths

from wiretap.scrub.rewrite import GENERIC_USERS

REPO = paths.REPO
SHIPPED_SUFFIXES = {".jsonl", ".json", ".yaml", ".yml", ".md", ".txt", ".csv", ".html", ".svg", ".har"}
# Where home directories and checkouts live: on this machine, and on the usual others.
HOME_LIKE = re.compile(r"(?<![\w.~<-])(?:/home/|/Users/|/root/)[A-Za-z0-9._-]*")


def shipped_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False)
    names = (
        listed.stdout.splitlines() if listed.returncode == 0 else [str(p.relative_to(REPO)) for p in REPO.rglob("*")]
    )
    return [REPO / n for n in names if Path(n).suffix in SHIPPED_SUFFIXES and (REPO / n).is_file()]


def machine_strings() -> list[str]:
    found = {str(REPO), os.path.expanduser("~"), sys.executable, os.path.realpath(sys.executable), sys.prefix}
    checkouts = f"/{REPO.parts[1]}/"  # the directory checkouts live in here (a sibling checkout made the file)
    if Path(checkouts).resolve() != Path(tempfile.gettempdir()).resolve():  # a clone in /tmp names no machine
        found.add(checkouts)
    return sorted(s for s in found if s not in ("/", "") and len(s) > 2)


def machine_words() -> list[str]:
    words = {socket.gethostname()}
    if getpass.getuser().lower() not in GENERIC_USERS:
        words.add(getpass.getuser())
    return sorted(w for w in words if len(w) >= 2 and w.lower() != "localhost")


def test_no_shipped_recording_fixture_or_doc_names_the_machine() -> None:
    files = shipped_files()
    assert any(f.parent.name == "recordings" for f in files)
    strings, words = machine_strings(), machine_words()
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(REPO)}: {s}" for s in strings if s in text]
        found += [f"{path.relative_to(REPO)}: {m.group()}" for m in HOME_LIKE.finditer(text)]
        found += [
            f"{path.relative_to(REPO)}: {w}" for w in words if re.search(rf"(?<![\w.-]){re.escape(w)}(?![\w-])", text)
        ]
    assert found == []
