"""``wiretap check``: expectations about behaviour, judged on a recording or a session folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wiretap.analysis.report import build_report
from wiretap.judge.expect.checks import CHECKS, VALIDATORS, Facts, Outcome
from wiretap.judge.expect.schema import BadExpectations, Expectation, Expectations, load
from wiretap.recording.folders import open_session


@dataclass
class Judged:
    recording: Path
    expectation: Expectation
    outcome: Outcome


def load_expectations(path: Path) -> Expectations:
    expectations = load(path, set(CHECKS))
    for item in expectations.checks:
        try:
            VALIDATORS[item.name](item.arg)
        except ValueError as exc:
            raise BadExpectations(f"{path}:{item.line}: {exc}") from None
    return expectations


def facts(path: Path, client_exited_monotonic: float | None = None) -> Facts:
    report = build_report(path, client_exited_monotonic=client_exited_monotonic, keep_methods=True)
    return Facts(report, report.methods)


def targets(path: Path, server: str | None) -> list[tuple[Path, float | None]]:
    if not path.is_dir():
        return [(path, None)]
    session = open_session(path)
    return [(file, session.client_exited_monotonic) for _, file in session.recordings_of(server)]


def check(path: Path, expectations: Expectations) -> list[Judged]:
    judged = []
    for recording, client_exit in targets(path, expectations.server):
        known = facts(recording, client_exit)
        for item in expectations.checks:
            judged.append(Judged(recording, item, CHECKS[item.name](item.arg, known)))
    return judged
