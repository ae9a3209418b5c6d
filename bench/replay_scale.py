"""How `wiretap replay` scales with the recording: a stdio recording of N requests (default 100,000),
each a `tools/call` with its own arguments and answer.

- start: reading the recording and building the player (its index included), in a fresh process, with
  that process's peak RSS against the file's size (wall and CPU seconds: the CPU figure is the one a
  busy machine disturbs least);
- per live request, as the server (``Player.plan``): a hit (a request the recording holds) and a miss
  (one it does not: the closest recorded request is looked for, to say what differed), interleaved;
- as the client: the driver's bookkeeping per recorded message at N/4 and at N, against a link that
  answers at once (linear: the two per-message figures agree).

``--wiretap-from NAME=DIR`` adds a variant running wiretap from another checkout (DIR holds wiretap/),
measured in the same run, interleaved with this one: ``--wiretap-from main=../main``.

    python bench/replay_scale.py [--requests 100000] [--live 2000] [--misses 20] [--starts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
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


def _rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def start(path: Path) -> dict[str, float]:
    """In this (fresh) process: load the recording and build a player."""
    from wiretap.replay.player import Player
    from wiretap.replay.script import load_script

    began, cpu = time.perf_counter(), time.process_time()
    player = Player(load_script(path))
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "rss": _rss(), "exchanges": len(player.script.exchanges)}


def per_request(path: Path, live: int, misses: int) -> dict[str, list[float]]:
    """Hits and misses through ``Player.plan``, a miss after every ``live / misses`` hits."""
    from wiretap.replay.player import Player
    from wiretap.replay.script import load_script

    player = Player(load_script(path))
    gc.freeze()  # as `wiretap replay` does once the recording is loaded
    count = len(player.script.exchanges)
    times: dict[str, list[float]] = {"hit": [], "miss": []}
    rng = random.Random(7)
    every = max(1, live // max(1, misses))
    for n in range(live):
        i = rng.randint(1, count)
        message = {"id": i, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": f"k{i}", "n": i}}}
        began = time.perf_counter()
        plan = player.plan(message)
        times["hit"].append(time.perf_counter() - began)
        assert plan.exchange is not None and plan.exchange.message["id"] == i
        if n % every == 0 and len(times["miss"]) < misses:
            message = {"id": i, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": f"k{i}"}}}
            began = time.perf_counter()
            plan = player.plan(message)
            times["miss"].append(time.perf_counter() - began)
            assert plan.miss is not None and plan.miss.closest is not None
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
    from wiretap.replay.drive import ClientOptions, Driver
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
    parser.add_argument("--live", type=int, default=2000, help="live hits per variant")
    parser.add_argument("--misses", type=int, default=20, help="live misses per variant")
    parser.add_argument("--starts", type=int, default=5, help="fresh-process starts per variant")
    parser.add_argument("--wiretap-from", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--role", choices=["start", "requests", "client"], help=argparse.SUPPRESS)
    parser.add_argument("--recording", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role is not None:
        out: Any = {
            "start": lambda: start(args.recording),
            "requests": lambda: per_request(args.recording, args.live, args.misses),
            "client": lambda: as_client(args.recording),
        }
        print(json.dumps(out[args.role]()))
        return

    variants: dict[str, dict[str, str]] = {"this": dict(os.environ)}
    for spec in args.wiretap_from:
        name, _, folder = spec.partition("=")
        root = str(Path(folder).resolve())
        variants[name] = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        )

    def child(variant: str, role: str, recording: Path) -> Any:
        command = [sys.executable, __file__, "--role", role, "--recording", str(recording)]
        command += ["--live", str(args.live), "--misses", str(args.misses)]
        run = subprocess.run(command, check=True, capture_output=True, text=True, env=variants[variant])
        return json.loads(run.stdout)

    def rounds(times: int) -> list[list[str]]:
        """Each round runs every variant once, the order turning from one round to the next."""
        names = list(variants)
        return [names[r % len(names) :] + names[: r % len(names)] for r in range(times)]

    with tempfile.TemporaryDirectory() as folder:
        full, quarter = Path(folder) / "full.jsonl", Path(folder) / "quarter.jsonl"
        write_recording(full, args.requests)
        write_recording(quarter, args.requests // 4)
        size = full.stat().st_size
        print(f"recording: {args.requests} requests, {size / 2**20:.1f} MiB; load average {os.getloadavg()[0]:.2f}")
        starts: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for order in rounds(args.starts):
            for name in order:
                starts[name].append(child(name, "start", full))
        requests: dict[str, dict[str, list[float]]] = {}
        clients: dict[str, tuple[float, float]] = {}
        for order in rounds(1):
            for name in order:
                requests[name] = child(name, "requests", full)
                clients[name] = (child(name, "client", quarter), child(name, "client", full))
        for name in variants:
            seconds = statistics.median(s["seconds"] for s in starts[name])
            cpu = statistics.median(s["cpu"] for s in starts[name])
            rss = statistics.median(s["rss"] for s in starts[name])
            slowest = max(s["seconds"] for s in starts[name])
            print(f"[{name}] start: median {seconds:.2f} s (CPU {cpu:.2f} s, slowest {slowest:.2f} s), ", end="")
            print(f"peak RSS {rss / 2**20:.0f} MiB = {rss / size:.2f}× the file")
            for how in ("hit", "miss"):
                times = requests[name][how]
                median, p99 = statistics.median(times) * 1e3, pct(times, 0.99) * 1e3
                print(f"[{name}] per live request ({how}, {len(times)}): median {median:.3f} ms, p99 {p99:.3f} ms")
            small, large = clients[name]
            print(
                f"[{name}] as client, per message: {small * 1e6:.1f} µs at N/4, {large * 1e6:.1f} µs at N "
                f"({large / small:.2f}×)"
            )
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
