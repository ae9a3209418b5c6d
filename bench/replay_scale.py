"""How `wiretap replay` scales with the recording: a stdio recording of N requests (default 100,000),
each a `tools/call` with its own arguments and answer.

- start: reading the recording and building the player (its index included), in a fresh process, with
  that process's peak RSS against the file's size;
- per live request, as the server: choosing the recorded exchange for a live request, with the index
  and with the scan every request made before it (vcrpy's way), interleaved request by request;
- as the client: the driver's bookkeeping per recorded message at N/4 and at N, against a link that
  answers at once (linear: the two per-message figures agree).

    python bench/replay_scale.py [--requests 100000] [--live 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event


def write_recording(path: Path, requests: int) -> None:
    with path.open("wb") as out:
        out.write(encode_event(Header(transport="stdio", name="scale", argv=["bench"]).to_dict())[0])
        t = 0.0
        for i in range(1, requests + 1):
            t += 0.001
            params = {"name": "lookup", "arguments": {"key": f"k{i}", "n": i}}
            request = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
            out.write(encode_event({"t": round(t, 6), "kind": "message", "dir": "c2s", "msg": request})[0])
            t += 0.0005
            result = {"content": [{"type": "text", "text": f"value of k{i} is {i * 7}"}]}
            response = {"jsonrpc": "2.0", "id": i, "result": result}
            out.write(encode_event({"t": round(t, 6), "kind": "message", "dir": "s2c", "msg": response})[0])


def start(path: Path) -> dict[str, float]:
    """In this (fresh) process: load the recording and build a player."""
    from wiretap.replay.player import Player
    from wiretap.replay.script import load_script

    began = time.perf_counter()
    player = Player(load_script(path))
    seconds = time.perf_counter() - began
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return {"seconds": seconds, "rss": rss, "exchanges": len(player.script.exchanges)}


def per_request(path: Path, live: int) -> dict[str, list[float]]:
    from wiretap.replay.matchers import Request
    from wiretap.replay.player import Player
    from wiretap.replay.script import load_script

    player = Player(load_script(path))
    count = len(player.script.exchanges)
    times: dict[str, list[float]] = {"index": [], "scan": []}
    rng = random.Random(7)
    for _ in range(live):
        i = rng.randint(1, count)
        message = {"id": i, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": f"k{i}", "n": i}}}
        for how in ("index", "scan") if rng.random() < 0.5 else ("scan", "index"):
            began = time.perf_counter()
            if how == "index":
                found = player.plan(message).exchange
            else:
                scanned = player.index._scan(Request.of(message, player.options.volatile))
                found = None if scanned is None else scanned[0]
            times[how].append(time.perf_counter() - began)
            assert found is not None and found.message["id"] == i
    return times


class Echo:
    """A link whose live server answers every request at once, with the recorded answer."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    async def send(self, item: Any, message: dict[str, Any]) -> None:
        if item.exchange is not None and item.exchange.response is not None:
            self.driver.received({**item.exchange.response, "id": message["id"]})

    async def close(self) -> None:
        pass


def as_client(path: Path) -> float:
    from wiretap.replay.client import ClientOptions, Driver
    from wiretap.replay.pace import FAST
    from wiretap.replay.script import load_script

    script = load_script(path)
    driver = Driver(script, ClientOptions(pace=FAST))
    began = time.perf_counter()
    result = asyncio.run(driver.run(Echo(driver)))
    assert not result.differing
    return (time.perf_counter() - began) / len(script.client_items)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--live", type=int, default=2000)
    parser.add_argument("--role", choices=["start", "requests", "client"], help=argparse.SUPPRESS)
    parser.add_argument("--recording", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role is not None:
        out: Any = {"start": lambda: start(args.recording), "requests": lambda: per_request(args.recording, args.live)}
        out["client"] = lambda: as_client(args.recording)
        print(json.dumps(out[args.role]()))
        return

    def child(role: str, recording: Path) -> Any:
        command = [sys.executable, __file__, "--role", role, "--recording", str(recording), "--live", str(args.live)]
        return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)

    with tempfile.TemporaryDirectory() as folder:
        full, quarter = Path(folder) / "full.jsonl", Path(folder) / "quarter.jsonl"
        write_recording(full, args.requests)
        write_recording(quarter, args.requests // 4)
        size = full.stat().st_size
        began = child("start", full)
        print(f"recording: {args.requests} requests, {size / 2**20:.1f} MiB")
        rss = began["rss"]
        print(f"start: {began['seconds']:.2f} s, peak RSS {rss / 2**20:.0f} MiB = {rss / size:.1f}× the file")
        times = child("requests", full)
        for how in ("index", "scan"):
            median, p99 = statistics.median(times[how]) * 1e3, pct(times[how], 0.99) * 1e3
            print(f"per live request ({how}): median {median:.3f} ms, p99 {p99:.3f} ms")
        ratio = statistics.median(times["scan"]) / statistics.median(times["index"])
        print(f"scan / index, medians: {ratio:.0f}×")
        small, large = child("client", quarter), child("client", full)
        print(f"as client, per message: {small * 1e6:.1f} µs at N/4, {large * 1e6:.1f} µs at N ({large / small:.2f}×)")


if __name__ == "__main__":
    main()
