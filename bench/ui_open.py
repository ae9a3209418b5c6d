"""How fast `wiretap ui` opens a large recording: the first window of rows, the whole index, the report.

A recording of N messages (default 100,000, written by report_scale.py's busy client), opened by
`wiretap ui` in its own process, against a bare `json.loads` pass over the same file in its own
process, alternating in one run. Times are from the process start; the first window is the first
`/api/rows` answer with rows in it (what a page shows first), the index is complete when every event
is counted, the report when its first version is served.

Then how long a line appended to a recording takes to be served as a row (the page hears of it over
server-sent events at once): N appends, one at a time, median and p99.

    python bench/ui_open.py [--messages 100000] [--rounds 5] [--appends 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from report_scale import write_recording

LOADS = "import json, sys\nfor line in open(sys.argv[1], 'rb'): json.loads(line)\n"


def fetch(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=120) as response:
        data: dict[str, object] = json.load(response)
        return data


def open_ui(path: Path, events: int) -> dict[str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "wiretap", "ui", str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    marks = {"url": time.perf_counter() - started}
    try:
        while "window" not in marks or "index" not in marks or "report" not in marks:
            rows = fetch(url + "api/rows?from=0&count=100")
            now = time.perf_counter() - started
            if rows["rows"] and "window" not in marks:
                marks["window"] = now
            if rows["all"] == events and "index" not in marks:
                marks["index"] = now
            if fetch(url + "api/report")["version"] and "report" not in marks:
                marks["report"] = now
            time.sleep(0.01)
    finally:
        proc.terminate()
        proc.wait()
        proc.stdout.close()
    return marks


def loads_pass(path: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", LOADS, str(path)], check=True)
    return time.perf_counter() - started


def follow_latency(folder: Path, appends: int) -> list[float]:
    path = Path(folder) / "small.jsonl"
    write_recording(path, 10, ended=False)
    events = sum(1 for _ in path.open("rb")) - 1
    proc = subprocess.Popen([sys.executable, "-m", "wiretap", "ui", str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    latencies = []
    try:
        while fetch(url + "api/rows?count=0")["all"] != events:
            time.sleep(0.01)
        for n in range(appends):
            line = json.dumps({"t": 100.0 + n, "kind": "stderr", "text": f"line {n}"}) + "\n"
            with path.open("a") as f:
                f.write(line)
            written = time.perf_counter()
            events += 1
            while fetch(url + "api/rows?count=0")["all"] != events:
                time.sleep(0.002)
            latencies.append(time.perf_counter() - written)
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait()
        proc.stdout.close()
    return sorted(latencies)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--appends", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.jsonl"
        write_recording(path, args.messages)
        events = sum(1 for _ in path.open("rb")) - 1
        runs: list[dict[str, float]] = []
        floors: list[float] = []
        for _ in range(args.rounds):
            floors.append(loads_pass(path))
            runs.append(open_ui(path, events))
        latencies = follow_latency(Path(folder), args.appends)
    floor = statistics.median(floors)
    print(f"{args.messages} messages, {events} events, {args.rounds} rounds; json.loads pass: median {floor:.2f} s")
    for mark in ("url", "window", "index", "report"):
        values = sorted(run[mark] for run in runs)
        median = statistics.median(values)
        print(f"  {mark:7} median {median:6.2f} s  worst {values[-1]:6.2f} s  ({median / floor:.2f}× the loads pass)")
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    median_ms = statistics.median(latencies) * 1000
    print(f"appended line served as a row: median {median_ms:.0f} ms, p99 {p99 * 1000:.0f} ms")


if __name__ == "__main__":
    main()
