"""Real Codex and Gemini CLI (and Claude Code) run offline, wrapped by wiretap or not, against a scenario
MCP server: their homes, environments, and the files a run leaves behind."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from scenarios.fake_model_apis import Call, FakeModelAPIs

from support import paths
from support.claude import offline_env, write_mcp_config
from support.processes import run_bounded
from wiretap.analysis.profile import Profile
from wiretap.judge.profiles import profile_recording
from wiretap.recording.reader import read_all

TESTS = paths.TESTS

SCENARIO = TESTS / "scenarios" / "behaviour_server.py"

PEER_SCRIPTS = TESTS / "peer_scripts"

WIRETAP = [sys.executable, "-m", "wiretap"]

SCRIPT = [Call("scenario", "echo", {"text": "hi"}), Call("web", "add", {"a": 2, "b": 40})]

TIMEOUT = 180


@contextlib.contextmanager
def sdk_http_server(python: Path, root: Path, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """The MCP SDK's Streamable HTTP server's endpoint on 127.0.0.1 (``https://localhost`` with ``tls``:
    its certificate chain and key)."""
    argv = [str(python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(root / "server.jsonl")]
    argv += ["--tls", str(tls[0]), str(tls[1])] if tls else []
    with (root / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True
        )
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            url = proc.stdout.readline().strip() if selector.select(60) else ""
        assert url.startswith(("http://127.0.0.1:", "https://localhost:")), (root / "stderr.txt").read_text()[-3000:]
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()


@dataclass
class Run:
    root: Path
    session: Path
    result: subprocess.CompletedProcess[str]
    outputs: list[Any]
    config_before: dict[Path, bytes]
    temp: Path

    def recording(self, name: str) -> list[dict[str, Any]]:
        return read_all(self.session / f"{name}.jsonl")[1]

    def profile(self, name: str) -> Profile:
        manifest = json.loads((self.session / "manifest.json").read_text())
        return profile_recording(
            self.session / f"{name}.jsonl", client_exited_monotonic=manifest["client_exited_monotonic"]
        )

    def describe(self) -> str:
        out, err = self.result.stdout[-3000:], self.result.stderr[-3000:]
        return f"exit {self.result.returncode}\nstdout:\n{out}\nstderr:\n{err}"


def files_under(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def run_client(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_bounded(argv, cwd=cwd, env=env, timeout=TIMEOUT)


def client_env(root: Path) -> dict[str, str]:
    temp = root / "tmp"
    temp.mkdir(exist_ok=True)
    keep = ("PATH", "LANG", "LC_ALL", "WIRETAP_PEERS_DIR", "PYTHONPATH")  # PYTHONPATH: this checkout's wiretap
    return {k: v for k, v in os.environ.items() if k in keep} | {"HOME": str(root / "home"), "TMPDIR": str(temp)}


def codex_run(
    root: Path,
    http_url: str,
    *,
    wrapped: bool,
    env_out: Path | None = None,
    flags: tuple[str, ...] = (),
    extra_env: Mapping[str, str] | None = None,
) -> Run:
    from support import peers

    home, project = root / "home" / ".codex", root / "project"
    home.mkdir(parents=True)
    project.mkdir()
    server_args = [str(SCENARIO), *flags, *(["--env-out", str(env_out)] if env_out else [])]
    with FakeModelAPIs(SCRIPT) as api:
        (home / "config.toml").write_text(
            "\n".join(
                [
                    'model = "fake-model"',
                    'model_provider = "fake"',
                    "[features]",
                    "plugins = false",
                    "remote_plugin = false",
                    "[model_providers.fake]",
                    'name = "fake"',
                    f'base_url = "{api.url}/v1"',
                    'env_key = "FAKE_API_KEY"',
                    'wire_api = "responses"',
                    "[mcp_servers.scenario]",
                    f"command = {json.dumps(sys.executable)}",
                    f"args = {json.dumps(server_args)}",
                    "[mcp_servers.web]",
                    f"url = {json.dumps(http_url)}",
                    "",
                ]
            )
        )
        before = files_under(root / "home")
        env = client_env(root) | {"CODEX_HOME": str(home), "FAKE_API_KEY": "sk-fake"} | dict(extra_env or {})
        codex = [
            str(peers.codex()),
            "exec",
            "--skip-git-repo-check",
            "--ephemeral",
            "-c",
            "approval_policy=never",
            "-s",
            "danger-full-access",
            "call the tools",
        ]
        session = root / "session"
        argv = [*WIRETAP, "--out", str(session), "--", *codex] if wrapped else codex
        result = run_client(argv, env, project)
        return Run(root, session, result, list(api.outputs), before, root / "tmp")


def gemini_run(
    root: Path,
    http_url: str,
    flags: tuple[str, ...] = (),
    *,
    wrapped: bool = True,
    extra_env: Mapping[str, str] | None = None,
) -> Run:
    from support import peers

    home, project = root / "home" / ".gemini", root / "project"
    home.mkdir(parents=True)
    project.mkdir()
    with FakeModelAPIs(SCRIPT) as api:
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {
                "scenario": {"command": sys.executable, "args": [str(SCENARIO), *flags], "trust": True},
                "web": {"httpUrl": http_url, "trust": True},
            },
        }
        (home / "settings.json").write_text(json.dumps(settings, indent=2))
        before = files_under(root / "home")
        env = (
            client_env(root)
            | {
                "GEMINI_API_KEY": "fake-key",
                "GOOGLE_GEMINI_BASE_URL": api.url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
            | dict(extra_env or {})
        )
        session = root / "session"
        gemini = [str(peers.gemini_cli()), "-y", "-p", "call the tools"]
        argv = [*WIRETAP, "--out", str(session), "--", *gemini] if wrapped else gemini
        result = run_client(argv, env, project)
        return Run(root, session, result, list(api.outputs), before, root / "tmp")


def claude_run(root: Path, http_url: str, claude_code_bin: Path) -> Run:
    project = root / "project"
    project.mkdir(parents=True)
    script = [ToolUse("mcp__scenario__echo", {"text": "hi"}), ToolUse("mcp__web__add", {"a": 2, "b": 40})]
    with FakeMessagesAPI(script) as api:
        env = offline_env(root, api.url) | {"TMPDIR": str(root / "tmp")}
        (root / "tmp").mkdir()
        config = write_mcp_config(
            root / "mcp.json",
            {
                "scenario": {"type": "stdio", "command": sys.executable, "args": [str(SCENARIO)]},
                "web": {"type": "http", "url": http_url},
            },
        )
        before = files_under(root / "home") | {config: config.read_bytes()}
        session = root / "session"
        claude = [str(claude_code_bin), "-p", "call the tools", "--mcp-config", str(config), "--strict-mcp-config"]
        claude += [
            "--allowedTools",
            "mcp__scenario__echo,mcp__web__add",
            "--output-format",
            "stream-json",
            "--verbose",
            "--no-session-persistence",
        ]
        result = run_client([*WIRETAP, "--out", str(session), "--", *claude], env, project)
        return Run(root, session, result, [r.get("content") for r in api.tool_results()], before, root / "tmp")
