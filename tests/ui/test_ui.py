"""``wiretap ui`` over real sockets: what it serves, what it refuses, and that it follows a growing file."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support import paths
from support.eventually import eventually
from support.taprun import blocked_signals
from support.uirun import WIRETAP, exchange, get_json, ui, write_recording


def request(url: str, path: str, headers: dict[str, str], *, token: bool = True) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` under the printed URL's token prefix (``token=False``: as is)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.putrequest("GET", parts.path.rstrip("/") + path if token else path, skip_host=True)
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, dict(response.headers), body


def test_the_first_line_is_the_url_and_the_page_comes_with_a_strict_policy(tmp_path: Path) -> None:
    with ui(write_recording(tmp_path / "rec.jsonl", 3)) as url:
        host = urlsplit(url).netloc
        status, headers, body = request(url, "/", {"Host": host})
        assert status == 200 and b'<script src="app.js"' in body
        policy = headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
        for asset in ("/app.js", "/app.css"):
            assert request(url, asset, {"Host": host})[0] == 200


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"Host": "evil.example:{port}"}, "a rebound name"),
        ({"Host": "127.0.0.1:1"}, "another port"),
        ({}, "no Host at all"),
        ({"Host": "{host}", "Origin": "http://evil.example"}, "another site's page"),
        ({"Host": "{host}", "Origin": "http://127.0.0.1:1"}, "another local server's page"),
        ({"Host": "{host}", "Origin": "null"}, "a sandboxed page"),
    ],
)
def test_a_request_from_anywhere_but_this_server_is_refused(tmp_path: Path, headers: dict[str, str], why: str) -> None:
    with ui(write_recording(tmp_path / "rec.jsonl", 3)) as url:
        netloc, port = urlsplit(url).netloc, str(urlsplit(url).port)
        sent = {k: v.format(host=netloc, port=port) for k, v in headers.items()}
        for path in ("/", "/api/rows", "/api/event?id=0", "/api/stream"):
            status, _, body = request(url, path, sent)
            # aiohttp itself answers 400 to an HTTP/1.1 request without a Host.
            assert status == 403 or ("Host" not in sent and status == 400), (why, path, status)
            assert b"tasks/get" not in body


def test_a_request_without_the_views_token_is_refused_and_the_printed_url_sets_a_cookie(tmp_path: Path) -> None:
    with ui(write_recording(tmp_path / "rec.jsonl", 3)) as url:
        host, token = urlsplit(url).netloc, urlsplit(url).path.split("/")[2]
        assert len(token) >= 24
        wrong_token = token[:-1] + ("y" if token.endswith("x") else "x")  # (one that ends in x changes too)
        for path in ("/", "/app.js", "/api/state", "/api/rows", "/api/event?id=0", "/api/stream"):
            for sent in (path, f"/t/{wrong_token}{path}", f"{path}{'&' if '?' in path else '?'}token={token}"):
                status, _, body = request(url, sent, {"Host": host}, token=False)
                assert status == 403 and b"tasks/get" not in body, sent
        status, headers, _ = request(url, "/", {"Host": host})
        assert status == 200
        cookie = headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token in cookie
        name = cookie.split("=", 1)[0]
        assert request(url, "/api/state", {"Host": host, "Cookie": f"{name}={token}"}, token=False)[0] == 200
        wrong = request(url, "/api/state", {"Host": host, "Cookie": f"{name}={wrong_token}"}, token=False)
        assert wrong[0] == 403


def test_its_own_names_and_origin_are_served(tmp_path: Path) -> None:
    with ui(write_recording(tmp_path / "rec.jsonl", 3)) as url:
        port = urlsplit(url).port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert request(url, "/api/state", {"Host": host, "Origin": f"http://{host}"})[0] == 200


def test_listening_off_loopback_is_refused_in_one_line(tmp_path: Path) -> None:
    recording = write_recording(tmp_path / "rec.jsonl", 1)
    for listen in ("0.0.0.0:0", "192.0.2.1:0", "example.com:8080"):
        result = subprocess.run([*WIRETAP, "ui", str(recording), "--listen", listen], capture_output=True, text=True)
        assert result.returncode == 2 and result.stdout == ""
        assert "loopback only" in result.stderr and "Traceback" not in result.stderr


def test_a_path_that_is_no_recording_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "notes.txt", tmp_path / "missing.jsonl", tmp_path / "empty"):
        result = subprocess.run([*WIRETAP, "ui", str(path)], capture_output=True, text=True)
        assert result.returncode == 1 and result.stdout == ""
        assert str(path) in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_rows_come_in_windows_and_a_growing_file_is_followed(tmp_path: Path) -> None:
    recording = write_recording(tmp_path / "rec.jsonl", 400, every_error=50)
    with ui(recording) as url:
        first = eventually(lambda: (d := get_json(url + "api/rows?from=0&count=100000"))["all"] == 800 and d, "800")
        assert len(first["rows"]) == 500, "at most one window per request"
        assert [r["id"] for r in first["rows"]] == list(range(500))
        answer = first["rows"][1]
        assert (answer["title"], answer["lane"], answer["pair"], answer["error"]) == ("tasks/get", "OUT", 0, True)
        assert answer["summary"] == "#0 error -32603 poll failed after 2 ms", "worded as wiretap show words it"
        errors = get_json(url + "api/rows?from=0&count=50&err=1")
        assert errors["total"] == 8 and all(r["error"] for r in errors["rows"])
        with recording.open("a") as f:
            for event in [*exchange(400, 9.0), {"t": 9.5, "kind": "stderr", "text": "late line"}]:
                f.write(json.dumps(event) + "\n")
            f.write('{"t": 9.6, "kind": "stderr", "te')  # a line still being written
        grown = eventually(lambda: (d := get_json(url + "api/rows?from=800&count=10"))["all"] == 803 and d, "803")
        assert [r["lane"] for r in grown["rows"]] == ["IN", "OUT", "ERR"]
        assert grown["rows"][1]["pair"] == 800 and grown["rows"][1]["summary"].startswith("#400 ok 2 ms")
        event = get_json(url + "api/event?id=802")
        assert json.loads(event["json"]) == {"t": 9.5, "kind": "stderr", "text": "late line"}


def test_filters_match_as_the_html_report_does(tmp_path: Path) -> None:
    with ui(write_recording(tmp_path / "rec.jsonl", 40, every_error=10)) as url:
        eventually(lambda: get_json(url + "api/rows?count=0")["all"] == 80, "80 rows")
        assert get_json(url + "api/rows?dir=OUT&count=0")["total"] == 40
        assert get_json(url + "api/rows?m=tasks/*&count=0")["total"] == 80
        assert get_json(url + "api/rows?m=tools/*&count=0")["total"] == 0
        assert get_json(url + "api/rows?q=task-3+working&count=0")["total"] == 5
        assert get_json(url + "api/rows?q=POLL+FAILED&err=1&count=0")["total"] == 4
        position = get_json(url + "api/position?id=21&dir=OUT")
        assert position == {"at": 10}
        assert get_json(url + "api/position?id=20&dir=OUT") == {"at": -1}


FAKE_CLIENT = """#!{python}
# Stands in for Claude Code: starts each server of the config it is given, speaks to it, waits for "go".
import json, pathlib, subprocess, sys, time
print("client: started", file=sys.stderr, flush=True)
config = json.loads(pathlib.Path(sys.argv[sys.argv.index("--mcp-config") + 1]).read_text())
servers = []
for name, entry in config["mcpServers"].items():
    command = [entry["command"], *entry["args"]]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for n, method in enumerate(["initialize", "tools/list"], 1):
        proc.stdin.write(json.dumps({{"jsonrpc": "2.0", "id": n, "method": method, "params": {{"who": name}}}}) + "\\n")
        proc.stdin.flush()
        proc.stdout.readline()
    servers.append(proc)
while not pathlib.Path("go").exists():
    time.sleep(0.05)
for proc in servers:
    proc.stdin.close()
    proc.wait()
"""


def test_ui_beside_a_session_prints_one_line_follows_every_server_and_ends_with_it(tmp_path: Path) -> None:
    client = tmp_path / "bin" / "claude"
    client.parent.mkdir()
    client.write_text(FAKE_CLIENT.format(python=sys.executable))
    client.chmod(0o755)
    server = [sys.executable, str(paths.SCENARIOS / "stdio_server.py"), "answer"]
    config = {"mcpServers": {name: {"command": server[0], "args": server[1:]} for name in ("alpha", "beta")}}
    folder = tmp_path / "sessions" / "one"
    argv = [*WIRETAP, "--ui", "--out", str(folder), "--", str(client), "--mcp-config", json.dumps(config)]
    wrap = subprocess.Popen(
        [*argv, "--strict-mcp-config"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with wrap:
        assert wrap.stderr is not None and wrap.stdout is not None
        announced = wrap.stderr.readline()
        assert announced.startswith("wiretap ui: http://127.0.0.1:") and announced.endswith("/\n")
        url = announced.split(": ", 1)[1].strip()
        assert wrap.stderr.readline() == "client: started\n", "the URL comes before the client takes the terminal"
        state = eventually(lambda: _both_servers(get_json(url + "api/state")), "both servers' traffic")
        assert state["session"] is True and {s["name"] for s in state["servers"]} == {"alpha", "beta"}
        times = [r["t"] for r in get_json(url + "api/rows?count=500")["rows"]]
        assert times == sorted(times) and times[0] > 0, "one list on the session's clock"
        beta = get_json(url + "api/rows?server=1&count=100")["rows"]
        assert {r["server"] for r in beta} == {1} and "tools/list" in {r["title"] for r in beta}
        report = eventually(lambda: len((r := get_json(url + "api/report"))["servers"]) == 2 and r, "two reports")
        assert [s["name"] for s in report["servers"]] == ["alpha", "beta"]
        assert all(s["svg"].startswith("<svg") for s in report["servers"])
        (tmp_path / "go").touch()
        out, err = wrap.communicate(timeout=60)
    assert wrap.returncode == 0 and out == ""
    assert "wiretap ui" not in err, "one line, once"
    eventually(lambda: _refused(url), "the view to end with the session")
    with ui(folder.parent) as root:
        state = get_json(root + "api/state")
        assert (state["sessions"], state["current"]) == (["one"], "one")


SIGTERM_CLIENT = """#!{python}
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("client: started", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads each thread's signal mask in /proc (Linux)")
def test_the_sessions_other_threads_leave_the_signals_it_passes_on_to_its_main_thread(tmp_path: Path) -> None:
    """The session passes SIGTERM on to the client from its main thread, which waits for the client. A
    signal the kernel gave another thread (macOS may pick any thread that does not block it) would wait
    there until the client ended on its own."""
    client = tmp_path / "bin" / "claude"
    client.parent.mkdir()
    client.write_text(SIGTERM_CLIENT.format(python=sys.executable))
    client.chmod(0o755)
    config = {"mcpServers": {"alpha": {"command": sys.executable, "args": ["-c", "pass"]}}}
    argv = [*WIRETAP, "--ui", "--out", str(tmp_path / "session"), "--", str(client), "--mcp-config", json.dumps(config)]
    with subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as wrap:
        assert wrap.stderr is not None
        assert wrap.stderr.readline().startswith("wiretap ui: http://127.0.0.1:")
        assert wrap.stderr.readline() == "client: started\n"
        others = [int(tid) for tid in os.listdir(f"/proc/{wrap.pid}/task") if int(tid) != wrap.pid]
        blocked = [blocked_signals(wrap.pid, tid) for tid in others]
        main_blocked = blocked_signals(wrap.pid, wrap.pid)
        wrap.send_signal(signal.SIGTERM)
        assert wrap.wait(20) == 0
    assert others, "the view's stderr is read on a thread of its own"
    assert all({signal.SIGTERM, signal.SIGHUP, signal.SIGINT} <= mask for mask in blocked), blocked
    assert signal.SIGTERM not in main_blocked


def _both_servers(state: dict[str, Any]) -> dict[str, Any] | None:
    return state if state["rows"] >= 10 and len(state["servers"]) == 2 else None


def _refused(url: str) -> bool:
    try:
        get_json(url + "api/state")
    except OSError:
        return True
    return False


@pytest.mark.parametrize("stop", ["SIGINT", "SIGKILL"])
def test_proxy_with_ui_keeps_its_url_first_on_stdout_and_serves_the_view_of_its_recording(
    tmp_path: Path, stop: str
) -> None:
    import urllib.error
    import urllib.request

    recording = tmp_path / "rec.jsonl"
    proxy = subprocess.Popen(
        [*WIRETAP, "proxy", "--upstream", "http://127.0.0.1:9", "--out", str(recording), "--ui"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with proxy:
        assert proxy.stdout is not None and proxy.stderr is not None
        announced = proxy.stderr.readline()
        assert announced.startswith("wiretap ui: http://127.0.0.1:")
        url = announced.split(": ", 1)[1].strip()
        proxy_url = proxy.stdout.readline().strip()
        assert proxy_url.startswith("http://127.0.0.1:") and proxy_url != url
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        post = urllib.request.Request(proxy_url, body, {"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(post, timeout=30)
        rows = eventually(lambda: (r := get_json(url + "api/rows?m=tools/list"))["total"] == 1 and r, "the call")
        assert rows["rows"][0]["lane"] == "IN"
        proxy.send_signal(getattr(signal, stop))
        proxy.communicate(timeout=60)
    eventually(lambda: _refused(url), "the view to end with the proxy")


def test_the_view_beside_a_session_ends_when_its_starter_goes_even_without_a_parent_death_signal(
    tmp_path: Path,
) -> None:
    # What macOS relies on (no PR_SET_PDEATHSIG): the starter holds our stdin, and its end is ours.
    view = subprocess.Popen(
        [*WIRETAP, "ui", "--beside", str(tmp_path / "not-yet.jsonl")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with view:
        assert view.stdout is not None and view.stdin is not None
        url = view.stdout.readline().decode().strip()
        assert get_json(url + "api/rows?count=0")["all"] == 0
        write_recording(tmp_path / "not-yet.jsonl", 2)
        eventually(lambda: get_json(url + "api/rows?count=0")["all"] == 4, "the recording once it is written")
        view.stdin.close()
        assert view.wait(60) == 0


def test_garbage_deep_nesting_and_huge_messages_cost_their_own_line_only(tmp_path: Path) -> None:
    recording = write_recording(tmp_path / "rec.jsonl", 2)
    deep = '{"t": 1.0, "kind": "message", "dir": "c2s", "msg": ' + "[" * 100_000 + "]" * 100_000 + "}"
    huge = {
        "t": 1.1,
        "kind": "message",
        "dir": "s2c",
        "msg": {"jsonrpc": "2.0", "method": "log", "params": "x" * 3_000_000},
    }
    with recording.open("a") as f:
        f.write("this is not JSON\n" + deep + "\n" + json.dumps(huge) + "\n" + "\xff garbage\n")
    with ui(recording) as url:
        eventually(lambda: get_json(url + "api/rows?count=0")["all"] >= 5, "the huge message")
        rows = get_json(url + "api/rows?count=100")["rows"]
        assert get_json(url + "api/rows?count=0")["all"] == 5, "the four exchange messages and the huge one"
        assert all(len(r["summary"]) <= 400 for r in rows)
        big = next(r for r in rows if r["title"] == "log")
        shown = get_json(url + f"api/event?id={big['id']}")["json"]
        assert len(shown) < 200_100 and shown.endswith("more characters (see wiretap show --json)")
        with recording.open("a") as f:
            f.write(json.dumps({"t": 2.0, "kind": "stderr", "text": "after the storm"}) + "\n")
        later = eventually(lambda: get_json(url + "api/rows?q=storm&count=5")["rows"], "a line after them")
        assert later[0]["summary"] == "after the storm"
