"""Record the report scenarios through the real wiretap, and (re)generate the shipped recordings.

    python tests/scenarios/make_recordings.py [--out recordings] [SCENARIO...]

Each scenario is a client of known timing (mcp_task_client.py over ``wiretap tap``, a2a_client.py over
``wiretap proxy``); see their docstrings for the schedules, and tests/analysis/test_report_scenarios.py for
the truths checked against ``wiretap report``. A recording is shipped only if its schedule was kept:
no shift, and every scheduled send recorded within ``SHIPPED_FIDELITY`` of its time (a recording taken
on a busy machine is made again). Shipped files go through ``wiretap scrub`` (no home, checkout,
interpreter, user or host name in the repo) and are mode 0644.

    python tests/scenarios/make_recordings.py --scrub-only   # scrub what is in --out, in place
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from wiretap.scrub.rewrite import Scrubber, scrub_recording

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MCP = ("mcp_task_client.py", "tap")
A2A = ("a2a_client.py", "proxy")
SCENARIOS: dict[str, tuple[str, str]] = {
    "cc-ext-polling": MCP,
    "cc-ext-form": MCP,
    "cc-ext-headless": MCP,
    "a2a-backoff": A2A,
    "a2a-rejected-loop": A2A,
    "core-tasks": MCP,
    "exit-no-cancel": MCP,
    "exit-cancel": MCP,
    "a2a-unspecified": A2A,
    "a2a-03-in-10": A2A,
    "a2a-terminal": A2A,
    "task-without-support": MCP,
    "unknown-task": MCP,
    "repeat-after-unknown": MCP,
    "slow-poll": MCP,
    "failed-poll-run": MCP,
    "unanswered": MCP,
}
LONG = ("cc-ext-form", "a2a-backoff", "cc-ext-polling", "slow-poll")
"""Over 10 s each (52, 43, 16 and 16 s); every other scenario takes at most 6.5 s."""
SHORT = tuple(name for name in SCENARIOS if name not in LONG)
REACTION = 0.25
"""Seconds: an s2c message sooner than this after the last client event is an immediate reaction (the
scenarios' deliberate delays are 0.30 s and more)."""
EXIT_DELAY = {"exit-no-cancel": 0.30}
LATE = re.compile(r"([0-9.]+) ms late")
SHIPPED_FIDELITY = 0.010
LIVE_FIDELITY = 0.015


class ScenarioFailed(RuntimeError):
    pass


def fidelity(recording: Path, scheduled: list[float], exit_delay: float | None = None) -> float:
    """How far the recording strays from the scenario's timing, in seconds (the largest of):

    - the distance between each scheduled send and the nearest client event (a c2s message, the
      client's end of input on stdio, a closed connection on HTTP);
    - the peer's reactions, once the schedule has begun: each s2c message that follows the last client
      event by less than ``REACTION`` (an immediate answer, or a message the server sends at once)
      should follow it at once, so that whole delay counts;
    - the scenario server's own delays, which it reports on stderr as it fires them;
    - for a scenario whose server exits ``exit_delay`` after end of input, how far its exit is from that.

    This reads the recording only, not the report: it tells whether the machine kept the timing.
    """
    client: list[float] = []
    worst = 0.0
    since = min(scheduled, default=0.0) - 0.001  # the opening exchange includes the server's start
    eof = exit_t = None
    for line in recording.read_text().splitlines()[1:]:
        event = json.loads(line)
        kind, t = event.get("kind"), float(event.get("t", 0.0))
        late = LATE.search(event.get("text", "")) if kind == "stderr" else None
        if late:
            worst = max(worst, float(late.group(1)) / 1000)
        if kind == "message" and event.get("dir") == "s2c" and client and since <= client[-1] > t - REACTION:
            worst = max(worst, t - client[-1])
        if (
            (kind == "message" and event.get("dir") == "c2s")
            or (kind == "eof" and event.get("dir") == "c2s")
            or (kind == "connection" and event.get("state") == "closed")
        ):
            client.append(t)
        if kind == "eof" and event.get("dir") == "c2s":
            eof = t
        if kind == "exit":
            exit_t = t
    if exit_delay is not None:
        worst = max(worst, float("inf") if eof is None or exit_t is None else abs(exit_t - eof - exit_delay))
    for due in scheduled:
        worst = max(worst, min((abs(t - due) for t in client), default=float("inf")))
    return worst


def record(name: str, recording: Path) -> dict[str, Any]:
    """Run one scenario into ``recording`` (which must not exist); return the client's summary and
    ``fidelity``."""
    script, _ = SCENARIOS[name]
    done = subprocess.run(
        [sys.executable, str(HERE / script), name, str(recording)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise ScenarioFailed(f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["fidelity"] = fidelity(recording, summary["scheduled"], EXIT_DELAY.get(name))
    summary["recording"] = str(recording)
    return summary


def record_faithfully(
    name: str, directory: Path, *, tolerance: float, no_shift: bool, tries: int = 5
) -> dict[str, Any]:
    """Record ``name`` into ``directory/name.jsonl``, again if the machine did not keep the schedule."""
    summary: dict[str, Any] = {}
    for attempt in range(1, tries + 1):
        recording = directory / f"{name}.jsonl"
        recording.unlink(missing_ok=True)
        summary = record(name, recording)
        summary["attempts"] = attempt
        if summary["fidelity"] <= tolerance and (summary["shift"] == 0 or not no_shift):
            return summary
        print(
            f"{name}: attempt {attempt}: fidelity {summary['fidelity'] * 1000:.1f} ms, shift {summary['shift']} s;"
            " recording it again",
            file=sys.stderr,
            flush=True,
        )
    raise ScenarioFailed(
        f"{name}: the schedule was not kept in {tries} tries (fidelity {summary['fidelity'] * 1000:.1f} ms, "
        f"shift {summary['shift']} s): the machine is too busy"
    )


def record_all(
    names: list[str] | tuple[str, ...],
    directory: Path,
    *,
    parallel: int,
    tolerance: float = LIVE_FIDELITY,
    no_shift: bool = False,
) -> dict[str, dict[str, Any]]:
    """Record several scenarios at once (each one's processes are independent)."""
    directory.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {
            name: pool.submit(record_faithfully, name, directory, tolerance=tolerance, no_shift=no_shift)
            for name in names
        }
        return {name: future.result() for name, future in futures.items()}


def scrub_in_place(folder: Path) -> None:
    """Every shipped recording through ``wiretap scrub``: nothing in the repo names the machine it was made on."""
    for recording in sorted(folder.glob("*.jsonl")):
        scrubbed = recording.with_name(f".{recording.name}.scrubbed")
        scrubbed.unlink(missing_ok=True)
        scrub_recording(recording, scrubbed, Scrubber())
        os.chmod(scrubbed, 0o644)
        scrubbed.replace(recording)
        print(f"{recording}: scrubbed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "recordings", help="where to put NAME.jsonl")
    parser.add_argument("--parallel", type=int, default=4, help="scenarios recorded at once")
    parser.add_argument("names", nargs="*", metavar="SCENARIO", help=f"default: all of {', '.join(SCENARIOS)}")
    parser.add_argument(
        "--scrub-only", action="store_true", help="only scrub the recordings already in --out, in place (rerunnable)"
    )
    args = parser.parse_args()
    if args.scrub_only:
        scrub_in_place(args.out)
        return
    unknown = set(args.names) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    names = args.names or list(SCENARIOS)
    # Long ones first, so that the short ones fill the time they take.
    names.sort(key=lambda name: name not in LONG)
    with tempfile.TemporaryDirectory() as scratch:
        results = record_all(names, Path(scratch), parallel=args.parallel, tolerance=SHIPPED_FIDELITY, no_shift=True)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, summary in results.items():
            target = args.out / f"{name}.jsonl"
            target.unlink(missing_ok=True)
            scrub_recording(Path(summary["recording"]), target, Scrubber())
            os.chmod(target, 0o644)
            print(
                f"{target}: fidelity {summary['fidelity'] * 1000:.1f} ms, "
                f"{summary['attempts']} attempt(s), {target.stat().st_size} bytes"
            )


if __name__ == "__main__":
    main()
