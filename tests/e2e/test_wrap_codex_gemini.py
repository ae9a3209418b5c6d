"""``wiretap -- codex …`` and ``wiretap -- gemini …`` with the real clients, offline, and ``compare`` over
them and Claude Code.

Each client (Codex 0.171.0, Gemini CLI 0.61.0, Claude Code 2.1.332) is driven by a fake model API
to call ``echo`` on the behaviour scenario server (stdio, tests/scenarios/behaviour_server.py) and
``add`` on the MCP Python SDK 2.3.0 Streamable HTTP server, once through wiretap. Codex also runs
once straight, to compare the environment its stdio server gets with and without the tap.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import trustme
from support.codex_gemini import WIRETAP, Run, claude_run, codex_run, files_under, gemini_run, sdk_http_server

pytestmark = pytest.mark.slow


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
    after = files_under(run.root / "home")
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


@pytest.fixture(scope="module")
def codex(http_server: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return codex_run(tmp_path_factory.mktemp("codex"), http_server, wrapped=True)


@pytest.mark.parametrize(("client", "trust"), [("codex", "CODEX_CA_CERTIFICATE"), ("gemini", "NODE_EXTRA_CA_CERTS")])
def test_the_client_reaches_an_https_server_as_it_knows_it_and_wiretap_trusts_what_it_trusted(
    client: str, trust: str, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    ca = trustme.CA()
    served = ca.issue_cert("localhost", "127.0.0.1")
    chain, key, ca_file = tmp_path / "chain.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    served.cert_chain_pems[0].write_to_path(str(chain))
    for extra in served.cert_chain_pems[1:]:
        extra.write_to_path(str(chain), append=True)
    served.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(ca_file))
    trusted = {trust: str(ca_file)}
    run_client = codex_run if client == "codex" else gemini_run
    (tmp_path / "server").mkdir()
    with sdk_http_server(mcp_sdk_python, tmp_path / "server", tls=(chain, key)) as url:
        straight = run_client(tmp_path / "straight", url, wrapped=False, extra_env=trusted)
        assert straight.result.returncode == 0, straight.describe()
        assert "42" in json.dumps(straight.outputs), f"{client} reaches the server without wiretap"
        run = run_client(tmp_path / "wrapped", url, wrapped=True, extra_env=trusted)
    assert run.result.returncode == 0, run.describe()
    assert "42" in json.dumps(run.outputs), run.describe()
    assert [c["msg"]["params"]["arguments"] for c in _tool_calls(run, "web")] == [{"a": 2, "b": 40}]
    heads = [e for e in run.recording("web") if e["kind"] == "http_request"]
    authority = url.split("/")[2]
    assert heads and {h["headers"].get("host") for h in heads} == {authority}, "the client kept the server's URL"
    assert not list(run.session.rglob("*.key")) and not list(run.session.rglob("client-ca.pem"))
