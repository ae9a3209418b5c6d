"""What ``--otlp`` costs the traffic: stdio round trips directly, through ``wiretap tap`` and through
``wiretap tap --otlp-endpoint`` (its follower process sending to a local OTLP sink), interleaved.

``python bench/otel_live.py [--rounds 12] [--per-round 200]``: p50 and p99 of 200 B ``tools/call`` round
trips per variant, the ratios, and how many spans the sink received against how many calls were made.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SERVER = [sys.executable, str(BENCH / "echo_server.py")]
SIZE = 200
SETTLE = 1.0
"""Seconds each process gets to start before the round trips (the follower's imports included)."""


class Sink:
    """An OTLP/HTTP endpoint that accepts everything and counts the requests and bytes."""

    def __init__(self) -> None:
        self.requests = 0
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                sink.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def command(variant: str, log: Path, sink: str) -> list[str]:
    tap = [sys.executable, "-m", "wiretap", "tap", "--out", str(log), "--name", "bench"]
    if variant == "direct":
        return SERVER
    if variant == "wiretap":
        return [*tap, "--", *SERVER]
    return [*tap, "--otlp-endpoint", sink, "--", *SERVER]


def request(n: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"size":%d}}}\n'
    return head % (n, SIZE)


def round_trips(argv: list[str], count: int) -> list[float]:
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    samples = []
    time.sleep(SETTLE)
    for n in range(count + 1):
        start = time.perf_counter()
        proc.stdin.write(request(n))
        proc.stdin.flush()
        proc.stdout.readline()
        if n:  # the first is a warm-up
            samples.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(60)
    return samples


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--per-round", type=int, default=200)
    cfg = parser.parse_args()
    sink = Sink()
    names = ["direct", "wiretap", "wiretap+otlp"]
    samples: dict[str, list[float]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as folder:
        for r in range(cfg.rounds):
            for name in names[r % 3 :] + names[: r % 3]:
                samples[name] += round_trips(command(name, Path(folder) / f"{name}-{r}.jsonl", sink.url), cfg.per_round)
        time.sleep(3)  # the last follower's final batch
    base = statistics.median(samples["wiretap"])
    print(f"{cfg.rounds} rounds x {cfg.per_round} round trips of {SIZE} B, interleaved")
    for name in names:
        s = samples[name]
        print(f"{name:14} p50 {p(s, 0.5) * 1e6:7.0f} us  p99 {p(s, 0.99) * 1e6:7.0f} us  "
              f"p50 / wiretap's {statistics.median(s) / base:.2f}")  # fmt: skip
    print(f"sink: {sink.requests} OTLP requests for {cfg.rounds} recordings of {cfg.per_round + 1} calls each")


if __name__ == "__main__":
    main()
