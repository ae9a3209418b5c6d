"""``wiretap -- codex …`` and ``wiretap -- gemini …`` with the real clients, offline, and ``compare`` over
them and Claude Code.

Each client (Codex 0.171.0, Gemini CLI 0.61.0, Claude Code 2.1.332) is driven by a fake model API
to call ``echo`` on the behaviour scenario server (stdio, tests/scenarios/behaviour_server.py) and
``add`` on the MCP Python SDK 2.3.0 Streamable HTTP server, once through wiretap. Codex also runs
once straight, to compare the environment its stdio server gets with and without the tap.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude import offline_env, write_mcp_config
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from scenarios.fake_model_apis import Call, FakeModelAPIs

from wiretap.analysis.profile import Profile
from wiretap.judge.profiles import profile_recording
from wiretap.recording.reader import read_all

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
SCENARIO = TESTS / "scenarios" / "behaviour_server.py"
PEER_SCRIPTS = TESTS / "peer_scripts"
WIRETAP = [sys.executable, "-m", "wiretap"]
SCRIPT = [Call("scenario", "echo", {"text": "hi"}), Call("web", "add", {"a": 2, "b": 40})]
TIMEOUT = 180


@contextlib.contextmanager
def sdk_http_server(python: Path, root: Path) -> Iterator[str]:
    """The MCP SDK's Streamable HTTP server's endpoint on 127.0.0.1."""
    argv = [str(python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(root / "server.jsonl")]
    with (root / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True
        )
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            url = proc.stdout.readline().strip() if selector.select(60) else ""
        assert url.startswith("http://127.0.0.1:"), (root / "stderr.txt").read_text()[-3000:]
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()


@pytest.fixture(scope="module")
def http_server(mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with sdk_http_server(mcp_sdk_python, tmp_path_factory.mktemp("http-server")) as url:
        yield url


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


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise TimeoutError(f"{argv[0]} did not finish\n{stdout[-3000:]}\n{stderr[-3000:]}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _base_env(root: Path) -> dict[str, str]:
    temp = root / "tmp"
    temp.mkdir(exist_ok=True)
    keep = ("PATH", "LANG", "LC_ALL", "WIRETAP_PEERS_DIR", "PYTHONPATH")  # PYTHONPATH: this checkout's wiretap
    return {k: v for k, v in os.environ.items() if k in keep} | {"HOME": str(root / "home"), "TMPDIR": str(temp)}


def codex_run(
    root: Path, http_url: str, *, wrapped: bool, env_out: Path | None = None, flags: tuple[str, ...] = ()
) -> Run:
    import peers

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
        before = _files(root / "home")
        env = _base_env(root) | {"CODEX_HOME": str(home), "FAKE_API_KEY": "sk-fake"}
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
        result = _run(argv, env, project)
        return Run(root, session, result, list(api.outputs), before, root / "tmp")


def gemini_run(root: Path, http_url: str, flags: tuple[str, ...] = ()) -> Run:
    import peers

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
        before = _files(root / "home")
        env = _base_env(root) | {
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": api.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        session = root / "session"
        argv = [*WIRETAP, "--out", str(session), "--", str(peers.gemini_cli()), "-y", "-p", "call the tools"]
        result = _run(argv, env, project)
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
        before = _files(root / "home") | {config: config.read_bytes()}
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
        result = _run([*WIRETAP, "--out", str(session), "--", *claude], env, project)
        return Run(root, session, result, [r.get("content") for r in api.tool_results()], before, root / "tmp")


@pytest.fixture(scope="module")
def codex(http_server: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return codex_run(tmp_path_factory.mktemp("codex"), http_server, wrapped=True)


@pytest.fixture(scope="module")
def gemini(http_server: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return gemini_run(tmp_path_factory.mktemp("gemini"), http_server)


def _tool_calls(run: Run, name: str) -> list[dict[str, Any]]:
    return [e for e in run.recording(name) if e["kind"] == "message" and e["msg"].get("method") == "tools/call"]


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_the_client_calls_a_tool_on_a_stdio_and_an_http_server_through_wiretap(
    client: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(client)
    assert run.result.returncode == 0, run.describe()
    outputs = json.dumps(run.outputs)
    assert "hi (asked:" in outputs and "42" in outputs, outputs
    assert [c["msg"]["params"]["arguments"] for c in _tool_calls(run, "scenario")] == [{"text": "hi"}]
    assert [c["msg"]["params"]["arguments"] for c in _tool_calls(run, "web")] == [{"a": 2, "b": 40}]
    assert "wiretap: session" in run.result.stderr and "scenario (stdio)" in run.result.stderr


@pytest.mark.parametrize(
    ("client", "name", "version"), [("codex", "codex-mcp-client", "0.171.0"), ("gemini", None, None)]
)
def test_the_manifest_names_the_client_from_its_handshake(
    client: str, name: str | None, version: str | None, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(client)
    manifest = json.loads((run.session / "manifest.json").read_text())
    info = manifest["client_info"]
    handshake = next(e for e in run.recording("scenario") if e["kind"] == "message")["msg"]["params"]["clientInfo"]
    assert info == {"name": handshake["name"], "version": handshake["version"]}
    if name is not None:
        assert info == {"name": name, "version": version}


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_the_users_files_are_byte_identical_and_nothing_of_wiretaps_is_left(
    client: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(client)
    after = _files(run.root / "home")
    for path, content in run.config_before.items():
        assert after[path] == content, path
    assert list(run.temp.glob("wiretap-*")) == []


def test_codex_signals_the_tap_and_the_stdio_recording_is_complete(codex: Run) -> None:
    events = codex.recording("scenario")
    assert events[-1]["kind"] == "end" and events[-1]["lost"] == 0
    profile = codex.profile("scenario")
    assert profile.shutdown.order[0] in ("SIGTERM", "SIGTERM + stdin closed"), profile.shutdown
    assert profile.shutdown.server is not None and profile.shutdown.recording_complete


def test_codex_opens_a_get_stream_and_deletes_its_http_session(codex: Run) -> None:
    http = codex.profile("web").http
    assert http is not None and http.session_id and http.get_stream and http.delete_on_exit


def test_gemini_terminates_the_tap_with_sigterm_alone_and_the_recording_is_complete(gemini: Run) -> None:
    profile = gemini.profile("scenario")
    assert profile.shutdown.order[0] == "SIGTERM" and "SIGKILL" not in profile.shutdown.order, profile.shutdown
    assert profile.shutdown.recording_complete
    http = gemini.profile("web").http
    assert http is not None and not http.delete_on_exit and http.protocol_version_header == ()


def test_codexs_cleared_environment_stays_cleared_for_the_server_behind_the_tap(
    http_server: str, tmp_path: Path
) -> None:
    straight = codex_run(tmp_path / "straight", http_server, wrapped=False, env_out=tmp_path / "straight.env")
    assert straight.result.returncode == 0, straight.describe()
    wrapped = codex_run(tmp_path / "wrapped", http_server, wrapped=True, env_out=tmp_path / "wrapped.env")
    assert wrapped.result.returncode == 0, wrapped.describe()
    names = (tmp_path / "straight.env").read_text().split()
    assert "FAKE_API_KEY" not in names and "CODEX_HOME" not in names, names  # Codex cleared them
    assert (tmp_path / "wrapped.env").read_text().split() == names


def test_compare_tabulates_claude_code_codex_and_gemini(
    codex: Run, gemini: Run, http_server: str, claude_code_bin: Path, tmp_path: Path
) -> None:
    claude = claude_run(tmp_path / "claude", http_server, claude_code_bin)
    assert claude.result.returncode == 0, claude.describe()
    result = subprocess.run(
        [*WIRETAP, "compare", "--format", "json", str(claude.session), str(codex.session), str(gemini.session)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)
    clients = [c["client"] for c in table["clients"]]
    assert clients[0] == "claude-code 2.1.332" and clients[1] == "codex-mcp-client 0.171.0"
    rows = {row["behaviour"]: row["values"] for row in table["rows"]}
    assert rows["key order"][2] == "method,params,jsonrpc,id"
    assert rows["answers elicitation"][2] == "error -32601"
    assert rows["declared capabilities"][2] == '{"roots":{"listChanged":true}}'
    assert rows["HTTP: DELETE on exit"] == ["no", "yes", "no"]
    assert rows["shutdown of a stdio server"][0].startswith("SIGINT")
    assert all(value.startswith("SIGTERM") for value in rows["shutdown of a stdio server"][1:])


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_two_runs_of_the_same_client_diff_clean(
    client: str, http_server: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    first: Run = request.getfixturevalue(client)
    again = codex_run(tmp_path, http_server, wrapped=True) if client == "codex" else gemini_run(tmp_path, http_server)
    assert again.result.returncode == 0, again.describe()
    result = subprocess.run(
        [*WIRETAP, "diff", str(first.session), str(again.session)], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "no difference in behaviour\n"), result.stdout + result.stderr


def test_the_recording_is_complete_when_codex_sigkills_the_tap_of_a_server_that_outlives_sigterm(
    http_server: str, tmp_path: Path
) -> None:
    """Codex sends SIGTERM, closes stdin, and SIGKILLs the tap 15-20 ms later: the tap's recorder must
    still finish the recording (issue-10 makes the recorder outlive the relay)."""
    run = codex_run(tmp_path, http_server, wrapped=True, flags=("--ignore-sigterm", "--linger"))
    assert run.result.returncode == 0, run.describe()
    events = run.recording("scenario")
    assert [e["signal"] for e in events if e["kind"] == "signal"][:1] == ["SIGTERM"]
    assert any(e["kind"] == "eof" and e["dir"] == "c2s" for e in events)
    assert len(_tool_calls(run, "scenario")) == 1
    assert events[-1]["kind"] == "end", f"the recording stops at {events[-1]}"


def test_a_server_gemini_leaves_behind_is_recorded_to_its_end_and_shown_orphaned(
    http_server: str, tmp_path: Path
) -> None:
    """Gemini sends SIGTERM to the tap alone, closes stdin later, never SIGKILLs and does not wait."""
    run = gemini_run(tmp_path, http_server, flags=("--ignore-sigterm", "--linger"))
    assert run.result.returncode == 0, run.describe()
    recording = run.session / "scenario.jsonl"
    deadline = time.monotonic() + 30
    while b'"kind":"end"' not in recording.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.2)
    profile = run.profile("scenario")
    assert profile.shutdown.recording_complete and profile.shutdown.server == "exited with code 0"
    assert profile.shutdown.order[0] == "SIGTERM" and "SIGKILL" not in " ".join(profile.shutdown.order)
    assert profile.shutdown.orphaned is True
