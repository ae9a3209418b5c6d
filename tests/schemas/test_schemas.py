"""The published JSON Schemas: shipped in the package, printed by ``wiretap schema``, and true of every
shipped recording, every report the scenarios produce and every shipped expectations file."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from support import paths
from support.export_recordings import claude_code_tasks, relentless_poller

from wiretap.analysis.report import build_report
from wiretap.cli import cli
from wiretap.schemas import NAMES, schema, schema_text
from wiretap.schemas.generate import report_schema_text

REPO = paths.REPO
RECORDINGS = sorted((REPO / "recordings").glob("*.jsonl"))
EXPECTATIONS = sorted((REPO / "recordings").glob("*.expect.yaml"))


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    loaded = schema(name)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return jsonschema.Draft202012Validator(loaded)


def errors(name: str, document: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name).iter_errors(document)]


@pytest.mark.parametrize("name", NAMES)
def test_wiretap_schema_prints_the_shipped_schema_and_it_is_a_valid_json_schema(name: str) -> None:
    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == schema(name) and result.output == schema_text(name)
    validator(name)


def test_an_unknown_schema_name_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["schema", "recordings"])
    assert result.exit_code == 2 and "recording" in result.output


def test_the_shipped_report_schema_is_what_the_report_model_says() -> None:
    assert schema_text("report") == report_schema_text(), "run: python -m wiretap.schemas.generate"


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_every_line_of_every_shipped_recording_and_its_report_follow_their_schemas(recording: Path) -> None:
    for n, line in enumerate(recording.read_text().splitlines(), 1):
        assert errors("recording", json.loads(line)) == [], f"{recording.name}:{n}"
    assert errors("report", build_report(recording).to_dict()) == []


def test_the_reports_of_the_scenarios_follow_the_schema(tmp_path: Path) -> None:
    for path in (claude_code_tasks(tmp_path / "tasks.jsonl"), relentless_poller(tmp_path / "poller.jsonl", 300)):
        assert errors("report", build_report(path).to_dict()) == []


def test_the_report_json_of_the_cli_follows_the_schema() -> None:
    result = CliRunner().invoke(cli, ["report", str(REPO / "recordings" / "cc-ext-form.jsonl"), "--format", "json"])
    assert result.exit_code == 0
    assert errors("report", json.loads(result.output)) == []


def test_the_schemas_catch_what_they_promise_to() -> None:
    good = build_report(REPO / "recordings" / "a2a-backoff.jsonl").to_dict()
    bad = json.loads(json.dumps(good))
    bad["tasks"][0]["settled_interval"] = "5 s"
    bad["verdicts"]["poll_intervals"]["typo"] = 1
    assert len(errors("report", bad)) >= 1
    assert errors("recording", {"t": -1, "kind": "message", "dir": "up", "size": 3}) != []
    assert errors("recording", {"kind": "header", "format": 1}) != []
    assert errors("recording", {"t": 0.1, "kind": "teleport"}) != []


@pytest.mark.parametrize("path", EXPECTATIONS, ids=[p.stem for p in EXPECTATIONS])
def test_every_shipped_expectations_file_follows_the_schema_and_names_it_for_editors(path: Path) -> None:
    text = path.read_text()
    assert text.splitlines()[0] == "# yaml-language-server: $schema=../wiretap/schemas/expect.schema.json"
    assert (path.parent / "../wiretap/schemas/expect.schema.json").resolve().is_file()
    assert errors("expect", yaml.safe_load(text)) == []


@pytest.mark.parametrize(
    "document",
    [
        {"version": 2, "expect": [{"no_findings": True}]},
        {"version": 1, "expect": []},
        {"version": 1, "expect": [{"cancel_on_exit": "maybe"}]},
        {"version": 1, "expect": [{"poll_interval": {"within": "ten"}}]},
        {"version": 1, "expect": [{"no_findings": True, "finding": {"code": "x"}}]},
        {"version": 1, "checks": [{"no_findings": True}]},
        {"version": 1, "expect": [{"final_state": {"task": "*"}}]},
    ],
)
def test_the_expectations_schema_refuses_what_wiretap_check_refuses(document: dict[str, Any], tmp_path: Path) -> None:
    assert errors("expect", document) != []
    path = tmp_path / "bad.expect.yaml"
    path.write_text(yaml.safe_dump(document))
    recording = REPO / "recordings" / "demo.jsonl"
    result = CliRunner().invoke(cli, ["check", str(recording), "--expect", str(path)])
    assert result.exit_code != 0 and "Error" in result.output


def test_the_expectations_schema_knows_every_check_wiretap_check_knows() -> None:
    from wiretap.judge.expect.checks import CHECKS

    assert set(schema("expect")["$defs"]["check"]["properties"]) == set(CHECKS)
