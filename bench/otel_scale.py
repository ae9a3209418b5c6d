"""How the OTLP mapping scales: ``wiretap export --format otlp`` of a recording of N messages against a
plain ``json.loads`` pass and ``report`` over the same file (report_scale.py's busy polling client), each
in its own process, interleaved. Memory is the peak RSS (ru_maxrss) at N and N/4.

    python bench/otel_scale.py [--messages 200000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_scale import write_recording

KINDS = ("json", "report", "otlp")


def child(kind: str, path: str) -> None:
    started = time.perf_counter()
    if kind == "json":
        with open(path, "rb") as f:
            for line in f:
                json.loads(line)
    elif kind == "report":
        from wiretap.analysis.report import build_report

        build_report(Path(path)).to_dict()
    else:
        from wiretap.otel.export import otlp_lines
        from wiretap.otel.sources import iter_spans_of

        with open(os.devnull, "w") as sink:
            for line in otlp_lines(iter_spans_of(Path(path)), {"service.name": "bench"}):
                sink.write(line)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def measure(kind: str, path: Path) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(output.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in (args.messages // 4, args.messages):
            path = Path(folder) / f"rec-{size}.jsonl"
            write_recording(path, size)
            for round_ in range(args.rounds):
                for kind in KINDS[round_ % 3 :] + KINDS[: round_ % 3]:
                    result = measure(kind, path)
                    entry = results.setdefault(f"{kind}@{size}", {"seconds": [], "peak_mib": []})
                    entry["seconds"].append(result["seconds"])
                    entry["peak_mib"].append(result["peak_mib"])
    print(f"{'variant':<20}{'median s':>10}{'peak MiB':>10}")
    for name, entry in results.items():
        print(f"{name:<20}{statistics.median(entry['seconds']):>10.2f}{statistics.median(entry['peak_mib']):>10.1f}")
    n = args.messages

    def median(kind: str, size: int, key: str) -> float:
        return statistics.median(results[f"{kind}@{size}"][key])

    print(f"otlp / json.loads pass at {n}: {median('otlp', n, 'seconds') / median('json', n, 'seconds'):.2f}x")
    print(f"otlp / report at {n}: {median('otlp', n, 'seconds') / median('report', n, 'seconds'):.2f}x")
    growth = median("otlp", n, "peak_mib") / median("otlp", n // 4, "peak_mib")
    print(f"otlp peak memory at {n} vs {n // 4}: {growth:.2f}x")


if __name__ == "__main__":
    main()
