"""What ``wiretap -- claude|codex|gemini`` gives the client for its forward proxy: NO_PROXY without the
servers' hosts, a BROWSER that opens the user's own browser without the proxy variables, the CA it trusts;
and which servers only the forward proxy can record."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from wiretap.wrap.clients.proxy_use import NODE, THROUGH, ProxyUse
from wiretap.wrap.clients.servers import Server
from wiretap.wrap.forward import browser_wrapper, no_proxy, origin_of, users_ca, whole_store
from wiretap.wrap.session import wrap_servers


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


def test_the_ca_wiretap_trusts_upstream_is_the_first_one_the_client_was_told_to_trust(tmp_path: Path) -> None:
    mine = tmp_path / "corporate.pem"
    mine.write_text("corporate\n")
    codex = ProxyUse(THROUGH, own_ca=("CODEX_CA_CERTIFICATE", "SSL_CERT_FILE"), whole_store="CODEX_CA_CERTIFICATE")
    assert users_ca(codex, {"SSL_CERT_FILE": str(mine)}) == str(mine)
    assert users_ca(codex, {"CODEX_CA_CERTIFICATE": str(tmp_path / "gone.pem"), "SSL_CERT_FILE": str(mine)}) is None
    assert users_ca(NODE, {"SSL_CERT_FILE": str(mine)}) is None


def test_a_clients_whole_store_holds_the_users_ca_the_system_roots_and_the_runs_ca(tmp_path: Path) -> None:
    mine = tmp_path / "corporate.pem"
    mine.write_text("CORPORATE")
    bundle = tmp_path / "ca" / "ca-bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("ROOTS\nRUN CA\n")
    store = whole_store("CODEX_CA_CERTIFICATE", {"CODEX_CA_CERTIFICATE": str(mine)}, bundle)
    assert store.parent == bundle.parent, "it goes with the run's CA"
    assert store.read_text() == "CORPORATE\nROOTS\nRUN CA\n"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert whole_store("CODEX_CA_CERTIFICATE", {}, bundle).read_text() == "ROOTS\nRUN CA\n"


def test_an_oauth_server_is_listed_not_wrapped_without_a_forward_proxy(tmp_path: Path) -> None:
    login = Server("login", "user", {"type": "http", "url": "https://mcp.example.com/mcp"}, forward_only="it logs in")
    wrapped, skipped, env = wrap_servers([login], tmp_path, forward=None)
    assert wrapped == [] and env == {}
    assert skipped == [
        "login (user): it logs in; only the forward proxy records it with its entry as configured (not with --reverse)"
    ]


def test_an_oauth_server_goes_through_the_forward_proxy_with_its_entry_untouched(tmp_path: Path) -> None:
    entry = {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "c1"}}
    login = Server("login", "user", entry, raw=dict(entry), forward_only="it logs in")
    wrapped, skipped, env = wrap_servers([login], tmp_path, forward=NODE, env={})
    try:
        [one] = wrapped
        assert skipped == [] and one.forward and one.entry == entry
        assert env["HTTPS_PROXY"].startswith("http://wiretap:") and env["NODE_USE_ENV_PROXY"] == "1"
    finally:
        for one in wrapped:
            if one.proxy is not None:
                with one.proxy:  # its pipes closed, and waited for: it exits with its stdin
                    pass
