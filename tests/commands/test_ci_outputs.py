"""CI outputs: ``wiretap check --junit-xml`` (a testcase per expectation, a failure's text its evidence) and
``--summary`` on check, report and diff, appending markdown to ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from support.check_fixtures import DEMO, expectations, task_recording


def wiretap(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "wiretap", *args]
    environ = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | (env or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=environ)


def test_junit_xml_has_a_testcase_per_expectation_and_a_failure_whose_text_is_the_evidence(tmp_path: Path) -> None:
    rules = expectations(
        tmp_path / "e.yaml", "  - poll_interval: {within: 10%, every: true}\n  - cancel_on_exit: sent\n"
    )
    drifting = task_recording(tmp_path / "drift.jsonl", [3.2, 6.2, 10.2, 14.2])
    junit = tmp_path / "junit.xml"
    result = wiretap("check", str(drifting), "--expect", str(rules), "--junit-xml", str(junit))
    assert result.returncode == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "2")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["e.yaml:3 poll_interval", "e.yaml:4 cancel_on_exit"]
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("message", "").startswith("task T: 2 intervals outside 3.000 s ± 10%")
    assert "intervals 3.00, 4.00 ×2 s" in failure.text  # the evidence check prints under the failure
    steady = task_recording(tmp_path / "steady.jsonl", [3.2, 6.2, 9.2, 12.2], cancel=True)
    assert wiretap("check", str(steady), "--expect", str(rules), "--junit-xml", str(junit)).returncode == 0
    passed = ET.parse(junit).getroot()
    assert passed.get("failures") == "0" and not passed.findall(".//failure")


def test_summary_appends_markdown_to_the_github_step_summary_and_does_nothing_without_one(tmp_path: Path) -> None:
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n")
    rules = expectations(tmp_path / "e.yaml", "  - cancel_on_exit: sent\n")
    drifting = task_recording(tmp_path / "drift.jsonl", [3.2, 6.2, 10.2, 14.2])
    env = {"GITHUB_STEP_SUMMARY": str(step)}
    assert wiretap("check", str(drifting), "--expect", str(rules), "--summary", env=env).returncode == 1
    assert wiretap("report", str(DEMO), "--summary", env=env).returncode == 0
    text = step.read_text()
    assert text.startswith("earlier step\n### wiretap check: e.yaml — 1 of 1 fail\n")
    assert "| ❌ | `cancel_on_exit` (line 3) | drift.jsonl | expected sent, the recording shows not_sent" in text
    assert text.count("### wiretap check") == 1
    assert "\n## wiretap report: demo (stdio, " in text.split("### wiretap check", 1)[1]  # the report, after
    outside = wiretap("report", str(DEMO), "--summary")
    assert outside.returncode == 0 and outside.stderr == ""


def test_diff_summary_appends_the_markdown_diff_after_what_was_there(tmp_path: Path) -> None:
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n")
    other = DEMO.parent / "exit-cancel.jsonl"
    differs = wiretap("diff", str(DEMO), str(other), "--summary", env={"GITHUB_STEP_SUMMARY": str(step)})
    assert differs.returncode == 1
    markdown = wiretap("diff", str(DEMO), str(other), "--format", "markdown")
    assert step.read_text() == "earlier step\n" + markdown.stdout
