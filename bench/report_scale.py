"""How the commands that read a whole recording scale: `report`, `show --json`, `export` (SVG) and
`export --format otlp` (the OTel mapping, to a file) of a recording of N messages (default 1 million),
against a plain `json.loads` pass over the same file. Each runs in its own process; every round visits
every variant in turn, so noise hits them alike. Memory is the peak RSS of that process (ru_maxrss), at
N and at N/4, to show whether it grows with the recording. ``--baseline DIR`` also runs the commands
with the wiretap package of another checkout (DIR/wiretap), in the same rounds.

    python bench/report_scale.py [--messages 1000000] [--rounds 3] [--baseline ../main]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

TASKS = 200


def write_recording(path: Path, messages: int) -> None:
    """A busy client: tool calls that become tasks, each polled every 500 ms until it completes."""
    with path.open("wb") as out:
        out.write(encode_event(Header(transport="stdio", name="scale", argv=["bench"]).to_dict())[0])
        t, next_id, written, cycle = 0.0, 0, 0, 0
        while written < messages:
            cycle += 1
            for task in range(TASKS):
                if written >= messages:
                    break
                next_id += 1
                task_id = f"task-{cycle // 40}-{task}"
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


COMMANDS = {
    "report": ["report"],
    "show --json": ["show", "--json"],
    "export": ["export", "--format", "svg"],
    "otel": ["export", "--format", "otlp"],
}
JSON_PASS = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)"


def run(argv: list[str], source: Path | None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, ``wait4``) of one process, its output thrown away."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=sink, env=env)
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
    parser.add_argument("--baseline", type=Path, help="a checkout whose wiretap to measure alongside")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    sources = {"": here}
    if args.baseline is not None:
        sources[" (baseline)"] = args.baseline.resolve()
    sizes = (args.messages // 4, args.messages)
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = Path(folder) / f"rec-{size}.jsonl"
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
    print(f"medians of {args.rounds} interleaved rounds; x json: the ratio to the json.loads pass of the same size;")
    print("MiB: peak RSS of the process; growth: its peak at N over its peak at N/4 (1.00 is flat).")


if __name__ == "__main__":
    main()
