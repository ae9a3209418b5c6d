"""How `wiretap report` scales: a recording of N messages (default 1 million), reported against a plain
`json.loads` pass over the same file, each in its own process, in one run. Memory is the peak RSS of
that process (ru_maxrss), measured at N and at N/4 to show whether it grows with the recording.

    python bench/report_scale.py [--messages 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import resource
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


def child(kind: str, path: str) -> None:
    started = time.perf_counter()
    if kind == "json":
        with open(path, "rb") as f:
            for line in f:
                json.loads(line)
    else:
        from wiretap.analysis.report import report_recording

        report_recording(Path(path))
    elapsed = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "peak_mib": peak_mib}))


def measure(kind: str, path: Path) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(output.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        results: dict[str, dict[str, list[float]]] = {}
        for size in (args.messages // 4, args.messages):
            path = Path(folder) / f"rec-{size}.jsonl"
            write_recording(path, size)
            for _ in range(args.rounds):
                for kind in ("json", "report"):
                    result = measure(kind, path)
                    entry = results.setdefault(f"{kind}@{size}", {"seconds": [], "peak_mib": []})
                    entry["seconds"].append(result["seconds"])
                    entry["peak_mib"].append(result["peak_mib"])
            print(f"{size:>9} messages, {path.stat().st_size / 2**20:.0f} MiB")
    print(f"{'variant':<22}{'median s':>10}{'peak MiB':>10}")
    for name, entry in results.items():
        print(f"{name:<22}{statistics.median(entry['seconds']):>10.2f}{statistics.median(entry['peak_mib']):>10.1f}")
    size = args.messages
    ratio = statistics.median(results[f"report@{size}"]["seconds"]) / statistics.median(
        results[f"json@{size}"]["seconds"]
    )
    growth = statistics.median(results[f"report@{size}"]["peak_mib"]) / statistics.median(
        results[f"report@{size // 4}"]["peak_mib"]
    )
    print(f"report / json.loads pass at {size} messages: {ratio:.2f}×")
    print(f"peak memory at {size} vs {size // 4} messages: {growth:.2f}×")


if __name__ == "__main__":
    main()
