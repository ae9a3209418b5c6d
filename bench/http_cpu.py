"""CPU per request of one proxy under load, thread by thread: where bench/http_proxy.py's req/s go.

    python bench/http_cpu.py minimal|wiretap|DIR [--seconds 4] [--connections 16] [--repeat 3]

Starts bench/http_upstream.py and the proxy (``minimal``: bench/http_minimal_proxy.py; ``wiretap``:
this checkout; DIR: ``python -m wiretap proxy`` from a copy of the package in DIR), warms it up, then
runs wrk (one thread; it must be installed) and reads /proc before and after: CPU microseconds per
request of each of the proxy's threads (main = the event loop) and of its child processes (wiretap's recorder), and
their voluntary context switches per request (a thread giving up the CPU: mostly waiting for the GIL,
or sleeping), plus the upstream's CPU per request. Throughput on a 2-core machine swings with what
else runs; CPU per request is far steadier, and it is what a proxy's throughput is the inverse of
once it is the bottleneck. Use ``--repeat`` and compare medians.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
from http_proxy import Wrk  # noqa: E402

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def threads(pid: int) -> dict[int, tuple[int, int]]:
    """Per thread: (CPU ticks, voluntary context switches)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with_stat = (task / "stat").read_text().rsplit(")", 1)[1].split()
        status = (task / "status").read_text()
        switches = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore[union-attr]
        out[int(task.name)] = (int(with_stat[11]) + int(with_stat[12]), switches)
    return out


def children(pid: int) -> list[int]:
    """The proxy's child processes (wiretap's recorder), found through /proc."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def one_run(kind: str, seconds: int, connections: int, wrk: Wrk, tmp: Path) -> dict[str, float]:
    upstream = subprocess.Popen([sys.executable, str(BENCH / "http_upstream.py")], stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None
    base = upstream.stdout.readline().strip()
    if kind == "minimal":
        command = [sys.executable, str(BENCH / "http_minimal_proxy.py"), "--upstream", base]
        cwd, env = None, None
    else:
        root = REPO if kind == "wiretap" else Path(kind).resolve()
        command = [sys.executable, "-m", "wiretap", "proxy", "--upstream", base + "/mcp"]
        command += ["--out", str(tmp / f"rec-{time.monotonic_ns()}.jsonl")]
        cwd, env = root, dict(os.environ, PYTHONPATH=str(root))
    proxy = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proxy.stdout is not None
    try:
        url = proxy.stdout.readline().strip()
        url = url if url.endswith("/mcp") else url + "/mcp"
        wrk.run(url, connections, 2)  # warm-up
        time.sleep(0.5)
        kids = children(proxy.pid)
        before, up_before = threads(proxy.pid), threads(upstream.pid)
        kids_before = {kid: threads(kid) for kid in kids}
        result = wrk.run(url, connections, seconds)
        time.sleep(0.5)  # let a recorder finish what it was handed: it is billed to these requests
        after, up_after = threads(proxy.pid), threads(upstream.pid)
        kids_after = {kid: threads(kid) for kid in kids}
    finally:
        proxy.send_signal(signal.SIGINT)
        upstream.send_signal(signal.SIGTERM)
        proxy.wait()
        upstream.wait()
    n = result["requests"]
    out = {"rps": n / result["seconds"], "p50_ms": result["p50_us"] / 1000}
    others_cpu = others_cs = 0.0
    for tid, (ticks, switches) in after.items():
        cpu = (ticks - before.get(tid, (0, 0))[0]) * TICK_US / n
        cs = (switches - before.get(tid, (0, 0))[1]) / n
        if tid == proxy.pid:
            out["main_us"], out["main_cs"] = cpu, cs
        else:
            others_cpu += cpu
            others_cs += cs
    out["other_threads_us"], out["other_threads_cs"] = others_cpu, others_cs
    out["children_us"] = (
        sum(t - kids_before[kid].get(tid, (0, 0))[0] for kid in kids for tid, (t, _) in kids_after[kid].items())
        * TICK_US
        / n
    )
    out["upstream_us"] = sum(t - up_before.get(tid, (0, 0))[0] for tid, (t, _) in up_after.items()) * TICK_US / n
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("proxy", help="minimal, wiretap, or a folder holding a changed copy of wiretap/")
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wrk_path = shutil.which("wrk")
    if not wrk_path:
        parser.error("needs wrk (apt-get install -y wrk)")
    tmp = Path(tempfile.mkdtemp(prefix="wiretap-http-cpu-"))
    try:
        wrk = Wrk(wrk_path, tmp)
        runs = [one_run(args.proxy, args.seconds, args.connections, wrk, tmp) for _ in range(args.repeat)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for i, run in enumerate(runs, 1):
        print(
            f"run {i}: {run['rps']:,.0f} req/s  p50 {run['p50_ms']:.2f} ms | CPU us/request: main {run['main_us']:.1f}"
            f" (vol. switches {run['main_cs']:.2f}), other threads {run['other_threads_us']:.1f}"
            f" ({run['other_threads_cs']:.2f}), child processes {run['children_us']:.1f},"
            f" upstream {run['upstream_us']:.1f}"
        )

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(
        f"median of {len(runs)}: {med('rps'):,.0f} req/s | proxy CPU"
        f" {med('main_us') + med('other_threads_us') + med('children_us'):.1f} us/request = main {med('main_us'):.1f}"
        f" + other threads {med('other_threads_us'):.1f} + child processes {med('children_us'):.1f};"
        f" vol. switches/request main {med('main_cs'):.2f}, other threads {med('other_threads_cs'):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
