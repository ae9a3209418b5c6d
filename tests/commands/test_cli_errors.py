"""Every command's user errors: one line naming the file or value, its documented exit status, no traceback.

| status | meaning |
| 0 | ok: expectations hold, no difference |
| 1 | an expectation failed, the recordings differ |
| 2 | a bad option or value, or a file that is not what the command needs |
| 3 | a file or folder that cannot be read or written, an address that cannot be listened on |
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import paths
from support.cli_errors import one_error, run

REPO = paths.REPO
DEMO = REPO / "recordings" / "demo.jsonl"
DEMO_EXPECT = REPO / "recordings" / "demo.expect.yaml"
OTHER = REPO / "recordings" / "exit-cancel.jsonl"
RECORDING_COMMANDS = [["show"], ["report"], ["check", "--expect", str(DEMO_EXPECT)], ["export"], ["replay"]]


def wiretap(*args: str | Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "wiretap", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def with_recording(command: list[str], recording: Path) -> list[str | Path]:
    """``command`` with ``recording`` in the place of its RECORDING argument."""
    return [command[0], recording, *command[1:]]


@pytest.fixture
def future(tmp_path: Path) -> Path:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"kind": "header", "format": 99, "t": 0}) + "\n")
    return path


@pytest.fixture
def garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(bytes(range(256)) * 8)
    return path


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A session folder with two recordings (copies of shipped ones), as ``wiretap -- CLIENT`` writes it."""
    folder = tmp_path / "session"
    folder.mkdir()
    servers = []
    for name, source in (("demo", DEMO), ("other", OTHER)):
        (folder / f"{name}.jsonl").write_bytes(source.read_bytes())
        servers.append({"name": name, "transport": "stdio", "recording": f"{name}.jsonl", "messages": 1})
    manifest = {"kind": "wiretap-session", "format": 1, "running": False, "servers": servers}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_the_exit_statuses_tell_ok_from_failed_from_bad_input_from_unreadable(tmp_path: Path) -> None:
    assert run("check", DEMO, "--expect", DEMO_EXPECT)[0] == 0
    assert run("diff", DEMO, DEMO)[0] == 0
    failing = tmp_path / "fail.yaml"
    failing.write_text("version: 1\nexpect:\n  - messages: {method: tools/call, count: 99}\n")
    assert run("check", DEMO, "--expect", failing)[0] == 1
    assert run("diff", DEMO, OTHER)[0] == 1
    missing = tmp_path / "missing.jsonl"
    assert one_error("check", missing, "--expect", DEMO_EXPECT) == (3, f"{missing}: No such file or directory")
    assert one_error("diff", missing, DEMO) == (3, f"{missing}: No such file or directory")
    assert one_error("diff", DEMO, missing) == (3, f"{missing}: No such file or directory")
    assert one_error("check", DEMO, "--expect", tmp_path / "nope.yaml") == (
        3,
        f"{tmp_path / 'nope.yaml'}: No such file or directory",
    )


@pytest.mark.parametrize("command", RECORDING_COMMANDS, ids=lambda c: c[0])
def test_a_missing_recording_is_status_3_naming_it(command: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    assert one_error(*with_recording(command, missing)) == (3, f"{missing}: No such file or directory")


@pytest.mark.parametrize("command", RECORDING_COMMANDS, ids=lambda c: c[0])
def test_a_future_format_is_status_2_naming_the_file(command: list[str], future: Path) -> None:
    code, message = one_error(*with_recording(command, future))
    assert (code, message) == (
        2,
        f"{future}: recording format 99 is newer than this wiretap reads (1); upgrade wiretap",
    )


@pytest.mark.parametrize("command", RECORDING_COMMANDS, ids=lambda c: c[0])
def test_binary_garbage_is_status_2_naming_the_file(command: list[str], garbage: Path) -> None:
    code, message = one_error(*with_recording(command, garbage))
    assert (code, message) == (2, f"{garbage}: not a wiretap recording (line 1 is not a wiretap header)")


@pytest.mark.parametrize("command", RECORDING_COMMANDS, ids=lambda c: c[0])
def test_an_empty_file_is_status_2_naming_it(command: list[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert one_error(*with_recording(command, empty)) == (2, f"{empty}: empty file, not a wiretap recording")


def test_binary_garbage_as_expectations_is_status_2_naming_the_file(garbage: Path) -> None:
    assert one_error("check", DEMO, "--expect", garbage) == (2, f"{garbage}:2: not UTF-8 text")


def test_a_plain_folder_is_status_2_with_a_clear_reason_for_every_command(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    not_a_session = f"{folder}: not a wiretap session (no manifest.json)"
    assert one_error("show", folder) == (2, not_a_session)
    assert one_error("report", folder) == (2, not_a_session)
    assert one_error("check", folder, "--expect", DEMO_EXPECT) == (2, not_a_session)
    assert one_error("diff", folder, DEMO) == (2, not_a_session)
    assert one_error("export", folder) == (2, f"{folder}: is a folder, not a file")


def test_a_session_folder_is_read_where_it_makes_sense_and_named_where_it_does_not(session: Path) -> None:
    assert run("check", session, "--expect", DEMO_EXPECT)[0] == 1  # the demo's expectations fail on "other"
    assert run("report", session)[0] == 0
    assert run("show", session)[0] == 0
    assert run("export", session, "--format", "html")[0] == 0
    files = f"{session / 'demo.jsonl'}, {session / 'other.jsonl'}"
    assert run("diff", session, session)[0] == 0
    assert run("export", session, "--format", "svg")[0] == 0
    assert one_error("export", session, "--format", "mermaid") == (
        2,
        f"{session} is a session folder: export one of its recordings as mermaid ({files})",
    )


def test_a_session_manifest_that_is_not_json_is_status_2_naming_it(session: Path) -> None:
    (session / "manifest.json").write_bytes(b"\x00\xff garbage")
    code, message = one_error("show", session)
    assert code == 2 and message.startswith(f"{session / 'manifest.json'}: not JSON")


def test_show_follow_of_a_missing_file_stops_at_once_instead_of_waiting(tmp_path: Path) -> None:
    typo = tmp_path / "typo.jsonl"
    assert one_error("show", "--follow", typo) == (3, f"{typo}: No such file or directory")


def test_a_time_window_that_cannot_hold_anything_is_a_usage_error() -> None:
    code, message = one_error("show", DEMO, "--since", "5", "--until", "1")
    assert code == 2 and "--since 5 is after --until 1" in message


def test_exporting_into_a_missing_folder_creates_it_private(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.svg"
    assert run("export", DEMO, "--out", target)[0] == 0
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700 and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_exporting_where_a_file_stands_in_for_the_folder_is_status_3_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "out.svg"
    code, message = one_error("export", DEMO, "--out", target)
    assert code == 3 and message.startswith(str(tmp_path / "file"))


def test_the_demo_into_an_impossible_place_is_status_3_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "demo.jsonl"
    code, message = one_error("demo", "--out", target)
    assert code == 3 and message.startswith(str(tmp_path / "file"))


# Root reads files whatever their mode unless it gives up the capabilities that let it (CI runs as root).
WITHOUT_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


def one_error_unprivileged(*args: str | Path) -> tuple[int, str]:
    """``one_error`` in a process that file modes apply to, even when the tests run as root."""
    if os.geteuid() != 0:
        return one_error(*args)
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes do not apply to root")
    command = [*WITHOUT_DAC, sys.executable, "-m", "wiretap", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    return result.returncode, lines[0].removeprefix("Error: ")


@pytest.mark.parametrize("command", RECORDING_COMMANDS, ids=lambda c: c[0])
def test_an_unreadable_recording_is_status_3_naming_it(command: list[str], tmp_path: Path) -> None:
    locked = tmp_path / "locked.jsonl"
    locked.write_bytes(DEMO.read_bytes())
    locked.chmod(0)
    assert one_error_unprivileged(*with_recording(command, locked)) == (3, f"{locked}: Permission denied")


# The proxy: bad values are status 2, a port or a recording it cannot have is status 3, and it never serves.


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def test_an_upstream_port_out_of_range_is_status_2_naming_the_url() -> None:
    result = wiretap("proxy", "--upstream", "http://127.0.0.1:99999/mcp")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value: --upstream is not a valid URL (Port out of range 0-65535): 'http://127.0.0.1:99999/mcp'"
    )
    replayed = wiretap("replay", DEMO, "--as", "client", "--upstream", "http://127.0.0.1:99999/mcp")
    assert replayed.returncode == 2 and "Port out of range" in replayed.stderr and "Traceback" not in replayed.stderr


@pytest.mark.parametrize("url", ["http://[::1", "http://h:abc/", "http://h:0/", "ftp://h/", "http:///x"])
def test_a_malformed_upstream_is_status_2_naming_it(url: str) -> None:
    from wiretap.run.proxy import BadUpstream, check_upstream

    with pytest.raises(BadUpstream, match=re.escape(repr(url))):
        check_upstream(url)
    code, message = one_error("proxy", "--upstream", url)
    assert code == 2 and message.endswith(repr(url))


def test_a_bad_ca_file_is_named_and_not_reported_as_a_listen_failure(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    result = wiretap("proxy", "--upstream", "https://127.0.0.1:9/mcp", "--upstream-cafile", bad)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"Error: {bad}: not a CA certificate in PEM format")
    missing = wiretap("proxy", "--upstream", "https://127.0.0.1:9/mcp", "--upstream-cafile", tmp_path / "no.pem")
    assert (missing.returncode, missing.stderr.strip()) == (
        3,
        f"Error: {tmp_path / 'no.pem'}: No such file or directory",
    )


def test_a_busy_port_is_status_3_in_one_line_without_asyncio_noise(tmp_path: Path, busy_port: int) -> None:
    listen = f"127.0.0.1:{busy_port}"
    result = wiretap("proxy", "--upstream", "http://127.0.0.1:9/mcp", "--listen", listen, "--out", tmp_path / "r.jsonl")
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == f"Error: cannot listen on {listen}: Address already in use"
    assert "Unclosed" not in result.stderr and "Traceback" not in result.stderr
    replayed = wiretap("replay", DEMO, "--listen", listen)
    assert replayed.returncode == 3
    assert replayed.stderr.strip() == f"Error: cannot listen on {listen}: Address already in use"


def test_a_proxy_that_cannot_create_its_recording_refuses_to_start(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "x.jsonl"
    result = wiretap("proxy", "--upstream", "http://127.0.0.1:9/mcp", "--out", target)
    assert result.returncode == 3
    assert result.stdout == ""  # no URL: nobody was told to connect
    assert result.stderr.strip().startswith(f"Error: cannot record to {target}: ")
    assert "RECORDING FAILED" not in result.stderr


def test_a_session_proxy_that_cannot_start_fails_the_wrap_with_its_reason(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:99999/mcp"}}})
    home = tmp_path / "home"
    home.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "--out", str(tmp_path / "s"), "--", "claude", "--mcp-config", config],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("Error: the proxy for web did not start: ")
    assert "Port out of range" in result.stderr and "Traceback" not in result.stderr


def test_ctrl_c_is_status_130_without_a_traceback(tmp_path: Path) -> None:
    """``report`` blocked reading a FIFO that a writer holds open but never writes: Ctrl-C ends it."""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "wiretap", "report", str(fifo)], stderr=subprocess.PIPE, text=True)
    writer = None
    try:
        deadline = time.monotonic() + 30
        while writer is None:  # opening the writing end without blocking works once the reader has it open
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert time.monotonic() < deadline, "wiretap report never opened the FIFO"
                time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "servers",
    [{"a": 1}, [1], [{"name": "x"}], [{"name": "x", "recording": 7}], [{"name": "x", "recording": "../../etc/passwd"}]],
    ids=["not-a-list", "not-an-object", "no-recording", "not-a-name", "outside-the-folder"],
)
def test_a_session_manifest_of_the_wrong_shape_is_status_2_naming_it(session: Path, servers: object) -> None:
    manifest = json.loads((session / "manifest.json").read_text())
    (session / "manifest.json").write_text(json.dumps({**manifest, "servers": servers}))
    for command in (["show"], ["report"], ["check", "--expect", str(DEMO_EXPECT)], ["export", "--format", "html"]):
        assert one_error(*with_recording(command, session)) == (
            2,
            f"{session / 'manifest.json'}: 'servers' must list entries with a name and a recording",
        )


def test_the_demo_never_overwrites_a_recording(tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_text("mine\n")
    assert one_error("demo", "--out", mine) == (2, f"{mine}: exists; choose another --out")
    assert mine.read_text() == "mine\n"
