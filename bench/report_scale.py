"""How the commands that read a whole recording scale: `report`, `show --json`, `export` (SVG) and
`export --format otlp` (the OTel mapping, to a file) of a recording of N messages (default 1 million),
against a plain `json.loads` pass over the same file. Each runs in its own process; every round visits
every variant in turn, so noise hits them alike. Memory is the peak RSS of that process (ru_maxrss), at
N and at N/4, to show whether it grows with the recording. ``--baseline REF`` also runs the commands
with the wiretap package of that git ref, checked out into a temporary worktree, in the same rounds
(``--baseline-dir DIR``: an existing checkout instead). Every process runs in the directory of the
package it measures, so neither the editable install nor the caller's directory can stand in for it;
each one's ``wiretap.__file__`` is checked before the rounds start.

    python bench/report_scale.py [--messages 1000000] [--rounds 3] [--baseline main]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

TASKS = 200


def write_recording(path: Path, messages: int, *, ended: bool = True) -> None:
    """A busy client: tool calls that become tasks, each polled 40 times, every 200 ms (it asked for
    500 ms), until it completes. ``ended``: end it as a relay does (else it is a recording still growing)."""
    with path.open("wb") as out:
        out.write(encode_event(Header(transport="stdio", name="scale", argv=["bench"]).to_dict())[0])
        t, next_id, written, cycle = 0.0, 0, 0, 0
        while written < messages:
            cycle += 1
            for task in range(TASKS):
                if written >= messages:
                    break
                next_id += 1
                task_id = f"task-{(cycle - 1) // 40}-{task}"
                request = {"jsonrpc": "2.0", "id": next_id, "method": "tasks/get", "params": {"taskId": task_id}}
                status = "working" if cycle % 40 else "completed"
                result = {
                    "jsonrpc": "2.0",
                    "id": next_id,
                    "result": {"taskId": task_id, "status": status, "pollInterval": 500},
                }
                t += 0.0005
                out.write(encode_event({"t": round(t, 6), "kind": "message", "dir": "c2s", "msg": request})[0])
                t += 0.0005
                out.write(encode_event({"t": round(t, 6), "kind": "message", "dir": "s2c", "msg": result})[0])
                written += 2
        if ended:
            out.write(encode_event({"t": round(t, 6), "kind": "end", "written": written + 2, "lost": 0})[0])


COMMANDS = {
    "report": ["report"],
    "show --json": ["show", "--json"],
    "export": ["export", "--format", "svg"],
    "otel": ["export", "--format", "otlp"],
}
JSON_PASS = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)"


def _env(source: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def check_source(source: Path) -> None:
    """Fails unless a process started as ``run`` starts it imports wiretap from ``source``."""
    found = subprocess.run(
        [sys.executable, "-c", "import wiretap; print(wiretap.__file__)"],
        cwd=source,
        env=_env(source),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(source / "wiretap"):
        raise SystemExit(f"{source}: a process there imports wiretap from {found}")


def run(argv: list[str], source: Path | None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, ``wait4``) of one process, its output thrown away."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=sink, env=_env(source), cwd=source)
        _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return elapsed, usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)


def variants(path: Path, sources: dict[str, Path]) -> dict[str, tuple[list[str], Path | None]]:
    found: dict[str, tuple[list[str], Path | None]] = {
        "json.loads": ([sys.executable, "-c", JSON_PASS, str(path)], None)
    }
    for name, source in sources.items():
        for command, args in COMMANDS.items():
            found[f"{command}{name}"] = ([sys.executable, "-m", "wiretap", *args, str(path)], source)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="a git ref whose wiretap to measure alongside (a temporary worktree)")
    parser.add_argument("--baseline-dir", type=Path, help="an existing checkout whose wiretap to measure alongside")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    sources = {"": here}
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        if args.baseline is not None:
            sources[f" ({args.baseline})"] = stack.enter_context(_worktree(here, args.baseline, Path(folder)))
        elif args.baseline_dir is not None:
            sources[" (baseline)"] = args.baseline_dir.resolve()
        for source in sources.values():
            check_source(source)
        measure(args, sources, Path(folder))


@contextlib.contextmanager
def _worktree(repo: Path, ref: str, folder: Path) -> Iterator[Path]:
    """``ref`` checked out (detached) into a worktree under ``folder``, removed afterwards."""
    tree = folder / "baseline"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)


def measure(args: argparse.Namespace, sources: dict[str, Path], folder: Path) -> None:
    sizes = (args.messages // 4, args.messages)
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for size in sizes:
        path = folder / f"rec-{size}.jsonl"
        write_recording(path, size)
        print(f"{size:>9} messages, {path.stat().st_size / 2**20:.0f} MiB", flush=True)
        found = variants(path, sources)
        names = list(found)
        for round_no in range(args.rounds):
            shift = round_no % len(names)
            for name in names[shift:] + names[:shift]:
                results.setdefault((name, size), []).append(run(*found[name]))
    print(
        f"{'variant':<24}"
        + "".join(f"{f'{size} s':>12}{'x json':>8}{'MiB':>8}" for size in sizes)
        + f"{'MiB growth':>12}"
    )
    for name in variants(Path("-"), sources):
        line = f"{name:<24}"
        peaks = []
        for size in sizes:
            seconds = statistics.median(s for s, _ in results[(name, size)])
            floor = statistics.median(s for s, _ in results[("json.loads", size)])
            peak = statistics.median(m for _, m in results[(name, size)])
            peaks.append(peak)
            line += f"{seconds:>12.2f}{seconds / floor:>8.2f}{peak:>8.1f}"
        print(line + f"{peaks[1] / peaks[0]:>11.2f}×")
    _save(args, sources, results)
    print(f"medians of {args.rounds} interleaved rounds; x json: the ratio to the json.loads pass of the same size;")
    print("MiB: peak RSS of the process; growth: its peak at N over its peak at N/4 (1.00 is flat).")


def _save(
    args: argparse.Namespace, sources: dict[str, Path], results: dict[tuple[str, int], list[tuple[float, float]]]
) -> None:
    """Every sample to ``bench/results/report-<UTC time>.json``."""
    folder = Path(__file__).resolve().parent / "results"
    folder.mkdir(exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = folder / f"report-{stamp}.json"
    path.write_text(
        json.dumps(
            {
                "commit": commit,
                "messages": args.messages,
                "rounds": args.rounds,
                "baseline": args.baseline or (str(args.baseline_dir) if args.baseline_dir else None),
                "samples": [
                    {"variant": name, "messages": size, "seconds": [s for s, _ in runs], "mib": [m for _, m in runs]}
                    for (name, size), runs in results.items()
                ],
            },
            indent=1,
        )
    )
    print(f"samples: {path.relative_to(folder.parent.parent)}")


if __name__ == "__main__":
    main()
