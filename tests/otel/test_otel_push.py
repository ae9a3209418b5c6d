"""``wiretap otel``: recordings pushed over OTLP/HTTP to a receiver of known behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import paths
from support.otlp_receiver import Receiver, otlp_receiver, reject

from wiretap.cli import cli
from wiretap.otel.endpoint import target_from
from wiretap.otel.sources import recording_spans

RECORDINGS = paths.RECORDINGS
SOME = ["demo.jsonl", "core-tasks.jsonl", "a2a-backoff.jsonl"]


def push(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["otel", *args], env=env or {})
    return result.exit_code, result.output


@pytest.fixture
def receiver() -> object:
    with otlp_receiver() as r:
        yield r


def copy_some(folder: Path) -> int:
    """Copies of a few shipped recordings; returns how many spans they make."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SOME:
        (folder / name).write_bytes((RECORDINGS / name).read_bytes())
    return sum(len(recording_spans(RECORDINGS / name)) for name in SOME)


def test_a_folder_of_recordings_arrives_span_for_span(receiver: Receiver, tmp_path: Path) -> None:
    expected = copy_some(tmp_path / "ci" / "run-1")
    status, out = push(str(tmp_path / "ci"), "--endpoint", receiver.url)
    assert status == 0, out
    assert receiver.paths == ["/v1/traces"] * 3
    assert len(receiver.spans) == expected
    assert sorted(s.span_id for s in receiver.spans) == sorted(
        s.span_id for name in SOME for s in recording_spans(RECORDINGS / name)
    )
    assert out.strip() == f"wiretap: sent {expected} spans from 3 of 3 recording(s) to {receiver.url}/v1/traces"


def test_an_unreadable_file_is_skipped_with_a_line_and_exit_1(receiver: Receiver, tmp_path: Path) -> None:
    expected = copy_some(tmp_path)
    (tmp_path / "notes.jsonl").write_text("hello\n")
    status, out = push(str(tmp_path), "--endpoint", receiver.url)
    assert status == 1
    assert len(receiver.spans) == expected
    assert out.splitlines() == [
        f"wiretap: skipped {tmp_path / 'notes.jsonl'}: not a wiretap recording (line 1 is not a wiretap header)",
        f"wiretap: sent {expected} spans from 3 of 4 recording(s) to {receiver.url}/v1/traces",
    ]


def test_spans_the_endpoint_refuses_are_counted_in_the_summary(receiver: Receiver) -> None:
    receiver.answers.append(reject(2, "too old"))
    status, out = push(str(RECORDINGS / "demo.jsonl"), "--endpoint", receiver.url)
    assert status == 1
    total = len(recording_spans(RECORDINGS / "demo.jsonl"))
    assert out.strip() == (
        f"wiretap: sent {total - 2} spans from 1 of 1 recording(s) to {receiver.url}/v1/traces; "
        "the endpoint refused 2 (too old)"
    )


def test_a_busy_endpoint_is_asked_again(receiver: Receiver) -> None:
    receiver.answers += [(503, b"busy", {"Retry-After": "0"}), (429, b"", {"Retry-After": "0"})]
    status, out = push(str(RECORDINGS / "demo.jsonl"), "--endpoint", receiver.url)
    assert status == 0, out
    assert len(receiver.paths) == 3 and len(receiver.spans) == len(recording_spans(RECORDINGS / "demo.jsonl"))


def test_a_refusing_endpoint_is_a_one_line_error(receiver: Receiver) -> None:
    receiver.answers.append((401, b"bad key\n", {}))
    status, out = push(str(RECORDINGS / "demo.jsonl"), "--endpoint", receiver.url)
    assert (status, out) == (3, f"Error: {receiver.url}/v1/traces answered 401: bad key\n")


def test_an_endpoint_nobody_listens_on_is_a_one_line_error(receiver: Receiver) -> None:
    status, out = push(str(RECORDINGS / "demo.jsonl"), "--endpoint", "http://127.0.0.1:9")
    assert (
        status == 3 and out.startswith("Error: cannot send to http://127.0.0.1:9/v1/traces: ") and out.count("\n") == 1
    )


def test_the_standard_environment_is_honoured_and_flags_override_it(receiver: Receiver) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.url + "/custom/traces",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s%3Dcret,x-team=a",
        "OTEL_SERVICE_NAME": "from-env",
        "OTEL_RESOURCE_ATTRIBUTES": "openinference.project.name=p1",
    }
    status, _ = push(str(RECORDINGS / "demo.jsonl"), env=env)
    assert status == 0
    assert receiver.paths == ["/custom/traces"]
    assert receiver.headers[0]["x-api-key"] == "s=cret" and receiver.headers[0]["x-team"] == "a"
    assert receiver.headers[0]["content-type"] == "application/x-protobuf"
    assert receiver.resource() == {"openinference.project.name": "p1", "service.name": "from-env"}
    status, _ = push(
        str(RECORDINGS / "demo.jsonl"), "--endpoint", receiver.url, "--header", "x-team=b",
        "--service-name", "flag", "--resource-attributes", "openinference.project.name=p2", env=env,
    )  # fmt: skip
    assert status == 0
    assert receiver.paths[1] == "/v1/traces" and receiver.headers[1]["x-team"] == "b"
    assert {a.key: a.value.string_value for a in receiver.requests[1].resource_spans[0].resource.attributes} == {
        "openinference.project.name": "p2", "service.name": "flag",
    }  # fmt: skip


def test_endpoint_resolution_follows_the_otel_spec() -> None:
    assert target_from({}).url == "http://localhost:4318/v1/traces"
    assert target_from({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}).url == "http://c:4318/v1/traces"
    assert target_from({}, endpoint="http://c:1/v1/traces").url == "http://c:1/v1/traces"
    status, out = push(str(RECORDINGS / "demo.jsonl"), env={"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"})
    assert (status, out) == (2, "Error: OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' is not an http(s) URL\n")


def test_without_the_otel_extra_the_message_says_what_to_install(tmp_path: Path) -> None:
    blocker = "import sys; sys.modules['opentelemetry'] = None; sys.modules['opentelemetry.proto'] = None\n"
    code = blocker + "from wiretap.cli import main; main(sys.argv[1:])"
    result = subprocess.run(
        [sys.executable, "-c", code, "otel", str(RECORDINGS / "demo.jsonl"), "--endpoint", "http://127.0.0.1:9"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == "Error: wiretap otel needs the OpenTelemetry packages: pip install 'wiretap[otel]'\n"
    live = subprocess.run(
        [sys.executable, "-c", code, "tap", "--otlp", "--", sys.executable, "-c", "pass"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert live.returncode == 2
    assert live.stderr == "Error: --otlp needs the OpenTelemetry packages: pip install 'wiretap[otel]'\n"
    assert not (tmp_path / "wiretap-recordings").exists()


def test_a_session_folder_is_pushed_as_one_trace(receiver: Receiver, tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "demo.jsonl").write_bytes((RECORDINGS / "demo.jsonl").read_bytes())
    manifest = {"kind": "wiretap-session", "client": "claude", "started": "2026-11-30T12:24:46.000Z",
                "servers": [{"name": "demo", "recording": "demo.jsonl"}], "exit": {"code": 0}}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    status, _ = push(str(tmp_path), "--endpoint", receiver.url)
    assert status == 0
    assert len({s.trace_id for s in receiver.spans}) == 1
    assert len(receiver.spans) == 1 + len(recording_spans(RECORDINGS / "demo.jsonl"))


def test_a_folder_without_recordings_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n")
    status, out = push(str(tmp_path), "--endpoint", "http://127.0.0.1:9")
    assert (status, out) == (2, f"Error: no recordings or session folders in {tmp_path}\n")
