"""A session's HTTP servers through one forward proxy: the client keeps each server's entry as configured
(URL, headers, OAuth settings), so the logins it made without wiretap are found and none are added.

Only the servers' hosts are intercepted (and the authorization servers their metadata names); the model
API and everything else pass through blind.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from wiretap.errors import BadInput
from wiretap.files import write_private
from wiretap.forward.proxy import Origin, split_authority
from wiretap.wrap.clients.proxy_use import ProxyUse
from wiretap.wrap.clients.servers import Server
from wiretap.wrap.sidecar import start_sidecar

START_TIMEOUT = 20.0
CLIENT_STORE = "client-ca.pem"
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")


def origin_of(url: str) -> Origin | None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        return None
    split = split_authority(parts.netloc.rpartition("@")[2], 443 if scheme == "https" else 80)
    return None if split is None else Origin(scheme, *split)


def no_proxy(env: Mapping[str, str], intercepted: set[str]) -> str:
    """The user's NO_PROXY without the hosts wiretap must see. Loopback is not added: an authorization
    server learned later may be there, and what is not intercepted passes through the proxy unrecorded."""
    given = (env.get("NO_PROXY") or env.get("no_proxy") or "").split(",")
    return ",".join(h.strip() for h in given if h.strip() and _host(h) not in intercepted)


def _host(entry: str) -> str:
    entry = entry.strip().lower()
    if entry.startswith("["):
        return entry[1:].partition("]")[0]
    return entry.rpartition(":")[0] if entry.count(":") == 1 else entry


def browser_wrapper(folder: Path, env: Mapping[str, str]) -> Path:
    """A BROWSER that opens the user's browser without the proxy variables: the browser leg of a login is
    the user's own, not the client's."""
    unset = " ".join(f"-u {name}" for name in PROXY_VARIABLES)
    original = env.get("BROWSER")
    opener = shlex.quote(original) if original else ("open" if sys.platform == "darwin" else "xdg-open")
    path = folder / "browser.sh"
    write_private(path, f'#!/bin/sh\nexec env {unset} {opener} "$@"\n')
    os.chmod(path, 0o700)
    return path


class ForwardNotStarted(BadInput):
    pass


def start_forward(
    servers: dict[str, Server], folder: Path, options: list[str], env: Mapping[str, str], log: Path, use: ProxyUse
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """``wiretap proxy --forward`` for these servers (by recording name); returns it and the client's env."""
    origins = {name: origin_of(str(server.entry.get("url", ""))) for name, server in servers.items()}
    known = [origin for origin in origins.values() if origin is not None]
    hosts = {origin.host for origin in known}
    command = ["proxy", "--forward", "--out", f"{folder}/", *options]
    for authority in sorted({f"[{o.host}]:{o.port}" if ":" in o.host else f"{o.host}:{o.port}" for o in known}):
        command += ["--intercept", authority]
    for name, origin in origins.items():
        if origin is not None:
            command += ["--record-as", f"{origin.url}={name}"]
    own = users_ca(use, env)
    if own is not None:  # what the client trusts besides the system, wiretap trusts upstream
        command += ["--upstream-cafile", own]
    proc = start_sidecar(command, log)
    assert proc.stdout is not None
    exports: dict[str, str] = {}
    for line in proc.stdout:
        if line.strip() == "# ready":
            break
        words = shlex.split(line)
        if len(words) == 2 and words[0] == "export":
            name, _, value = words[1].partition("=")
            exports[name] = value
    else:
        proc.wait(START_TIMEOUT)
        raise ForwardNotStarted(f"the forward proxy did not start: {log.read_text().strip()}")
    client_env = {name: exports[name] for name in use.variables if name in exports}
    # A client's own store replaces the system's, and some clients hand it on to their stdio servers: only
    # a server the client reaches over TLS needs it.
    if use.whole_store is not None and "SSL_CERT_FILE" in exports and any(o.scheme == "https" for o in known):
        client_env[use.whole_store] = str(whole_store(use.whole_store, env, Path(exports["SSL_CERT_FILE"])))
    client_env["NO_PROXY"] = client_env["no_proxy"] = no_proxy(env, hosts)
    client_env["BROWSER"] = str(browser_wrapper(folder, env))
    return proc, client_env


def users_ca(use: ProxyUse, env: Mapping[str, str]) -> str | None:
    for name in use.own_ca:
        path = env.get(name)
        if path:
            return path if os.path.isfile(path) else None
    return None


def whole_store(variable: str, env: Mapping[str, str], bundle: Path) -> Path:
    """The client's own trust store for this run, beside the run's CA (and gone with it): the file the user
    named in ``variable``, then the proxy's bundle (the system's roots and the run's CA)."""
    own = env.get(variable)
    text = Path(own).read_bytes().rstrip(b"\n") + b"\n" if own and os.path.isfile(own) else b""
    path = bundle.parent / CLIENT_STORE
    write_private(path, text + bundle.read_bytes())
    return path
