"""Fixtures the real-peer tests share: servers and backends started once a module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.codex_gemini import sdk_http_server
from support.phoenix_backend import Phoenix, running_phoenix


@pytest.fixture(scope="module")
def http_server(mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with sdk_http_server(mcp_sdk_python, tmp_path_factory.mktemp("http-server")) as url:
        yield url


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    from support import peers
    from support.export_peers import _offline

    try:
        command = peers.phoenix()
    except RuntimeError as exc:
        if os.environ.get("CI") == "true" or not _offline(str(exc)):
            raise
        pytest.skip(f"arize-phoenix cannot be installed here: {str(exc)[:200]}")
    with running_phoenix(command, tmp_path_factory.mktemp("phoenix")) as running:
        yield running


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The MCP Inspector CLI (npm), or a skip with the reason where it cannot be installed (never under CI)."""
    from support import peers

    try:
        return peers.inspector()
    except (RuntimeError, OSError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the MCP Inspector CLI cannot be installed here: {exc}")
