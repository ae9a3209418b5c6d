"""pytest record modes on a sample project (pytester, a separate pytest process): the real MCP Python SDK
client spawning the real SDK server through ``wiretap_stdio``, and over Streamable HTTP through
``wiretap_http``, in every mode. The servers write a wire log whenever they run, so a test can tell
whether the real server answered or a replay did."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support import paths

PEER_SCRIPTS = paths.PEER_SCRIPTS

SAMPLE = """
import json, os, subprocess, sys
from pathlib import Path
import pytest

PEER = {python!r}
SCRIPTS = Path({scripts!r})
WIRE = Path(os.environ["SAMPLE_WIRE"])


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_tools(wiretap_stdio):
    server = wiretap_stdio([PEER, str(SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(WIRE / "stdio.log")])
    mode = os.environ.get("SAMPLE_CLIENT_MODE", "legacy")
    report = run([PEER, str(SCRIPTS / "mcp_sdk_client.py"), mode, "--", *server])
    assert report["calls"]["add"]["structuredContent"] == {{"result": 42}}
"""

SAMPLE_HTTP = """
import json, os, subprocess
from pathlib import Path

PEER = {python!r}
SCRIPTS = Path({scripts!r})
WIRE = Path(os.environ["SAMPLE_WIRE"])


def test_over_http(wiretap_http):
    server = subprocess.Popen(
        [PEER, str(SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(WIRE / "http.log")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        url = wiretap_http(server.stdout.readline().strip())
        command = [PEER, str(SCRIPTS / "mcp_sdk_http_client.py"), url, "--mode", "legacy",
                   "--wire-log", str(WIRE / "client.log")]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout)["calls"]["add"]["structuredContent"] == {{"result": 42}}
    finally:
        server.terminate()
        server.wait(20)
"""


ADDER = """
import json, os, subprocess, sys
import pytest

SERVER = '''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "tools/call":
        a, b = request["params"]["arguments"]["a"], request["params"]["arguments"]["b"]
        result = {{"content": [{{"type": "text", "text": str(a + b)}}]}}
    else:
        result = {{"protocolVersion": "2025-06-18", "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": "adder", "version": "1"}}}}
    print(json.dumps({{"jsonrpc": "2.0", "id": request["id"], "result": result}}), flush=True)
print("adder: bye", file=sys.stderr, flush=True)
'''


def ask(argv, b):
    client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    init = {{"protocolVersion": "2025-06-18", "capabilities": {{}}, "clientInfo": {{"name": "t", "version": "1"}}}}
    client.stdin.write(json.dumps({{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}}) + "\\n")
    client.stdin.flush()
    client.stdout.readline()
    call = {{"name": "add", "arguments": {{"a": 40, "b": b}}}}
    client.stdin.write(json.dumps({{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}}) + "\\n")
    client.stdin.flush()
    answer = json.loads(client.stdout.readline())
    client.stdin.close()
    client.wait(30)
    return answer


def test_add(wiretap_stdio):
    answer = ask(wiretap_stdio([sys.executable, "-c", SERVER]), int(os.environ.get("ADD_B", "2")))
    assert answer["result"]["content"][0]["text"] == os.environ.get("ADD_SUM", "42")
"""

ADDER_RECORDING = Path("recordings") / "test_adder" / "test_add.jsonl"


def test_once_keeps_a_complete_recording_of_a_server_that_answers_at_once_and_none_replays_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_adder=ADDER.format())
    for _ in range(3):
        (pytester.path / ADDER_RECORDING).unlink(missing_ok=True)
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=once").assert_outcomes(passed=1)
        lines = (pytester.path / ADDER_RECORDING).read_bytes().splitlines()
        assert json.loads(lines[-1])["kind"] == "end"
        assert any(b"adder: bye" in line for line in lines)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
        result.assert_outcomes(passed=1)


def test_a_changed_request_fails_naming_the_closest_and_a_removed_recording_fails_naming_the_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_adder=ADDER.format())
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=once").assert_outcomes(passed=1)
    monkeypatch.setenv("ADD_B", "3")
    monkeypatch.setenv("ADD_SUM", "43")
    changed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*wiretap: tools/call * is not in test_add.jsonl: closest is #2 tools/call *"])
    (pytester.path / ADDER_RECORDING).unlink()
    removed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
    removed.assert_outcomes(failed=1)
    removed.stdout.fnmatch_lines(["*no recording at *recordings/test_adder/test_add.jsonl (record mode none)*"])


def test_a_recording_left_incomplete_fails_the_replay_naming_the_file_and_why(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_adder=ADDER.format())
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=once").assert_outcomes(passed=1)
    recording = pytester.path / ADDER_RECORDING
    recording.write_bytes(b"".join(recording.read_bytes().splitlines(keepends=True)[:-1]))  # no end event
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_add.jsonl is incomplete: it has no end event*--wiretap-record-mode=all*"])
    recording.write_bytes(b"")
    empty = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
    empty.assert_outcomes(failed=1)
    empty.stdout.fnmatch_lines(["*test_add.jsonl is incomplete: it is empty*"])


@pytest.fixture
def sample(pytester: pytest.Pytester, mcp_sdk_python: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_sample=SAMPLE.format(python=str(mcp_sdk_python), scripts=str(PEER_SCRIPTS)))
    wire = pytester.path / "wire"
    wire.mkdir()
    monkeypatch.setenv("SAMPLE_WIRE", str(wire))
    return pytester


def run(sample: pytest.Pytester, *args: str) -> pytest.RunResult:
    for log in (sample.path / "wire").iterdir():
        log.unlink()
    return sample.runpytest_subprocess("-p", "no:cacheprovider", *args)


def served(sample: pytest.Pytester) -> bool:
    """Whether the real server ran in the last run (it writes its wire log when it does)."""
    return (sample.path / "wire" / "stdio.log.in").exists()


RECORDING = Path("recordings") / "test_sample" / "test_tools.jsonl"


def c2s_methods(path: Path) -> list[str]:
    from wiretap.recording.reader import read_all

    _, events, _ = read_all(path)
    return [e["msg"].get("method", "response") for e in events if e["kind"] == "message" and e["dir"] == "c2s"]


def test_record_mode_none_fails_a_test_whose_recording_is_missing_and_says_how_to_record_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_missing="""
        def test_needs_a_recording(wiretap_stdio):
            wiretap_stdio(["never-started"])
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--wiretap-record-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no recording at *recordings/test_missing/test_needs_a_recording.jsonl (record mode none)*"]
    )
    result.stdout.fnmatch_lines(["*--wiretap-record-mode=once*"])


@pytest.mark.slow
def test_once_records_a_missing_recording_then_replays_it_without_the_server(sample: pytest.Pytester) -> None:
    first = run(sample, "--wiretap-record-mode=once")
    first.assert_outcomes(passed=1)
    recording = sample.path / RECORDING
    assert served(sample) and recording.is_file()
    assert recording.stat().st_mode & 0o777 == 0o600
    assert "initialize" in c2s_methods(recording)
    again = run(sample, "--wiretap-record-mode=once")
    again.assert_outcomes(passed=1)
    assert not served(sample)
    replayed = run(sample)  # the default mode is none: replay only
    replayed.assert_outcomes(passed=1)
    assert not served(sample)
    rerecorded = run(sample, "--wiretap-record-mode=all")
    rerecorded.assert_outcomes(passed=1)
    assert served(sample)


@pytest.mark.slow
def test_a_replay_miss_fails_the_test_itself_naming_the_closest_recorded_request(
    sample: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(sample, "--wiretap-record-mode=once").assert_outcomes(passed=1)
    # A client of the other era probes server/discover, which the recording lacks (then falls back).
    monkeypatch.setenv("SAMPLE_CLIENT_MODE", "auto")
    result = run(sample, "--wiretap-record-mode=none")
    result.assert_outcomes(failed=1)  # failed, not passed with an error at teardown
    assert not served(sample)
    result.stdout.fnmatch_lines(
        ["*wiretap: server/discover * is not in test_tools.jsonl: closest is #* differed: method: recorded *"]
    )


@pytest.mark.slow
def test_new_episodes_keeps_the_recording_until_the_test_asks_something_new(
    sample: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(sample, "--wiretap-record-mode=once").assert_outcomes(passed=1)
    recording = sample.path / RECORDING
    before = recording.read_bytes()
    run(sample, "--wiretap-record-mode=new_episodes").assert_outcomes(passed=1)
    assert served(sample) and recording.read_bytes() == before
    monkeypatch.setenv("SAMPLE_CLIENT_MODE", "auto")
    run(sample, "--wiretap-record-mode=new_episodes").assert_outcomes(passed=1)
    assert "server/discover" in c2s_methods(recording)
    run(sample, "--wiretap-record-mode=none").assert_outcomes(passed=1)  # and the new client replays clean


@pytest.mark.slow
def test_the_marker_names_the_recording_and_expectations_checked_on_the_clients_traffic_in_every_mode(
    sample: pytest.Pytester,
) -> None:
    sample.makefile(".yaml", holds="version: 1\nexpect:\n  - method_sequence: {contains: [initialize, tools/call]}\n")
    sample.makefile(".yaml", breaks="version: 1\nexpect:\n  - method_sequence: {contains: [tasks/get]}\n")
    test = (sample.path / "test_sample.py").read_text()
    marker = '@pytest.mark.wiretap(expect="holds.yaml", recording="fixtures/tools.jsonl")\n'
    marked = test.replace("def test_tools(", f"{marker}def test_tools(")
    (sample.path / "test_sample.py").write_text(marked)
    run(sample, "--wiretap-record-mode=once").assert_outcomes(passed=1)
    assert (sample.path / "fixtures" / "tools.jsonl").is_file()  # where the marker said
    run(sample, "--wiretap-record-mode=none").assert_outcomes(passed=1)
    (sample.path / "test_sample.py").write_text(marked.replace("holds.yaml", "breaks.yaml"))
    result = run(sample, "--wiretap-record-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*breaks.yaml:3 method_sequence:*"])


@pytest.mark.slow
def test_wiretap_http_records_through_a_proxy_where_the_ini_option_says_then_replays_without_the_server(
    pytester: pytest.Pytester, mcp_sdk_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_http=SAMPLE_HTTP.format(python=str(mcp_sdk_python), scripts=str(PEER_SCRIPTS)))
    wire = pytester.path / "wire"
    wire.mkdir()
    monkeypatch.setenv("SAMPLE_WIRE", str(wire))
    pytester.makeini("[pytest]\nwiretap_recordings_dir = cassettes\n")
    run(pytester, "--wiretap-record-mode=once").assert_outcomes(passed=1)
    recording = pytester.path / "cassettes" / "test_http" / "test_over_http.jsonl"
    assert recording.is_file() and json.loads(recording.read_text().splitlines()[0])["transport"] == "http"
    assert "tools/call" in (wire / "http.log").read_text()
    run(pytester, "--wiretap-record-mode=none").assert_outcomes(passed=1)
    assert "tools/call" not in (wire / "http.log").read_text()  # the real server was started, never asked


def test_sample_sources_are_valid_python() -> None:
    for source in (SAMPLE, SAMPLE_HTTP, ADDER):
        compile(textwrap.dedent(source.format(python="py", scripts="s")), "sample", "exec")
