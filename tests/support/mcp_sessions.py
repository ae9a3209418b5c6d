"""Session folders and recordings for the ``wiretap mcp`` tests, made the way a person makes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import paths
from support.export_recordings import Recording

SCENARIOS = paths.SCENARIOS
SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
SESSION = "wiretap-sessions/s1"


def session_workdir(cwd: Path) -> Path:
    """``cwd`` with one real session (``wiretap -- claude``, the scenario client) at SESSION: server alpha
    answers, server beta prints a banner on stdout first (a stdout-not-json finding; the client reads past
    it); and an unredacted recording in wiretap-recordings."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCENARIOS / "turn_taking_client.py"}" "$@"\n')
    claude.chmod(0o755)
    entries = {
        name: {"command": sys.executable, "args": [str(SCENARIOS / "stdio_server.py"), mode]}
        for name, mode in (("alpha", "answer"), ("beta", "banner"))
    }
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(cwd)}
    config = json.dumps({"mcpServers": entries})
    argv = [
        sys.executable,
        "-m",
        "wiretap",
        "--",
        "claude",
        "--mcp-config",
        config,
        "--strict-mcp-config",
        "--skip-noise",
    ]
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
    (session,) = (cwd / "wiretap-sessions").iterdir()
    session.rename(session.with_name("s1"))
    big_and_unredacted(cwd / "wiretap-recordings" / "big.jsonl")
    return cwd


def big_and_unredacted(path: Path) -> Path:
    """A recording made with --no-redact: 300 calls answered with 5000 characters each (the second with
    20000), a secret in the first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    r = Recording()
    for n in range(300):
        arguments = {"api_key": SECRET} if n == 0 else {"n": n}
        answer = {"text": "x" * (20000 if n == 1 else 5000)}
        r.call(n * 0.01, "tools/call", {"name": "big", "arguments": arguments}, n * 0.01 + 0.005, answer)
    return r.write(path, name="big", redacted=False)
