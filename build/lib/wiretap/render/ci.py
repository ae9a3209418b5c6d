"""Outputs for CI: a JUnit XML file of judged expectations, and markdown appended to the GitHub Actions
step summary (``$GITHUB_STEP_SUMMARY``). Commands call these; nothing here reads a recording."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiretap.judge.check import Judged

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def append_step_summary(markdown: str, environ: Mapping[str, str] = os.environ) -> Path | None:
    """Append ``markdown`` to the step summary file when ``$GITHUB_STEP_SUMMARY`` names one; returns it
    (None outside GitHub Actions, where there is nothing to append to)."""
    target = environ.get(STEP_SUMMARY)
    if not target:
        return None
    path = Path(target)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return path


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def check_markdown(judged: Sequence[Judged], expectations: Path) -> str:
    """The judged expectations as a markdown section: a table, and each failure's evidence."""
    failed = [j for j in judged if not j.outcome.ok]
    verdict = "all hold" if not failed else f"{len(failed)} of {len(judged)} fail"
    lines = [f"### wiretap check: {expectations.name} — {verdict}", "", "| | expectation | recording | result |"]
    lines.append("|---|---|---|---|")
    for j in judged:
        mark = "✅" if j.outcome.ok else "❌"
        name = f"`{j.expectation.name}` (line {j.expectation.line})"
        lines.append(f"| {mark} | {name} | {_cell(j.recording.name)} | {_cell(j.outcome.summary)} |")
    for j in failed:
        if j.outcome.evidence:
            lines += ["", f"<details><summary>{j.expectation.name}: evidence</summary>", "", "```text"]
            lines += [*j.outcome.evidence, "```", "</details>"]
    return "\n".join(lines) + "\n\n"


def junit_xml(judged: Sequence[Judged], expectations: Path) -> bytes:
    """One testcase per judged expectation; a failure's text is its evidence."""
    failures = sum(not j.outcome.ok for j in judged)
    suite = ET.Element(
        "testsuite", name=f"wiretap check {expectations.name}", tests=str(len(judged)), failures=str(failures)
    )
    for j in judged:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"wiretap.{j.recording.stem}",
            name=f"{expectations.name}:{j.expectation.line} {j.expectation.name}",
        )
        if not j.outcome.ok:
            failure = ET.SubElement(case, "failure", message=j.outcome.summary, type=j.expectation.name)
            failure.text = "\n".join(j.outcome.evidence) or j.outcome.summary
    root = ET.Element("testsuites", tests=str(len(judged)), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
