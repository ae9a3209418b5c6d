"""Real third-party peers (PEERS.md), installed on first use into .peers/ and reused after that.

Each peer lives in its own virtual environment or npm folder, since several pin conflicting
versions. A clean clone builds them from nothing; set WIRETAP_PEERS_DIR to share them between
checkouts.
"""

from __future__ import annotations

import fcntl
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support import paths

REPO = paths.REPO
PEERS_DIR = Path(os.environ.get("WIRETAP_PEERS_DIR", REPO / ".peers"))

MCP_SDK = ["mcp[cli]==2.3.0"]
MCP_SDK_TASKS = ["mcp[cli]==1.30.0"]
FASTMCP_TASKS = ["fastmcp==4.1.4", "fastmcp-tasks==4.1.4"]
MCP_REC = ["mcp-rec==0.1.1"]
A2A_SDK = ["a2a-sdk[http-server]==1.3.0", "uvicorn"]
MITMPROXY = ["mitmproxy==11.0.2"]
CLAUDE_CODE = ["@anthropic-ai/claude-code@2.1.332"]
PHOENIX = ["arize-phoenix==20.26.1"]
SERVER_EVERYTHING = ["@modelcontextprotocol/server-everything@2026.8.31"]
CLAUDE_CODE_OLD = ["@anthropic-ai/claude-code@2.1.197"]
CODEX = ["@openai/codex@0.171.0"]
GEMINI_CLI = ["@google/gemini-cli@0.61.0"]
INSPECTOR = ["@modelcontextprotocol/inspector@2.12.0"]
VICTORIA_METRICS = ("victoria-metrics", "1.112.0+ds1-2", "trixie")
"""Debian 13's VictoriaMetrics: it ingests OTLP metrics (Debian 12's 1.79 and Prometheus packages do not)."""
TS_SDK = ["@modelcontextprotocol/sdk@1.32.2"]
A2A_JS = ["@a2a-js/sdk@1.3.0"]
_ARCH = "arm64" if platform.machine() in ("arm64", "aarch64") else "x64"
NODE_PLATFORM = f"node-{'darwin' if sys.platform == 'darwin' else 'linux'}-{_ARCH}"
NODE_24 = [f"{NODE_PLATFORM}@24.22.3"]


@contextmanager
def _locked(name: str) -> Iterator[Path]:
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    with (PEERS_DIR / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield PEERS_DIR / name


def _run(command: list[str], cwd: Path | None = None) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"installing a test peer failed: {' '.join(command)}\n{result.stdout}\n{result.stderr}")


def python_peer(name: str, requirements: list[str]) -> Path:
    """The python interpreter of a venv holding ``requirements``."""
    with _locked(name) as venv:
        python = venv / "bin" / "python"
        done = venv / ".installed"
        if not done.exists() or done.read_text() != "\n".join(requirements):
            _run([sys.executable, "-m", "venv", "--clear", str(venv)])
            _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements])
            done.write_text("\n".join(requirements))
        return python


def npm_peer(name: str, packages: list[str]) -> Path:
    """The node_modules folder of an npm folder holding ``packages``."""
    with _locked(name) as folder:
        done = folder / ".installed"
        if not done.exists() or done.read_text() != "\n".join(packages):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "package.json").write_text('{"name": "wiretap-peer", "private": true}\n')
            _run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", *packages], cwd=folder)
            done.write_text("\n".join(packages))
        return folder / "node_modules"


def _debian_mirrors() -> list[str]:
    """The Debian archive URIs this machine's apt already uses (not its security or updates suites)."""
    uris: list[str] = []
    sources = Path("/etc/apt")
    for file in sorted([sources / "sources.list", *sources.glob("sources.list.d/*")]):
        if not file.is_file():
            continue
        text = file.read_text(errors="replace")
        if file.suffix == ".sources":
            for stanza in text.split("\n\n"):
                fields = dict(line.split(":", 1) for line in stanza.splitlines() if ":" in line and line[0] != "#")
                suites = fields.get("Suites", "").split()
                if any("-" not in suite for suite in suites) and "/debian" in fields.get("URIs", ""):
                    uris += [u for u in fields["URIs"].split() if not u.rstrip("/").endswith("-security")]
        else:
            for line in text.splitlines():
                words = [w for w in line.split() if not w.startswith("[")]
                if len(words) >= 3 and words[0] == "deb" and "-" not in words[2] and "/debian" in words[1]:
                    uris.append(words[1])
    return list(dict.fromkeys(uris))


def debian_peer(name: str, package: str, version: str, suite: str) -> Path:
    """A Debian package of another suite, unpacked into its own folder (nothing installed on the machine):
    apt fetches it from the mirror this machine already uses, with a sources list and state of its own."""
    with _locked(name) as folder:
        done = folder / ".installed"
        wanted = f"{package}={version} {suite}"
        if not done.exists() or done.read_text() != wanted:
            mirrors = _debian_mirrors()
            if not mirrors:
                raise RuntimeError(f"installing a test peer failed: no Debian archive in apt's sources for {package}")
            apt = folder / "apt"
            for sub in ("lists/partial", "cache/archives/partial"):
                (apt / sub).mkdir(parents=True, exist_ok=True)
            (apt / "sources.list").write_text("".join(f"deb {uri} {suite} main\n" for uri in mirrors))
            options = [
                "-o", f"Dir::Etc::sourcelist={apt / 'sources.list'}", "-o", "Dir::Etc::sourceparts=-",
                "-o", f"Dir::State::Lists={apt / 'lists'}", "-o", f"Dir::Cache={apt / 'cache'}",
                "-o", "APT::Sandbox::User=root",
            ]  # fmt: skip
            _run(["apt-get", *options, "update"])
            _run(["apt-get", *options, "download", f"{package}={version}"], cwd=apt)
            (deb,) = apt.glob(f"{package}_*.deb")
            _run(["dpkg-deb", "-x", str(deb), str(folder / "root")])
            deb.unlink()
            done.write_text(wanted)
        return folder / "root"


def victoria_metrics() -> Path:
    """The ``victoria-metrics`` single-node server (Debian 13's package, unpacked)."""
    package, version, suite = VICTORIA_METRICS
    return debian_peer(f"victoria-metrics-{version}", package, version, suite) / "usr" / "bin" / "victoria-metrics"


def mcp_sdk() -> Path:
    return python_peer("mcp-sdk-2.3.0", MCP_SDK)


def mcp_rec() -> Path:
    return python_peer("mcp-rec-0.1.1", MCP_REC)


def mcp_sdk_tasks() -> Path:
    """MCP Python SDK 1.30.0: the 2025-11-25 core tasks."""
    return python_peer("mcp-sdk-1.30.0", MCP_SDK_TASKS)


def fastmcp_tasks() -> Path:
    """fastmcp 4.1.4 with fastmcp-tasks: the 2026-07-28 tasks extension."""
    return python_peer("fastmcp-tasks-4.1.4", FASTMCP_TASKS)


def a2a_sdk() -> Path:
    return python_peer("a2a-sdk-1.3.0", A2A_SDK)


def mitmproxy() -> Path:
    """The mitmdump executable, for the proxy benchmark."""
    return python_peer("mitmproxy-11.0.2", MITMPROXY).parent / "mitmdump"


def server_everything() -> Path:
    """The reference "everything" server's executable (npm)."""
    return npm_peer("server-everything-2026.8.31", SERVER_EVERYTHING) / ".bin" / "mcp-server-everything"


def phoenix() -> Path:
    """Arize Phoenix's ``phoenix`` command: an OTLP backend that runs offline (the OpenTelemetry tests)."""
    return python_peer("arize-phoenix-20.26.1", PHOENIX).parent / "phoenix"


def inspector() -> Path:
    """The MCP Inspector CLI's executable (npm): ``mcp-inspector --cli ...``."""
    return npm_peer("inspector-2.12.0", INSPECTOR) / ".bin" / "mcp-inspector"


def ts_sdk() -> Path:
    """The MCP TypeScript SDK (npm): its node_modules, for the Node scripts in tests/peer_scripts/."""
    return npm_peer("ts-sdk-1.32.2", TS_SDK)


def a2a_js() -> Path:
    """The A2A JavaScript SDK (npm): its node_modules, for tests/peer_scripts/a2a_lab_js_client.mjs."""
    return npm_peer("a2a-js-1.3.0", A2A_JS)


def node_24() -> Path:
    """A Node 24 binary (npm): its fetch honours HTTPS_PROXY with NODE_USE_ENV_PROXY=1 (Node 20's does not)."""
    return npm_peer(f"node-24.22.3-{NODE_PLATFORM}", NODE_24) / NODE_PLATFORM / "bin" / "node"


def claude_code() -> Path:
    """The native Claude Code binary (npm does not run its postinstall here, and need not)."""
    modules = npm_peer("claude-code-2.1.332", CLAUDE_CODE)
    return modules / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


def claude_code_old() -> Path:
    """Claude Code 2.1.197: the legacy handshake, a session over HTTP (to diff against 2.1.332)."""
    modules = npm_peer("claude-code-2.1.197", CLAUDE_CODE_OLD)
    return modules / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


def codex() -> Path:
    """OpenAI Codex CLI's launcher (it runs the native binary inside the package)."""
    return npm_peer("codex-0.171.0", CODEX) / ".bin" / "codex"


def gemini_cli() -> Path:
    return npm_peer("gemini-cli-0.61.0", GEMINI_CLI) / ".bin" / "gemini"


if __name__ == "__main__":
    for build in (
        mcp_sdk,
        mcp_rec,
        claude_code,
        mcp_sdk_tasks,
        fastmcp_tasks,
        a2a_sdk,
        mitmproxy,
        server_everything,
        codex,
        gemini_cli,
        inspector,
        ts_sdk,
    ):
        print(build())
