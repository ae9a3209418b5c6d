"""HTTP proxy benchmark: one upstream, reached directly and through three streaming reverse proxies.

    python bench/http_proxy.py [--rounds N] [--quick] [--client auto|wrk|aiohttp]

Variants (all against ``bench/http_upstream.py``, an aiohttp MCP Streamable HTTP look-alike):

* ``direct``   the client talks to the upstream itself: the floor.
* ``minimal``  ``bench/http_minimal_proxy.py``: aiohttp server + ClientSession, ``iter_any()`` both
  ways, no recording: the floor for any aiohttp proxy.
* ``wiretap``  ``python -m wiretap proxy --upstream URL --listen 127.0.0.1:0 --out FILE`` (recording
  on, redaction on: the defaults).
* ``mitmdump`` ``mitmdump --mode reverse:URL --listen-host 127.0.0.1 --listen-port P -q
  --set stream_large_bodies=1`` (mitmproxy 11.0.2 from tests/support/peers.py): every body is streamed, so
  SSE events are passed on as they come rather than buffered to the end of the response. Nothing
  else is changed from mitmproxy's defaults.

Everything runs in ONE interleaved run: each round visits every variant in turn (the order rotates
from round to round), and after every measurement waits until the proxy and the upstream are idle
(no CPU ticks for a while) before moving on, so a recorder still catching up is not billed to the
next variant, and noise on this 2-core machine hits all variants alike. The proxies stay up for the
whole run; nothing is pinned; the load generator is always a process of its own.

Per round and variant:

1. Latency: sequential ``POST /mcp`` of a ~200 B JSON-RPC ``tools/call`` on one keep-alive
   connection (~190 B JSON response with Content-Length), for ``--latency-s`` seconds: p50 and p99.
2. Throughput: the same request from 16 keep-alive connections, back to back, for
   ``--throughput-s`` seconds: requests/s. Afterwards, how long the proxy kept busy (``settle_s``).
3. SSE flood: one POST answered with ``--flood`` ~220 B ``text/event-stream`` events written back to
   back: events/s, from sending the request to receiving the last event; then how long the proxy
   kept busy (``lag``: wiretap's recorder catching up).
4. SSE delay: one POST answered with ``--paced`` events, ``--interval-ms`` apart; each event carries
   the upstream's ``time.monotonic_ns()`` taken just before its write; the client subtracts it from
   its own clock on arrival (same machine, same clock): the per-event forwarding delay.

Latency and throughput use ``wrk`` (one thread) when it is installed (``--client auto``), else the
aiohttp load client ``bench/http_load.py``; SSE always uses the aiohttp load client (one process for
the whole run). The table shows which was used.

Reported: the median over rounds of each per-round figure (p50, p99, req/s, events/s), except the SSE
delay percentiles, which are taken over the delays of all rounds pooled. Ratios are against
``direct`` and ``mitmdump``; "added" latency is a variant's p50 minus direct's p50. Results: a table
on stdout and bench/results/http-<utc>.json (per-round figures included).

``--wiretap-from NAME=DIR`` adds a variant running ``python -m wiretap proxy`` from another checkout
(DIR holds a ``wiretap/`` package): to measure a prototype in the same interleaved run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
UPSTREAM = BENCH / "http_upstream.py"
MINIMAL = BENCH / "http_minimal_proxy.py"
LOAD = BENCH / "http_load.py"

sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO / "tests"))
import floors  # noqa: E402
from http_upstream import HEADERS, PATH, call_body  # noqa: E402

MITM_OPTIONS = ["--set", "stream_large_bodies=1"]
CONCURRENCY = 16
CLK_TCK = os.sysconf("SC_CLK_TCK")
LOADAVG_AT_START: tuple[float, float, float] = (0.0, 0.0, 0.0)


# -- processes ---------------------------------------------------------------------------------------


def _first_line(proc: subprocess.Popen[str], what: str) -> str:
    """The first line a child prints (its URL); the children print it within a second or two, or die."""
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        raise RuntimeError(f"{what} exited with {proc.wait()} before printing its URL")
    return line


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[Any], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} is not listening on {port} after {timeout} s")


def cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of a process (all its threads) and of its child processes (wiretap's
    recorder is one)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12]) + sum(cpu_ticks(child) for child in children)


def wait_idle(pids: list[int], *, window: float = 0.1, timeout: float = 30) -> float:
    """Wait until ``pids`` together used at most one clock tick in ``window`` seconds; seconds waited."""
    start = time.monotonic()
    before = sum(cpu_ticks(pid) for pid in pids)
    while time.monotonic() - start < timeout:
        time.sleep(window)
        now = sum(cpu_ticks(pid) for pid in pids)
        if now - before <= 1:
            return time.monotonic() - start
        before = now
    return time.monotonic() - start


@dataclass
class Variant:
    name: str
    url: str = ""
    proc: subprocess.Popen[str] | None = None
    recording: Path | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    stderr: IO[str] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None


def start_variant(name: str, upstream: str, tmp: Path, mitmdump: Path | None, wiretap_root: Path | None) -> Variant:
    variant = Variant(name)
    variant.stderr = (tmp / f"{name}.stderr").open("w+")
    popen: dict[str, Any] = {
        "stdout": subprocess.PIPE,
        "stderr": variant.stderr,
        "stdin": subprocess.DEVNULL,
        "text": True,
    }
    if name == "direct":
        variant.url = upstream + PATH
    elif name == "minimal":
        variant.proc = subprocess.Popen(
            [sys.executable, str(MINIMAL), "--upstream", upstream, "--listen", "127.0.0.1:0"], **popen
        )
        variant.url = _first_line(variant.proc, name) + PATH
    elif name == "nginx":
        port = _free_port()
        nginx = floors.ensure("nginx", "nginx-light")
        variant.proc = subprocess.Popen(floors.nginx_command(nginx, urlsplit(upstream).netloc, port, tmp), **popen)
        _wait_listening(port, variant.proc, name)
        variant.url = f"http://127.0.0.1:{port}{PATH}"
    elif name == "mitmdump":
        assert mitmdump is not None
        port = _free_port()
        command = [
            str(mitmdump),
            "--mode",
            f"reverse:{upstream}",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(port),
            "-q",
            *MITM_OPTIONS,
        ]
        variant.proc = subprocess.Popen(command, **popen)
        _wait_listening(port, variant.proc, name)
        variant.url = f"http://127.0.0.1:{port}{PATH}"
    else:  # a wiretap
        assert wiretap_root is not None
        variant.recording = tmp / f"{name}.jsonl"
        env = dict(os.environ, PYTHONPATH=str(wiretap_root))
        if name.endswith("-asyncio"):  # the same wiretap on asyncio's own loop, not uvloop
            env["WIRETAP_UVLOOP"] = "0"
        command = [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream + PATH]
        command += ["--listen", "127.0.0.1:0", "--out", str(variant.recording)]
        variant.proc = subprocess.Popen(command, cwd=wiretap_root, env=env, **popen)
        variant.url = _first_line(variant.proc, name)
    return variant


def stop(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGINT) -> int | None:
    if proc is None or proc.poll() is not None:
        return proc.returncode if proc else None
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


# -- load --------------------------------------------------------------------------------------------


class LoadClient:
    """bench/http_load.py, one process for the whole run."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(LOAD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, op: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the load client died (exit {self.proc.wait()})")
        result: dict[str, Any] = json.loads(line)
        if "error" in result:
            raise RuntimeError(f"load client, {op} {args.get('url')}: {result['error']}")
        return result

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.write('{"op": "quit"}\n')
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = [==[%(body)s]==]
%(headers)s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKRESULT %%d %%d %%d %%d %%d %%d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
"""


class Wrk:
    def __init__(self, executable: str, tmp: Path) -> None:
        self.executable = executable
        self.script = tmp / "post.lua"
        headers = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in HEADERS.items())
        self.script.write_text(WRK_SCRIPT % {"body": call_body().decode(), "headers": headers})

    def run(self, url: str, connections: int, seconds: int) -> dict[str, Any]:
        command = [self.executable, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s"]
        out = subprocess.run(
            [*command, "-s", str(self.script), url], capture_output=True, text=True, timeout=seconds + 60
        )
        for line in out.stdout.splitlines():
            if line.startswith("WRKRESULT "):
                requests, duration_us, p50, p99, status_errors, socket_errors = map(int, line.split()[1:])
                return {
                    "requests": requests,
                    "seconds": duration_us / 1e6,
                    "p50_us": p50,
                    "p99_us": p99,
                    "errors": status_errors + socket_errors,
                }
        raise RuntimeError(f"wrk printed no result for {url}:\n{out.stdout}\n{out.stderr}")


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return math.nan
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


# -- the run -----------------------------------------------------------------------------------------


@dataclass
class Settings:
    rounds: int
    latency_s: int
    throughput_s: int
    flood: int
    paced: int
    interval_ms: float


def measure(
    variant: Variant, settings: Settings, load: LoadClient, wrk: Wrk | None, idle_pids: list[int]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # 1. latency
    if wrk:
        result = wrk.run(variant.url, 1, settings.latency_s)
        out["lat_p50_us"], out["lat_p99_us"] = result["p50_us"], result["p99_us"]
    else:
        result = load.run("latency", url=variant.url, seconds=settings.latency_s)
        samples = sorted(result["samples_us"])
        out["lat_p50_us"], out["lat_p99_us"] = percentile(samples, 50), percentile(samples, 99)
    out["lat_requests"], out["lat_errors"] = result["requests"], result["errors"]
    wait_idle(idle_pids)
    # 2. throughput
    if wrk:
        result = wrk.run(variant.url, CONCURRENCY, settings.throughput_s)
    else:
        result = load.run("throughput", url=variant.url, seconds=settings.throughput_s, concurrency=CONCURRENCY)
    out["rps"] = result["requests"] / result["seconds"]
    out["rps_requests"], out["rps_errors"] = result["requests"], result["errors"]
    out["settle_s"] = wait_idle(idle_pids)
    # 3. SSE flood
    result = load.run("sse", url=variant.url, count=settings.flood, interval_ms=0)
    if result["events"] != settings.flood + 1:
        raise RuntimeError(f"{variant.name}: SSE flood delivered {result['events']} of {settings.flood + 1} events")
    out["sse_eps"] = settings.flood / result["seconds"]
    out["sse_flood_settle_s"] = wait_idle(idle_pids)
    # 4. SSE delay, paced
    result = load.run("sse", url=variant.url, count=settings.paced, interval_ms=settings.interval_ms)
    if result["events"] != settings.paced + 1:
        raise RuntimeError(f"{variant.name}: SSE paced delivered {result['events']} of {settings.paced + 1} events")
    delays = sorted(result["delays_us"])
    out["sse_delay_p50_us"], out["sse_delay_p99_us"] = percentile(delays, 50), percentile(delays, 99)
    out["sse_delays_us"] = result["delays_us"]
    wait_idle(idle_pids)
    return out


def summarize(variant: Variant) -> dict[str, Any]:
    rounds = variant.rounds

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    pooled = sorted(d for r in rounds for d in r["sse_delays_us"])
    return {
        "lat_p50_ms": med("lat_p50_us") / 1000,
        "lat_p99_ms": med("lat_p99_us") / 1000,
        "rps": med("rps"),
        "sse_eps": med("sse_eps"),
        "sse_delay_p50_ms": percentile(pooled, 50) / 1000,
        "sse_delay_p99_ms": percentile(pooled, 99) / 1000,
        "sse_delay_max_ms": pooled[-1] / 1000 if pooled else math.nan,
        "settle_s": med("settle_s"),
        "sse_flood_settle_s": med("sse_flood_settle_s"),
        "errors": sum(r["lat_errors"] + r["rps_errors"] for r in rounds),
        "rps_min": min(r["rps"] for r in rounds),
        "rps_max": max(r["rps"] for r in rounds),
    }


def add_ratios(variants: list[Variant]) -> None:
    by_name = {v.name: v.summary for v in variants}
    direct, mitm, nginx = by_name.get("direct"), by_name.get("mitmdump"), by_name.get("nginx")
    for summary in by_name.values():
        if nginx:
            summary["rps_vs_nginx"] = summary["rps"] / nginx["rps"]
        if direct:
            summary["added_p50_ms"] = summary["lat_p50_ms"] - direct["lat_p50_ms"]
            summary["rps_vs_direct"] = summary["rps"] / direct["rps"]
            summary["eps_vs_direct"] = summary["sse_eps"] / direct["sse_eps"]
        if mitm:
            summary["rps_vs_mitmdump"] = summary["rps"] / mitm["rps"]
            summary["eps_vs_mitmdump"] = summary["sse_eps"] / mitm["sse_eps"]
            if direct and mitm["lat_p50_ms"] > direct["lat_p50_ms"]:
                summary["added_vs_mitmdump"] = summary["added_p50_ms"] / (mitm["lat_p50_ms"] - direct["lat_p50_ms"])


def targets(summary: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    out: list[tuple[str, bool | None, str]] = []
    if "rps_vs_mitmdump" in summary:
        ratio = summary["rps_vs_mitmdump"]
        out.append(("req/s >= 4x mitmdump", ratio >= 4, f"{ratio:.2f}x"))
    if "added_vs_mitmdump" in summary:
        ratio = summary["added_vs_mitmdump"]
        out.append(("added p50 latency <= 0.5x mitmdump's", ratio <= 0.5, f"{ratio:.2f}x"))
    if "rps_vs_nginx" in summary:  # the issue's targets: near nginx's floor
        ratio = summary["rps_vs_nginx"]
        out.append(("req/s >= 0.6x nginx", ratio >= 0.6, f"{ratio:.2f}x"))
    if "added_p50_ms" in summary:
        added = summary["added_p50_ms"]
        out.append(("added p50 <= 0.12 ms", added <= 0.12, f"{added:.3f} ms"))
    p99 = summary["sse_delay_p99_ms"]
    out.append(("SSE p99 forwarding delay < 5 ms", p99 < 5, f"{p99:.2f} ms"))
    return out


def table(variants: list[Variant], client: str) -> str:
    head = (
        f"{'variant':<16}{'p50 ms':>8}{'p99 ms':>8}{'added':>8}{'req/s@16':>10}{'xdirect':>8}{'xnginx':>7}{'xmitm':>7}"
        f"{'SSE ev/s':>10}{'xmitm':>7}{'delay p50':>10}{'p99 ms':>8}{'lag s':>7}"
    )
    lines = [
        f"latency and req/s: {client}; SSE: aiohttp client. Medians over rounds; SSE delay pooled over rounds.",
        "added: p50 minus direct's. lag: how long the proxy kept busy after the SSE flood (0.10 = idle at once).",
        head,
    ]
    for v in variants:
        s = v.summary

        def f(key: str, spec: str, s: dict[str, Any] = s) -> str:
            value = s.get(key)
            return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)

        lines.append(
            f"{v.name:<16}{f('lat_p50_ms', '.3f'):>8}{f('lat_p99_ms', '.3f'):>8}{f('added_p50_ms', '.3f'):>8}"
            f"{f('rps', ',.0f'):>10}{f('rps_vs_direct', '.2f'):>8}{f('rps_vs_nginx', '.2f'):>7}"
            f"{f('rps_vs_mitmdump', '.2f'):>7}"
            f"{f('sse_eps', ',.0f'):>10}{f('eps_vs_mitmdump', '.2f'):>7}"
            f"{f('sse_delay_p50_ms', '.3f'):>10}{f('sse_delay_p99_ms', '.3f'):>8}{f('sse_flood_settle_s', '.2f'):>7}"
        )
    return "\n".join(lines)


def machine(mitmdump: Path | None, wrk: str | None) -> dict[str, Any]:
    import aiohttp

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "cpus": os.cpu_count(),
        "cpu_model": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        ),
        "switch_interval_s": sys.getswitchinterval(),
        "loadavg_at_start": LOADAVG_AT_START,
    }
    with contextlib.suppress(Exception):
        from wiretap import __version__

        info["wiretap"] = __version__
    with contextlib.suppress(Exception):
        git = ["git", "-C", str(REPO)]
        info["git"] = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "wiretap"], capture_output=True, text=True).stdout
        info["wiretap_dirty"] = bool(dirty.strip())
    if mitmdump:
        out = subprocess.run([str(mitmdump), "--version"], capture_output=True, text=True).stdout
        info["mitmproxy"] = out.splitlines()[0].split(":", 1)[-1].strip() if out else "?"
    if wrk:
        out = subprocess.run([wrk, "-v"], capture_output=True, text=True)
        info["wrk"] = (out.stdout + out.stderr).splitlines()[0]
    return info


def recording_summary(path: Path) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    last: dict[str, Any] = {}
    size = path.stat().st_size
    with path.open("rb") as fh:
        for line in fh:
            event = json.loads(line)
            kinds[event.get("kind", "?")] = kinds.get(event.get("kind", "?"), 0) + 1
            last = event
    return {"bytes": size, "events_by_kind": kinds, "end": {k: v for k, v in last.items() if k != "msg"}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 8; 2 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short run: fewer rounds, shorter phases")
    parser.add_argument("--latency-s", type=int, help="seconds of sequential requests a round (2; quick: 1)")
    parser.add_argument("--throughput-s", type=int, help="seconds at 16 connections a round (2; quick: 1)")
    parser.add_argument("--flood", type=int, help="SSE events in the flood (20000; quick: 5000)")
    parser.add_argument("--paced", type=int, help="SSE events in the delay measurement (300; quick: 100)")
    parser.add_argument("--interval-ms", type=float, help="between paced events (2)")
    parser.add_argument("--client", choices=["auto", "wrk", "aiohttp"], default="auto")
    parser.add_argument(
        "--variants",
        default="direct,nginx,minimal,wiretap,wiretap-asyncio,mitmdump",
        help="comma-separated subset, in this order",
    )
    parser.add_argument("--wiretap-from", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--out", type=Path, help="results JSON (default bench/results/http-<utc>.json)")
    parser.add_argument("--keep-recordings", action="store_true", help="keep wiretap's recordings (tmp dir)")
    args = parser.parse_args()

    settings = (
        Settings(rounds=2, latency_s=1, throughput_s=1, flood=5000, paced=100, interval_ms=2)
        if args.quick
        else Settings(rounds=8, latency_s=2, throughput_s=2, flood=20000, paced=300, interval_ms=2)
    )
    for name in ("rounds", "latency_s", "throughput_s", "flood", "paced", "interval_ms"):
        if getattr(args, name):
            setattr(settings, name, getattr(args, name))
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    roots = {name: REPO for name in names if name in ("wiretap", "wiretap-asyncio")}
    for spec in args.wiretap_from:
        name, _, root = spec.partition("=")
        roots[name] = Path(root).resolve()
        names.append(name)

    wrk_path = shutil.which("wrk") if args.client in ("auto", "wrk") else None
    if args.client == "wrk" and not wrk_path:
        parser.error("--client wrk: wrk is not installed (apt-get install -y wrk)")
    client = f"wrk ({wrk_path}, 1 thread)" if wrk_path else "aiohttp (bench/http_load.py)"

    mitmdump: Path | None = None
    if "mitmdump" in names:
        from support import peers

        print(
            "mitmdump: building or reusing the mitmproxy peer (tests/support/peers.py)...", file=sys.stderr, flush=True
        )
        mitmdump = peers.mitmproxy()

    global LOADAVG_AT_START
    LOADAVG_AT_START = os.getloadavg()
    started = datetime.now(UTC)
    machine_info = machine(mitmdump, wrk_path)  # now: the git state of the code the variants run
    tmp = Path(tempfile.mkdtemp(prefix="wiretap-http-bench-"))
    upstream_proc = subprocess.Popen(
        [sys.executable, str(UPSTREAM)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )
    variants: list[Variant] = []
    load: LoadClient | None = None
    report: dict[str, Any] = {}
    try:
        upstream = _first_line(upstream_proc, "upstream")
        for name in names:
            variants.append(start_variant(name, upstream, tmp, mitmdump, roots.get(name)))
        load = LoadClient()
        wrk = Wrk(wrk_path, tmp) if wrk_path else None
        print(f"client: {client}; {settings}", file=sys.stderr, flush=True)

        def idle_pids(v: Variant) -> list[int]:
            return [upstream_proc.pid, *([v.pid] if v.pid else [])]

        # Warm-up, not recorded: every variant's connections, caches and allocator.
        for v in variants:
            load.run("throughput", url=v.url, seconds=0.5, concurrency=CONCURRENCY)
            load.run("sse", url=v.url, count=500, interval_ms=0)
            wait_idle(idle_pids(v))

        t0 = time.monotonic()
        for r in range(settings.rounds):
            order = variants[r % len(variants) :] + variants[: r % len(variants)]
            for v in order:
                result = measure(v, settings, load, wrk, idle_pids(v))
                v.rounds.append(result)
                print(
                    f"round {r + 1}/{settings.rounds} {v.name:<10} p50 {result['lat_p50_us'] / 1000:.3f} ms"
                    f"  {result['rps']:,.0f} req/s  {result['sse_eps']:,.0f} ev/s"
                    f"  delay p99 {result['sse_delay_p99_us'] / 1000:.3f} ms  settle {result['settle_s']:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
        elapsed = time.monotonic() - t0

        for v in variants:
            v.summary = summarize(v)
        add_ratios(variants)
    finally:
        if load:
            load.close()
        exits = {v.name: stop(v.proc) for v in variants}
        stop(upstream_proc, signal.SIGTERM)
        for v in variants:
            if v.stderr:
                v.stderr.close()

    for v in variants:
        if v.recording and v.recording.exists():
            v.summary["recording"] = recording_summary(v.recording)
            v.summary["exit"] = exits[v.name]
    print(table(variants, client))
    verdicts: dict[str, list[dict[str, Any]]] = {}
    for v in variants:
        if v.recording:
            verdicts[v.name] = []
            for what, ok, value in targets(v.summary):
                verdicts[v.name].append({"target": what, "met": ok, "value": value})
                print(f"{v.name}: {what}: {value}: {'MET' if ok else 'MISSED'}")
            rec = v.summary.get("recording", {})
            print(
                f"{v.name}: recorded {rec.get('events_by_kind', {}).get('message', 0):,} messages, "
                f"{rec.get('bytes', 0) / 1e6:.1f} MB, lost {rec.get('end', {}).get('lost')}, "
                f"exit {v.summary.get('exit')}"
            )
    print(
        f"measured for {elapsed:.0f} s ({settings.rounds} rounds); 1-min load average "
        f"{LOADAVG_AT_START[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end ({os.cpu_count()} CPUs)"
    )

    report = {
        "benchmark": "http_proxy",
        "started_utc": started.isoformat(timespec="seconds"),
        "measured_s": elapsed,
        "client": client,
        "settings": vars(settings)
        | {
            "concurrency": CONCURRENCY,
            "mitmdump_options": MITM_OPTIONS,
            "wiretap_roots": {name: str(root) for name, root in roots.items()},
        },
        "machine": machine_info | {"loadavg_at_end": os.getloadavg()},
        "summary": {v.name: v.summary for v in variants},
        "targets": verdicts,
        "rounds": {v.name: [{k: x for k, x in r.items() if k != "sse_delays_us"} for r in v.rounds] for v in variants},
    }
    out = args.out or RESULTS / f"http-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"results: {out}")
    if not args.keep_recordings:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"recordings kept in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
