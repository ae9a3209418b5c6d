"""How promptly wiretap exits, and how long its recorder takes to finish the file afterwards.

    python bench/exit_latency.py [--rounds N] [--wiretap-src DIR]

1. tap, normal end: a server floods COUNT notifications of 200 B and exits; the client reads all of it.
   Measured: from the moment the server exited (its pid gone, polled every 0.5 ms) to wiretap's exit,
   and from wiretap's exit until the recording's `end` event is on disk (0 while the recorder finishes
   within wiretap's bound, 5 s: the file is complete at exit).
2. tap, signalled: the same flood, and the client sends the tap SIGTERM once it has read 4 MiB (a
   client shutting its server down). Measured the same way: wiretap exits promptly, the recorder
   completes the file afterwards.
3. proxy: an SSE flood through `wiretap proxy`; SIGTERM mid-flood. Measured: SIGTERM to the proxy's
   exit, and the proxy's exit until the recording is complete.

The targets: a signalled tap exits <= 100 ms after its server, the proxy <= 500 ms after SIGTERM plus
what its recorder takes to finish (up to 5 s), and a tap whose server ended on its own leaves a complete
file.
Medians and maxima over the rounds; results on stdout and in bench/results/exit-<utc>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))
from scenarios.raw_upstream import RawUpstream  # noqa: E402

from wiretap.recording.complete import await_end  # noqa: E402

FLOOD = REPO / "tests" / "scenarios" / "flood_server.py"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def tap_round(tmp: Path, env: dict[str, str], count: int, r: int, *, signalled: bool = False) -> dict[str, float]:
    recording = tmp / f"tap-{r}{'-signalled' if signalled else ''}.jsonl"
    tap = [sys.executable, "-m", "wiretap", "tap", "--out", str(recording), "--"]
    proc = subprocess.Popen(
        [*tap, sys.executable, str(FLOOD), str(count), "200"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout and proc.stderr and proc.stdin
    server = int(proc.stderr.readline().split()[1])
    exited: list[float] = []

    def watch() -> None:
        while alive(server):
            time.sleep(0.0005)
        exited.append(time.monotonic())

    watcher = threading.Thread(target=watch)
    watcher.start()
    got = 0
    while chunk := proc.stdout.read1(1 << 16):
        got += len(chunk)
        if signalled and got >= 4 << 20 and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            signalled = False
    proc.wait()
    tap_exit = time.monotonic()
    watcher.join()
    await_end(recording, 120, patient=True)
    done = time.monotonic()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    return {"exit_after_server_ms": (tap_exit - exited[0]) * 1000, "complete_after_exit_ms": (done - tap_exit) * 1000}


def proxy_round(tmp: Path, env: dict[str, str], upstream: str, r: int) -> dict[str, float]:
    import http.client
    from urllib.parse import urlsplit

    recording = tmp / f"proxy-{r}.jsonl"
    command = [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream, "--out", str(recording)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout
    url = urlsplit(proc.stdout.readline().decode().strip())
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=60)
    conn.request("GET", "/flood?n=1000000")
    response = conn.getresponse()
    got = 0
    while got < 4 << 20:
        got += len(response.read1(1 << 16))
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)

    def drain() -> None:
        try:
            while response.read1(1 << 16):
                pass
        except (OSError, http.client.HTTPException):
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc.wait()
    gone = time.monotonic()
    conn.close()
    await_end(recording, 120, patient=True)
    done = time.monotonic()
    proc.stdout.close()
    return {"exit_after_sigterm_ms": (gone - sent) * 1000, "complete_after_exit_ms": (done - gone) * 1000}


def stats(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        key: {"median": statistics.median(r[key] for r in rows), "max": max(r[key] for r in rows)} for key in rows[0]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--count", type=int, default=200_000, help="notifications the tap's server floods")
    parser.add_argument("--wiretap-src", type=Path, help="run wiretap from this folder (holds wiretap/)")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.wiretap_src:
        env["PYTHONPATH"] = str(args.wiretap_src.resolve())
    tmp = Path(tempfile.mkdtemp(prefix="wiretap-exit-bench-"))
    taps, signalled, proxies = [], [], []
    with RawUpstream() as upstream:
        for r in range(args.rounds):
            taps.append(tap_round(tmp, env, args.count, r))
            signalled.append(tap_round(tmp, env, args.count, r, signalled=True))
            proxies.append(proxy_round(tmp, env, upstream.url, r))
            print(f"round {r + 1}/{args.rounds}: tap {taps[-1]}, signalled {signalled[-1]}, proxy {proxies[-1]}",
                  file=sys.stderr, flush=True)  # fmt: skip
    result: dict[str, Any] = {
        "tap": stats(taps),
        "tap_signalled": stats(signalled),
        "proxy": stats(proxies),
        "rounds": args.rounds,
    }
    tap, hurried, proxy = result["tap"], result["tap_signalled"], result["proxy"]
    print(f"tap (server ended on its own) exits after its server: median {tap['exit_after_server_ms']['median']:.1f} "
          f"ms, max {tap['exit_after_server_ms']['max']:.1f} ms; recording complete "
          f"{tap['complete_after_exit_ms']['median']:.0f} ms later (median; 0: complete at exit)")  # fmt: skip
    print(f"tap (signalled) exits after its server: median {hurried['exit_after_server_ms']['median']:.1f} ms, "
          f"max {hurried['exit_after_server_ms']['max']:.1f} ms (target <= 100 ms); recording complete "
          f"{hurried['complete_after_exit_ms']['median']:.0f} ms later (median)")  # fmt: skip
    print(f"proxy exits after SIGTERM mid-flood: median {proxy['exit_after_sigterm_ms']['median']:.1f} ms, "
          f"max {proxy['exit_after_sigterm_ms']['max']:.1f} ms (target <= 500 ms); recording complete "
          f"{proxy['complete_after_exit_ms']['median']:.0f} ms later (median)")  # fmt: skip
    out = BENCH / "results" / f"exit-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = {"tap": taps, "tap_signalled": signalled, "proxy": proxies}
    out.write_text(json.dumps(result | {"raw": raw}, indent=1) + "\n")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
