"""A behaviour profile is read off the typed report of the one pass: what the client did on the wire comes
with the report when asked for, and the profile's figures are the report's own."""

from __future__ import annotations

import pytest
from support import paths

from wiretap.analysis.profile import profile_of
from wiretap.analysis.report import build_report

DEMO = paths.RECORDINGS / "demo.jsonl"


def test_a_report_keeps_the_clients_behaviour_only_when_asked() -> None:
    assert build_report(DEMO).behaviour is None
    behaviour = build_report(DEMO, behaviour=True).behaviour
    assert behaviour is not None and behaviour.handshake.client_name


def test_the_profile_carries_the_reports_figures_and_its_json_does_not_change() -> None:
    report = build_report(DEMO, behaviour=True)
    profile = profile_of(report)
    assert profile.findings == tuple(sorted({f.code for f in report.findings}))
    assert [(t.method, t.count) for t in profile.latency] == [(r.method, r.count) for r in report.latency]
    assert [t.pattern for t in profile.tasks] == [t.pattern for t in report.tasks]
    assert report.to_dict() == build_report(DEMO).to_dict()
    assert all("cadence" not in task for task in report.to_dict()["tasks"])


def test_a_profile_of_a_report_without_behaviour_says_so() -> None:
    with pytest.raises(ValueError, match="behaviour=True"):
        profile_of(build_report(DEMO))
