"""Shared fixtures. Real third-party peers are built on first use by tests/peers.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))


@pytest.fixture
def wiretap_cmd() -> list[str]:
    """The wiretap command line as a client would run it (a separate process)."""
    return [sys.executable, "-m", "wiretap"]


@pytest.fixture(scope="session")
def claude_code_bin() -> Path:
    """The real Claude Code binary (PEERS.md), installed under .peers/ on first use."""
    import peers

    return peers.claude_code()


@pytest.fixture(scope="session")
def mcp_sdk_python() -> Path:
    """The python of a venv holding the real MCP Python SDK 2.3.0 (PEERS.md), built on first use."""
    import peers

    return peers.mcp_sdk()
