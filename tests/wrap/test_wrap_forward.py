"""What ``wiretap -- claude`` gives the client for its forward proxy: NO_PROXY without the servers' hosts, and
a BROWSER that opens the user's own browser without the proxy variables."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from wiretap.wrap.forward import browser_wrapper, no_proxy, origin_of


def test_no_proxy_keeps_the_users_entries_but_the_servers_hosts() -> None:
    env = {"NO_PROXY": "localhost, internal.example:8443,[::1]:9,mcp.example.com,.corp"}
    assert no_proxy(env, {"mcp.example.com", "::1"}) == "localhost,internal.example:8443,.corp"
    assert no_proxy({"no_proxy": "a,b"}, {"b"}) == "a"
    assert no_proxy({}, {"a"}) == ""


def test_the_browser_leg_of_a_login_runs_without_the_proxy_variables(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    browser = tmp_path / "my-browser"
    browser.write_text(f'#!/bin/sh\nenv > "{seen}"\necho "$1" >> "{seen}"\n')
    browser.chmod(0o700)
    wrapper = browser_wrapper(tmp_path, {"BROWSER": str(browser)})
    assert stat.S_IMODE(wrapper.stat().st_mode) == 0o700
    proxy = dict.fromkeys(("HTTPS_PROXY", "HTTP_PROXY", "https_proxy"), "http://wiretap:secret@127.0.0.1:1")
    url = "https://auth.example.com/authorize?client_id=c1&state=s"
    subprocess.run([str(wrapper), url], env={**os.environ, **proxy, "KEEP_ME": "1"}, check=True, timeout=30)
    lines = seen.read_text().splitlines()
    assert lines[-1] == url
    assert "KEEP_ME=1" in lines
    assert [line for line in lines if "proxy" in line.lower().split("=")[0]] == []


def test_a_server_url_gives_the_origin_to_intercept() -> None:
    assert origin_of("https://user:pw@MCP.example.com/mcp").url == "https://mcp.example.com"  # type: ignore[union-attr]
    assert origin_of("http://127.0.0.1:3000/mcp").url == "http://127.0.0.1:3000"  # type: ignore[union-attr]
    assert origin_of("stdio://x") is None and origin_of("not a url") is None
