"""MCP protocol version strings parsed, not compared as text (wiretap/wire/versions.py)."""

from __future__ import annotations

from datetime import date

import pytest

from wiretap.analysis.observe import era
from wiretap.wire.versions import REVISIONS, Era, Kind, parse_version


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-11-05", Era.LEGACY),
        ("2025-03-26", Era.LEGACY),
        ("2025-06-18", Era.LEGACY),
        ("2025-11-25", Era.LEGACY),
        ("2026-07-28", Era.MODERN),
    ],
)
def test_each_published_revision_is_known_with_its_era(text: str, expected: Era) -> None:
    version = parse_version(text)
    assert (version.kind, version.era, version.known) == (Kind.REVISION, expected, True)


def test_the_published_revisions_are_the_five_of_the_specification() -> None:
    assert REVISIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


def test_draft_2026_v1_is_a_modern_pre_release_of_2026_07_28() -> None:
    version = parse_version("DRAFT-2026-v1")
    assert (version.kind, version.precedes, version.era) == (Kind.PRE_RELEASE, "2026-07-28", Era.MODERN)


def test_draft_2025_v1_is_a_legacy_pre_release_of_2025_03_26_though_it_sorts_after_every_date_as_text() -> None:
    version = parse_version("DRAFT-2025-v1")
    assert "DRAFT-2025-v1" > "2026-07-28"
    assert (version.precedes, version.era) == ("2025-03-26", Era.LEGACY)


def test_a_draft_for_a_year_after_every_revision_precedes_an_unknown_one_and_is_modern() -> None:
    version = parse_version("DRAFT-2027-v3")
    assert (version.kind, version.precedes, version.era) == (Kind.PRE_RELEASE, None, Era.MODERN)
    assert version.describe() == "DRAFT-2027-v3 (a pre-release of a revision after 2026-07-28)"


def test_versions_order_by_date_with_a_pre_release_just_before_its_revision() -> None:
    texts = ["2026-07-28", "DRAFT-2026-v2", "2025-11-25", "DRAFT-2026-v1", "2024-11-05", "DRAFT-2027-v1"]
    ordered = sorted(texts, key=lambda text: parse_version(text).order or (date.max, 0, 0))
    assert ordered == ["2024-11-05", "2025-11-25", "DRAFT-2026-v1", "DRAFT-2026-v2", "2026-07-28", "DRAFT-2027-v1"]


def test_a_date_that_is_no_revision_is_dated_and_takes_the_era_of_its_date() -> None:
    assert (parse_version("2024-10-07").kind, parse_version("2024-10-07").era) == (Kind.DATED, Era.LEGACY)
    assert parse_version("2027-01-15").era is Era.MODERN


@pytest.mark.parametrize(
    "text", ["1.0", "2025-13-01", "draft-2026-v1", "DRAFT-2026", "2026-07-28 ", "", "DRAFT-0000-v1"]
)
def test_other_strings_are_unknown_with_no_era_and_no_order(text: str) -> None:
    version = parse_version(text)
    assert (version.kind, version.era, version.order) == (Kind.UNKNOWN, Era.UNKNOWN, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-07-28", "stateless (2026-07-28 on)"),
        ("DRAFT-2026-v1", "stateless (2026-07-28 on)"),
        ("DRAFT-2025-v1", "session (initialize, up to 2025-11-25)"),
        ("2025-11-25", "session (initialize, up to 2025-11-25)"),
        ("1.0", "unknown"),
        (None, "unknown"),
    ],
)
def test_a_behaviour_profile_names_the_era_the_parser_gives(text: str | None, expected: str) -> None:
    assert era(text) == expected
