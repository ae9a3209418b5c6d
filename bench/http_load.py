"""The benchmark's aiohttp load client: a process of its own, driven by JSON lines on stdin.

    python bench/http_load.py        # then one command per line on stdin, one JSON result per line out

Commands (each opens a fresh ClientSession, warms its keep-alive connections up untimed, measures,
and closes it, so no connection outlives the variant it was measured on):

* ``{"op": "latency", "url": U, "seconds": S}``: sequential POSTs of the ~200 B ``tools/call`` for
  S seconds on one connection; answers ``{"requests", "seconds", "errors", "samples_us"}`` (every
  request's time from send to full response body).
* ``{"op": "throughput", "url": U, "seconds": S, "concurrency": C}``: C workers posting back to back
  over C keep-alive connections; answers ``{"requests", "seconds", "errors"}``.
* ``{"op": "sse", "url": U, "count": N, "interval_ms": MS}``: one ``bench/stream`` POST; answers
  ``{"events", "seconds", "delays_us"}``: events received, seconds from sending the request to the
  last event, and for each progress event its arrival (``time.monotonic_ns()`` when the chunk that
  completed it was read) minus the ``sent_ns`` the upstream stamped it with.
* ``{"op": "quit"}``.

The driver (bench/http_proxy.py) runs wrk instead for ``latency`` and ``throughput`` when it can.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_upstream import HEADERS, call_body, stream_body

BODY = call_body()
STAMP = b'"sent_ns":'


PROXY: dict[str, Any] = {}
"""``proxy`` (and ``ssl``, a context trusting ``cafile``) for every request: a forward proxy's run."""


def _session(connections: int) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections, force_close=False, ssl=PROXY.get("ssl", True)),
        timeout=aiohttp.ClientTimeout(total=30),
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    )


async def _post(session: aiohttp.ClientSession, url: str) -> bool:
    async with session.post(url, data=BODY, headers=HEADERS, proxy=PROXY.get("proxy")) as response:
        await response.read()
        return response.status == 200


async def latency(url: str, seconds: float) -> dict[str, Any]:
    samples: list[float] = []
    errors = 0
    async with _session(1) as session:
        for _ in range(20):
            await _post(session, url)
        clock = time.perf_counter_ns
        start = clock()
        end = start + int(seconds * 1e9)
        now = start
        while now < end:
            ok = await _post(session, url)
            done = clock()
            samples.append((done - now) / 1000)
            errors += not ok
            now = done
    return {"requests": len(samples), "seconds": (now - start) / 1e9, "errors": errors, "samples_us": samples}


async def throughput(url: str, seconds: float, concurrency: int) -> dict[str, Any]:
    counts = [0] * concurrency
    errors = 0
    async with _session(concurrency) as session:
        await asyncio.gather(*(_post(session, url) for _ in range(concurrency)))
        deadline = time.perf_counter() + seconds

        async def worker(i: int) -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                if not await _post(session, url):
                    errors += 1
                counts[i] += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - start
    return {"requests": sum(counts), "seconds": elapsed, "errors": errors}


async def sse(url: str, count: int, interval_ms: float) -> dict[str, Any]:
    delays: list[float] = []
    events = 0
    async with _session(1) as session:
        await _post(session, url)  # the connection, warm
        clock = time.monotonic_ns
        start = clock()
        last = start
        async with session.post(url, data=stream_body(count, interval_ms), headers=HEADERS) as response:
            if response.status != 200 or not response.content_type.startswith("text/event-stream"):
                raise RuntimeError(f"bench/stream: {response.status} {response.content_type}")
            pending = b""
            async for chunk in response.content.iter_any():
                now = clock()
                pending += chunk
                *complete, pending = pending.split(b"\n\n")
                if not complete:
                    continue
                last = now
                for event in complete:
                    events += 1
                    at = event.find(STAMP)
                    if at >= 0:
                        digits = event[at + len(STAMP) : event.index(b"}", at)]
                        delays.append((now - int(digits)) / 1000)
    return {"events": events, "seconds": (last - start) / 1e9, "delays_us": delays}


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        op = command.pop("op")
        if op == "quit":
            break
        if op == "via":  # {"proxy": URL or null, "cafile": PEM or null}: for the requests that follow
            PROXY.clear()
            if command.get("proxy"):
                PROXY["proxy"] = command["proxy"]
            if command.get("cafile"):
                PROXY["ssl"] = ssl.create_default_context(cafile=command["cafile"])
            sys.stdout.write("{}\n")
            sys.stdout.flush()
            continue
        try:
            result = await {"latency": latency, "throughput": throughput, "sse": sse}[op](**command)
        except Exception as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
