"""``wiretap check``: a recording judged against expectations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from wiretap.judge.check import Judged


@click.command()
@click.argument("recording", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--expect",
    "-e",
    "expectations",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, readable=False),
    help="The expectations (YAML; see recordings/*.expect.yaml).",
)
@click.option("--junit-xml", type=click.Path(path_type=Path, dir_okay=False), help="Also write JUnit XML here.")
@click.option("--summary", is_flag=True, help="Append markdown to $GITHUB_STEP_SUMMARY (GitHub Actions).")
def check(recording: Path, expectations: Path, junit_xml: Path | None, summary: bool) -> None:
    """Check a recording (or session folder) against expectations; exit 1 if any fails, 2 on a bad file."""
    from wiretap.judge.check import check as run_checks
    from wiretap.judge.check import load_expectations
    from wiretap.recording.folders import is_session

    judged = run_checks(recording, load_expectations(expectations))
    failed = [j for j in judged if not j.outcome.ok]
    for j in judged:
        mark = "ok  " if j.outcome.ok else "FAIL"
        where = f"  [{j.recording.name}]" if is_session(recording) else ""
        click.echo(f"{mark} {expectations}:{j.expectation.line} {j.expectation.name}: {j.outcome.summary}{where}")
        for line in [] if j.outcome.ok else j.outcome.evidence:
            click.echo(f"       {line}")
    click.echo(f"{len(judged) - len(failed)} of {len(judged)} expectations hold")
    _ci_outputs(judged, expectations, junit_xml, summary)
    sys.exit(1 if failed else 0)


def _ci_outputs(judged: list[Judged], expectations: Path, junit_xml: Path | None, summary: bool) -> None:
    from wiretap.files import write_private
    from wiretap.render import ci

    if junit_xml is not None:
        write_private(junit_xml, ci.junit_xml(judged, expectations))
    if summary:
        ci.append_step_summary(ci.check_markdown(judged, expectations))
