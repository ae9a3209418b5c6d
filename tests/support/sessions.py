"""Scenario servers and the wiretap command line for the session tests (``wiretap sessions``, ``report SESSION``)."""

from __future__ import annotations

import json
import sys

from support import paths

SCENARIOS = paths.SCENARIOS

SERVER = [str(SCENARIOS / "stdio_server.py"), "answer"]

WIRETAP = [sys.executable, "-m", "wiretap"]


def servers(*names: str) -> str:
    entries = {name: {"command": sys.executable, "args": SERVER} for name in names}
    return json.dumps({"mcpServers": entries})
