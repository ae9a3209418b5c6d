"""``wiretap export --format otlp``: OTLP/JSON that the OpenTelemetry protobuf JSON parser reads back."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from support import paths

from wiretap.cli import cli
from wiretap.otel.sources import recording_spans

RECORDINGS = paths.RECORDINGS
SHIPPED = sorted(RECORDINGS.glob("*.jsonl"))


ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def base64_ids(value: Any) -> Any:
    """OTLP/JSON writes ids as hex where protobuf's JSON mapping has base64 (the OTLP spec's one deviation)."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode() if k in ID_KEYS else base64_ids(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [base64_ids(v) for v in value]
    return value


def decode(text: str) -> list[ExportTraceServiceRequest]:
    return [Parse(json.dumps(base64_ids(json.loads(line))), ExportTraceServiceRequest()) for line in text.splitlines()]


def export(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["export", *args], env=env or {})
    return result.exit_code, result.output


@pytest.mark.parametrize("recording", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_recording_exports_as_otlp_json_the_protobuf_parser_reads(
    recording: Path, tmp_path: Path
) -> None:
    out = tmp_path / "spans.json"
    status, _ = export(str(recording), "--format", "otlp", "-o", str(out))
    assert status == 0
    (request,) = decode(out.read_text())
    (scope_spans,) = request.resource_spans[0].scope_spans
    assert scope_spans.scope.name == "wiretap"
    expected = recording_spans(recording)
    got = scope_spans.spans
    assert [(s.trace_id, s.span_id, s.parent_span_id, s.name) for s in got] == [
        (s.trace_id, s.span_id, s.parent_id or b"", s.name) for s in expected
    ]
    assert [(s.start_time_unix_nano, s.end_time_unix_nano, s.kind) for s in got] == [
        (s.start_ns, s.end_ns, int(s.kind)) for s in expected
    ]
    assert [len(s.attributes) for s in got] == [len(s.attributes) for s in expected]


def test_the_decoded_export_keeps_attribute_types_events_and_status() -> None:
    status, text = export(str(RECORDINGS / "a2a-rejected-loop.jsonl"), "--format", "otlp")
    assert status == 0
    spans = decode(text)[0].resource_spans[0].scope_spans[0].spans
    (task,) = [s for s in spans if s.name == "task"]
    attributes = {a.key: a.value for a in task.attributes}
    assert attributes["wiretap.task.polls"].int_value == 9
    assert attributes["wiretap.task.terminal"].bool_value is True
    assert attributes["wiretap.task.median_interval_s"].double_value == 0.5
    findings = [e for e in task.events if e.name == "wiretap.finding"]
    found = [{a.key: a.value.string_value for a in f.attributes}["wiretap.finding.code"] for f in findings]
    assert found == ["task-rejected", "poll-after-terminal"]  # in time order
    root = next(s for s in spans if not s.parent_span_id)
    codes = {a.key: a.value for a in root.attributes}["wiretap.finding.codes"]
    assert sorted(v.string_value for v in codes.array_value.values) == ["poll-after-terminal", "task-rejected"]
    (error,) = [s for s in decode(export(str(RECORDINGS / "demo.jsonl"), "-f", "otlp")[1])[0]
                .resource_spans[0].scope_spans[0].spans if s.status.code == 2]  # fmt: skip
    assert error.name == "resources/list" and error.status.message


def test_the_resource_comes_from_the_standard_environment() -> None:
    env = {"OTEL_SERVICE_NAME": "ci-runs", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,team=a%2Cb"}
    status, text = export(str(RECORDINGS / "demo.jsonl"), "-f", "otlp", env=env)
    assert status == 0
    resource = {a.key: a.value.string_value for a in decode(text)[0].resource_spans[0].resource.attributes}
    assert resource == {"service.name": "ci-runs", "deployment.environment": "ci", "team": "a,b"}


def test_a_malformed_resource_setting_is_a_one_line_error() -> None:
    status, text = export(str(RECORDINGS / "demo.jsonl"), "-f", "otlp", env={"OTEL_RESOURCE_ATTRIBUTES": "novalue"})
    assert status == 2  # bad input (docs/exit-statuses.md)
    assert text.strip() == "Error: OTEL_RESOURCE_ATTRIBUTES: 'novalue' is not key=value"


def test_a_session_folder_exports_as_one_trace(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "demo.jsonl").write_bytes((RECORDINGS / "demo.jsonl").read_bytes())
    manifest = {"kind": "wiretap-session", "client": "claude", "started": "2026-11-30T12:24:46.000Z",
                "servers": [{"name": "demo", "recording": "demo.jsonl"}], "exit": {"code": 0}}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    status, text = export(str(folder), "-f", "otlp")
    assert status == 0, text
    spans = decode(text)[0].resource_spans[0].scope_spans[0].spans
    assert len({s.trace_id for s in spans}) == 1
    assert len(spans) == 1 + len(recording_spans(RECORDINGS / "demo.jsonl"))
    assert [s.name for s in spans if not s.parent_span_id] == ["wiretap session claude"]


def test_a_file_that_is_not_a_recording_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    status, text = export(str(bad), "-f", "otlp")
    assert status == 2 and text.count("\n") == 1 and "not a wiretap recording" in text


def many_calls(path: Path, calls: int) -> Path:
    """A recording of ``calls`` answered tool calls: more spans than one OTLP batch holds."""
    from wiretap.recording.events import Header
    from wiretap.recording.writer import encode_event

    lines = [encode_event(Header(transport="stdio", name="many", argv=["many"]).to_dict())[0]]
    for n in range(1, calls + 1):
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": n}}}
        answer = {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": str(n)}]}}
        lines.append(encode_event({"t": n * 0.001, "kind": "message", "dir": "c2s", "msg": call})[0])
        lines.append(encode_event({"t": n * 0.001 + 0.0005, "kind": "message", "dir": "s2c", "msg": answer})[0])
    lines.append(encode_event({"t": calls * 0.001 + 0.01, "kind": "end"})[0])
    path.write_bytes(b"".join(lines))
    return path


def test_an_export_of_many_batches_streams_the_same_lines_to_stdout_and_to_a_private_file(tmp_path: Path) -> None:
    recording = many_calls(tmp_path / "many.jsonl", 1300)
    status, text = export(str(recording), "--format", "otlp")
    assert status == 0
    out = tmp_path / "out" / "spans.json"
    assert export(str(recording), "--format", "otlp", "-o", str(out))[0] == 0
    assert out.read_text() == text
    assert out.stat().st_mode & 0o777 == 0o600
    requests = decode(text)
    assert len(requests) >= 3, "the export was not written in batches"
    spans = [s for r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert sum(s.name.startswith("tools/call") for s in spans) == 1300
    assert len(spans) == len(recording_spans(recording))


def test_an_export_that_cannot_read_its_recording_writes_no_file_and_no_partial_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a recording\n")
    out = tmp_path / "spans.json"
    status, text = export(str(bad), "--format", "otlp", "-o", str(out))
    assert status != 0 and "bad.jsonl" in text
    assert list(tmp_path.iterdir()) == [bad]
