"""The TS SDK's strict OAuth pair (tests/peer_scripts/ts_sdk_oauth_server.mjs) over TLS on 127.0.0.1 with a
test CA: a resource server and its authorization server, started for a test."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import trustme

from support import paths

PEER_SCRIPTS = paths.PEER_SCRIPTS


@dataclass
class OAuthPair:
    mcp: str
    """The resource: https://localhost:PORT/mcp."""
    issuer: str
    ca_file: Path
    proc: subprocess.Popen[str]

    @property
    def mcp_origin(self) -> str:
        return self.mcp.removesuffix("/mcp")

    @property
    def issuer_origin(self) -> str:
        return self.issuer.rstrip("/")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def oauth_pair(node: Path, modules: Path, folder: Path, issuer_host: str = "localhost") -> Iterator[OAuthPair]:
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1")
    ca_file, cert_file, key_file = folder / "oauth-ca.pem", folder / "oauth-cert.pem", folder / "oauth-key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    cert.private_key_pem.write_to_path(str(key_file))
    cert.cert_chain_pems[0].write_to_path(str(cert_file))
    command = [str(node), str(PEER_SCRIPTS / "ts_sdk_oauth_server.mjs"), str(modules)]
    command += [str(_free_port()), str(_free_port()), str(cert_file), str(key_file)]
    env = {**os.environ, "ISSUER_HOST": issuer_host}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise RuntimeError(f"the OAuth peer did not start: {proc.communicate(timeout=10)[1]}")
    urls = json.loads(line)
    try:
        yield OAuthPair(urls["mcp"], urls["issuer"], ca_file, proc)
    finally:
        proc.kill()
        proc.communicate(timeout=10)
