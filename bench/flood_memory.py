"""Memory under two floods that once had no bound: what wiretap's processes peak at.

    python bench/flood_memory.py [--rounds N] [--wiretap-src DIR ...]

* ``half heads``: ``wiretap proxy`` in front of an upstream that is never reached; ``--connections``
  clients each send 60,000 bytes of a request head (under the 64 KiB head limit) and wait. Reported:
  the proxy's peak RSS (its own ``ru_maxrss``, from ``wait4``) less its peak in a round without clients.
* ``endless line``: ``wiretap tap`` in front of a server that writes ``--line-mib`` MiB with no newline,
  then exits. Reported: the recorder process's peak RSS (``recorder_max_rss`` in the end event) and how
  long the recording took to finish.

Variants: ``wiretap`` from this checkout, and ``wiretap[NAME]`` from each ``--wiretap-src DIR`` (DIR holds
``wiretap/``), interleaved round by round. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))
from wiretap.recording.complete import await_end  # noqa: E402

HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 60_000


def _max_rss(rusage: resource.struct_rusage) -> int:
    return rusage.ru_maxrss if sys.platform == "darwin" else rusage.ru_maxrss * 1024


def half_heads(src: Path, connections: int, tmp: Path) -> int:
    """The proxy's peak RSS in bytes after ``connections`` half-sent heads."""
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{upstream.getsockname()[1]}/mcp"
    command = [sys.executable, "-m", "wiretap", "proxy", "--upstream", url, "--listen", "127.0.0.1:0",
               "--out", str(tmp / f"proxy-{time.monotonic_ns()}.jsonl")]  # fmt: skip
    proc = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(src)}, cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdout is not None
    host, port = proc.stdout.readline().strip().split("//")[1].split("/")[0].rsplit(":", 1)
    clients = []
    try:
        for _ in range(connections):
            client = socket.create_connection((host, int(port)))
            clients.append(client)
            client.sendall(HALF_HEAD)
        time.sleep(1.5)  # (past the proxy's once-a-second sweep)
    finally:
        for client in clients:
            client.close()
        upstream.close()
    proc.send_signal(signal.SIGINT)
    _, _, rusage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # (reaped by wait4, which also gave its rusage)
    proc.stdout.close()
    return _max_rss(rusage)


def endless_line(src: Path, mib: int, tmp: Path) -> tuple[int, float]:
    """The recorder's peak RSS in bytes, and the seconds until the recording was complete."""
    server = f"import sys\nblock = b'x' * (1 << 20)\nfor _ in range({mib}): sys.stdout.buffer.write(block)\n"
    out = tmp / f"tap-{time.monotonic_ns()}.jsonl"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "wiretap", "tap", "--out", str(out), "--", sys.executable, "-c", server],
                   env={**os.environ, "PYTHONPATH": str(src)}, cwd=tmp, check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    if not await_end(out, 300, patient=True).complete:
        raise SystemExit(f"{out}: the recording did not finish")
    took = time.perf_counter() - started
    with out.open("rb") as recording:
        recording.seek(max(0, out.stat().st_size - 4096))
        end = json.loads(recording.read().splitlines()[-1])
    return int(end["recorder_max_rss"]), took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=3200)
    parser.add_argument("--line-mib", type=int, default=300)
    parser.add_argument("--wiretap-src", type=Path, action="append", default=[])
    cfg = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = cfg.connections + 200
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    variants = [("wiretap", CHECKOUT), *((f"wiretap[{p.name}]", p.resolve()) for p in cfg.wiretap_src)]
    grown: dict[str, list[int]] = {}
    recorder: dict[str, list[tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="wiretap-flood-memory-") as tmp_name:
        tmp = Path(tmp_name)
        for r in range(cfg.rounds):
            for name, src in variants[r % len(variants) :] + variants[: r % len(variants)]:
                idle = half_heads(src, 0, tmp)
                grown.setdefault(name, []).append(half_heads(src, cfg.connections, tmp) - idle)
                recorder.setdefault(name, []).append(endless_line(src, cfg.line_mib, tmp))
                print(f"round {r + 1}/{cfg.rounds} {name} done", file=sys.stderr, flush=True)
    mib = 1 << 20
    print(f"{'variant':<22}{'half heads: proxy grew':>24}{'endless line: recorder peak':>30}{'took s':>8}")
    for name, _ in variants:
        peaks = [peak for peak, _ in recorder[name]]
        took = [seconds for _, seconds in recorder[name]]
        print(f"{name:<22}{statistics.median(grown[name]) / mib:>20.0f} MiB"
              f"{statistics.median(peaks) / mib:>26.0f} MiB{statistics.median(took):>8.2f}")  # fmt: skip
    print(f"{cfg.connections} connections of 60,000-byte half heads; a {cfg.line_mib} MiB line without a newline; "
          f"{cfg.rounds} rounds; load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
