"""Where the suite's own files are: the repository, the tests folder, and the data tests share."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
SCENARIOS = TESTS / "scenarios"
PEER_SCRIPTS = TESTS / "peer_scripts"
CORPORA = TESTS / "corpora"
RECORDINGS = REPO / "recordings"
