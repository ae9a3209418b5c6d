"""The walkthrough of docs/lab.md ("what differs between two lab sessions"), run as written: each ``wiretap``
command of its shell blocks in order, with the real Claude Code 2.1.332 as ``claude`` on PATH and 2.1.197
where the page installs it, offline (``--scripted``); each text block after a shell block is the output of
that block's last command, and must be what ``wiretap diff`` prints (its latency note aside, which is for
information and changes from run to run)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import paths

pytestmark = pytest.mark.slow

REPO = paths.REPO
PAGE = REPO / "docs" / "lab.md"
HEADING = "### Walkthrough: what differs between two lab sessions"
OLD_CLAUDE = Path("old/node_modules/.bin/claude")
"""Where the page's ``npm install --prefix old`` puts the older Claude Code's command."""
FENCE = re.compile(r"^```(\w*)$")


@dataclass
class Block:
    commands: list[list[str]]
    """The block's ``wiretap`` commands, without the word ``wiretap``."""
    shown: str | None = None
    """The output the page shows for the block's last command."""


def walkthrough() -> list[Block]:
    text = PAGE.read_text()
    section = text[text.index(HEADING) :]
    end = re.search(r"^#{2,3} ", section[len(HEADING) :], re.MULTILINE)
    section = section[: len(HEADING) + end.start()] if end else section
    found: list[Block] = []
    language: str | None = None
    lines: list[str] = []
    for line in section.splitlines():
        fence = FENCE.match(line)
        if fence and language is None:
            language, lines = fence.group(1), []
        elif fence:
            if language == "shell":
                found.append(Block([shlex.split(w)[1:] for w in lines if w.startswith("wiretap ")]))
            elif language == "text" and found and found[-1].shown is None:
                found[-1].shown = "\n".join(lines) + "\n"
            language = None
        elif language is not None:
            lines.append(line)
    return found


def without_latency(output: str) -> str:
    """The diff without its latency note (a section of its own, never a difference)."""
    return re.sub(r"== latency \(for information\)\n(?:  .*\n)*", "", output)


@pytest.fixture(scope="module")
def walked(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from support import peers

    root = tmp_path_factory.mktemp("walkthrough")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude_code_bin)
    (root / OLD_CLAUDE).parent.mkdir(parents=True)
    (root / OLD_CLAUDE).symlink_to(peers.claude_code_old())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "HOME": str(root / "home")}
    blocks = walkthrough()
    runs: list[tuple[list[str], subprocess.CompletedProcess[str], str | None]] = []
    for block in blocks:
        for n, args in enumerate(block.commands, 1):
            done = subprocess.run(
                [sys.executable, "-m", "wiretap", *args],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            runs.append((args, done, block.shown if n == len(block.commands) else None))
    return {"root": root, "env": env, "blocks": blocks, "runs": runs}


def test_the_walkthrough_runs_four_lab_sessions_and_three_diffs_each_with_its_output_shown() -> None:
    blocks = walkthrough()
    commands = [args[0] for block in blocks for args in block.commands]
    assert commands == ["lab", "lab", "diff", "lab", "diff", "lab", "diff"]
    assert [block.shown is not None for block in blocks] == [True, True, True]
    assert [args for block in blocks for args in block.commands if args[0] == "diff"] == [
        ["diff", "lab-a", "lab-a2"],
        ["diff", "lab-a", "lab-b"],
        ["diff", "lab-old", "lab-b"],
    ]


def test_every_lab_session_of_the_walkthrough_runs_offline_and_prints_its_investigation(walked) -> None:
    labs = [(args, done) for args, done, _ in walked["runs"] if args[0] == "lab"]
    assert len(labs) == 4
    titles = []
    for args, done in labs:
        assert done.returncode == 0, (args, done.stderr[-4000:])
        titles += [line for line in done.stdout.splitlines() if line.startswith("Investigation of session ")]
    assert titles == [
        f"Investigation of session {name}: Claude Code {version}"
        for name, version in (("lab-a", "2.1.332"), ("lab-a2", "2.1.332"), ("lab-b", "2.1.332"), ("lab-old", "2.1.197"))
    ]


def test_each_diff_prints_what_the_page_shows_and_exits_by_whether_the_sessions_differ(walked) -> None:
    diffs = [(args, done, shown) for args, done, shown in walked["runs"] if args[0] == "diff"]
    for args, done, shown in diffs:
        assert shown is not None
        assert without_latency(done.stdout) == without_latency(shown), args
        assert done.returncode == (0 if shown.endswith("no difference in behaviour\n") else 1), args


def test_the_same_walk_twice_and_a_session_with_itself_show_no_difference(walked) -> None:
    [(_, twice, _)] = [r for r in walked["runs"] if r[0] == ["diff", "lab-a", "lab-a2"]]
    assert twice.returncode == 0 and twice.stdout.endswith("no difference in behaviour\n")
    itself = subprocess.run(
        [sys.executable, "-m", "wiretap", "diff", "lab-a", "lab-a"],
        cwd=walked["root"],
        env=walked["env"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (itself.returncode, without_latency(itself.stdout)) == (0, "no difference in behaviour\n")


def test_leaving_a_condition_out_names_its_tasks_and_the_cancellations_that_went_with_them(walked) -> None:
    [(_, done, _)] = [r for r in walked["runs"] if r[0] == ["diff", "lab-a", "lab-b"]]
    assert "  task 4 (endless_task #1): only in A\n  task 5 (endless_task #2): only in A\n" in done.stdout
    assert "  -→ tasks/cancel\n" in done.stdout
    assert "cancel on exit: not sent, with a live task → no live task at exit" in done.stdout
    assert "poll_task" not in done.stdout, "the cadence tasks polled alike on both sides"


def test_the_older_version_polls_no_task_where_the_newer_polls_three(walked) -> None:
    [(_, done, _)] = [r for r in walked["runs"] if r[0] == ["diff", "lab-old", "lab-b"]]
    assert "  client version: 2.1.197 → 2.1.332\n" in done.stdout
    assert "  tasks: 0 → 3\n" in done.stdout
    assert [line.strip() for line in done.stdout.splitlines() if "only in B" in line] == [
        f"task {n} (poll_task #{n}): only in B" for n in (1, 2, 3)
    ]
