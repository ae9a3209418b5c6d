"""``wiretap config CLIENT``: config snippets for desktop clients, printed, never written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def config(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "wiretap", "config", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=home,
    )


@pytest.mark.parametrize(
    ("client", "key", "typed"),
    [("claude-desktop", "mcpServers", False), ("cursor", "mcpServers", False), ("vscode", "servers", True)],
)
def test_a_stdio_server_is_routed_through_the_tap_in_each_clients_format(
    client: str, key: str, typed: bool, tmp_path: Path
) -> None:
    result = config(client, "--name", "files", "-e", "TOKEN=${TOKEN}", "--", "npx", "-y", "srv", home=tmp_path)
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)[key]["files"]
    assert entry.pop("type", None) == ("stdio" if typed else None)
    assert entry["env"] == {"TOKEN": "${TOKEN}"}
    tap = [entry["command"], *entry["args"]]
    at = tap.index("tap")
    assert tap[at:] == [
        "tap",
        "--out",
        str(tmp_path / "wiretap-recordings"),
        "--name",
        "files",
        "--",
        "npx",
        "-y",
        "srv",
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("client", "key", "entry"),
    [
        ("cursor", "mcpServers", {"url": "http://127.0.0.1:9000/mcp?v=1"}),
        ("vscode", "servers", {"type": "http", "url": "http://127.0.0.1:9000/mcp?v=1"}),
    ],
)
def test_an_http_server_is_routed_through_a_proxy_whose_command_is_printed(
    client: str, key: str, entry: dict[str, str], tmp_path: Path
) -> None:
    result = config(
        client, "--name", "web", "--url", "https://example.com/mcp?v=1", "--listen", "127.0.0.1:9000", home=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {key: {"web": entry}}
    assert "proxy --upstream 'https://example.com/mcp?v=1' --listen 127.0.0.1:9000" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["claude-desktop", "--name", "w", "--url", "https://x/mcp"], "stdio servers only"),
        (["cursor", "--name", "w"], "either --url URL or -- COMMAND"),
        (["cursor", "--name", "w", "--url", "ftp://x"], "http:// or https://"),
        (["cursor", "--name", "w", "-e", "NOPE", "--", "srv"], "KEY=VALUE"),
    ],
)
def test_what_a_client_cannot_take_is_a_one_line_error_and_exit_status_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = config(*args, home=tmp_path)
    assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1
    assert result.stdout == ""
