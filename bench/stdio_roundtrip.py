"""Stdio relay benchmark: the same client and server, directly and through three logging relays.

    python bench/stdio_roundtrip.py [--rounds N] [--quick]

Variants (each spawns ``bench/echo_server.py`` with this Python):

* ``direct``  the client talks to the server's pipes itself: the floor.
* ``minimal`` ``bench/minimal_relay.py``: asyncio, readline per message, one log write per line.
* ``mcp-rec`` ``mcp-rec record`` 0.1.1 (a select() loop), from tests/support/peers.py's ``mcp_rec()``.
* ``wiretap`` ``python -m wiretap tap --out FILE -- SERVER``, from this checkout.
* ``wiretap[NAME]`` with ``--wiretap-src DIR``: wiretap from a changed copy of the package (DIR holds
  ``wiretap/``), to measure a change against the checkout in the same run.

Everything runs in ONE interleaved run: each round visits every variant in turn (the order rotates
from round to round) and waits for the relay to go idle before moving on, so noise on this machine
hits all variants alike and no relay's leftover work (a recorder catching up) is billed to another.

1. Round trips: per round and variant, a batch of 200 B and a batch of 100 KB request/response round
   trips (request and response are both that size; one unrecorded warm-up each). p50 / p99 over all
   rounds, the ratio to ``direct``, and in how many rounds one variant's batch median beat another's.
2. Flood: the server writes N notifications (200 B, one write each) and then a response; messages/s
   as the client receives them, plus how long the relay keeps working after that (its recording lag).
3. One 64 MiB line: a fresh process per variant and round; the server streams a 64 MiB response line.
   Peak RSS of the relaying process: ``ru_maxrss`` from ``wait4`` on the relay (which also covers the
   children it reaped: the server, which streams the line and stays small: see the ``direct`` row),
   cross-checked by polling its ``/proc/PID/status`` VmHWM. Then 200 B round trips every 5 ms until
   the relay is idle: the slowest is how long traffic stalls while the relay finishes with the line.

Results: a table on stdout and bench/results/stdio-<utc>.json (raw samples included). It installs
nothing except the mcp-rec peer, through tests/support/peers.py. About two minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SERVER = BENCH / "echo_server.py"
RESULTS = BENCH / "results"

sys.path.insert(0, str(BENCH))
import floors  # noqa: E402
from echo_server import pad  # noqa: E402

SMALL, LARGE = 200, 100_000
MIB = 1 << 20
READ = 1 << 20


def load_peers() -> Any:
    sys.path.insert(0, str(REPO / "tests"))
    from support import peers

    return peers


# --- variants ---------------------------------------------------------------------------------------


@dataclass
class Variant:
    name: str
    build: Callable[[Path], list[str]]
    """The command line, given the path of its log file."""
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    relay: bool = True


def variants(wiretap_srcs: list[Path]) -> list[Variant]:
    py, server = sys.executable, [sys.executable, str(SERVER)]
    rec_python = Path(load_peers().mcp_rec())
    rec_cli = rec_python.parent / "mcp-rec"
    rec_argv = [str(rec_cli)] if rec_cli.exists() else [str(rec_python), "-m", "mcp_rec.cli"]
    quiet_rec = dict(os.environ, MCP_REC_NO_NOTICE="1")
    socat = floors.ensure("socat", "socat")
    out = [
        Variant("direct", lambda log: server, relay=False),
        Variant("socat", lambda log: floors.socat_command(socat, server)),
        Variant("minimal", lambda log: [py, str(BENCH / "minimal_relay.py"), str(log), "--", *server]),
        Variant("mcp-rec", lambda log: [*rec_argv, "record", "-o", str(log), "--", *server], env=quiet_rec),
        Variant(
            "wiretap",
            lambda log: [py, "-m", "wiretap", "tap", "--out", str(log), "--name", "bench", "--", *server],
        ),
    ]
    for src in wiretap_srcs:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])))
        out.append(
            Variant(
                f"wiretap[{src.name}]",
                lambda log: [py, "-m", "wiretap", "tap", "--out", str(log), "--name", "bench", "--", *server],
                env=env,
            )
        )
    return out


# --- process measurements ---------------------------------------------------------------------------


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` and of its child processes so far (ns), from
    /proc/PID/task/*/schedstat: wiretap records in a child process, whose work counts too."""
    total = 0
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    total += sum(cpu_ns(int(child)) for child in f.read().split())
    return total


def settle(pid: int, *, step: float = 0.005, quiet_for: float = 0.06, busy_ns: int = 250_000) -> float:
    """Wait until ``pid`` has used no more than ``busy_ns`` of CPU per ``step`` for ``quiet_for`` seconds.

    Returns how long it kept busy. ``quiet_for`` is longer than any sleep a recorder might take
    between polls of its queue, so a backlog is not mistaken for idleness."""
    start = last_busy = time.monotonic()
    last = cpu_ns(pid)
    while True:
        time.sleep(step)
        now, cpu = time.monotonic(), cpu_ns(pid)
        if cpu - last > busy_ns:
            last_busy = now
        last = cpu
        if now - last_busy >= quiet_for or now - start > 120:
            return last_busy - start


def status_kib(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


# --- the client -------------------------------------------------------------------------------------

REQUEST_PREFIX = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"size":%d,"text":"'
)
REQUEST_SUFFIX = b'"}}}'


class Session:
    """One client connection: the variant's process, talked to over its stdin/stdout."""

    def __init__(self, variant: Variant, workdir: Path, tag: str) -> None:
        self.variant = variant
        self.log = workdir / f"{variant.name}-{tag}.log"
        self.stderr_path = workdir / f"{variant.name}-{tag}.stderr"
        with self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                variant.build(self.log),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                bufsize=0,
                env=variant.env,
                cwd=workdir,
            )
        assert self.proc.stdin and self.proc.stdout
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.buf = bytearray()
        self.next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def _read_line(self) -> bytearray:
        buf, start = self.buf, 0
        while True:
            i = buf.find(b"\n", start)
            if i >= 0:
                line = buf[: i + 1]
                del buf[: i + 1]
                return line
            start = len(buf)
            chunk = os.read(self.rfd, READ)
            if not chunk:
                raise EOFError(f"{self.variant.name}: the relay closed its stdout ({self.stderr_text()})")
            buf += chunk

    def stderr_text(self) -> str:
        with contextlib.suppress(OSError):
            return self.stderr_path.read_text(errors="replace")[-2000:]
        return ""

    def roundtrip(self, size: int) -> int:
        """One request of ``size`` bytes answered by a response of ``size`` bytes; ns."""
        req_id = self._id()
        prefix = REQUEST_PREFIX % (req_id, size)
        request = prefix + pad(max(0, size - len(prefix) - len(REQUEST_SUFFIX))) + REQUEST_SUFFIX + b"\n"
        t0 = time.perf_counter_ns()
        self._send(request)
        line = self._read_line()
        elapsed = time.perf_counter_ns() - t0
        if len(line) != size + 1 or b'"id":%d,' % req_id not in line[:64]:
            raise RuntimeError(f"{self.variant.name}: bad response ({len(line)} bytes): {bytes(line[:120])!r}")
        return elapsed

    def flood(self, count: int, size: int) -> float:
        """Seconds from asking for ``count`` notifications to receiving the response after them."""
        assert not self.buf
        req_id = self._id()
        request = b'{"jsonrpc":"2.0","id":%d,"method":"bench/flood","params":{"count":%d,"size":%d}}\n' % (
            req_id,
            count,
            size,
        )
        need, seen, tail = count + 1, 0, b""
        t0 = time.perf_counter()
        self._send(request)
        while seen < need:
            chunk = os.read(self.rfd, READ)
            if not chunk:
                raise EOFError(f"{self.variant.name}: closed during the flood ({self.stderr_text()})")
            seen += chunk.count(b"\n")
            tail = (tail + chunk)[-256:]
        elapsed = time.perf_counter() - t0
        if seen != need or b'"id":%d,' % req_id not in tail:
            raise RuntimeError(f"{self.variant.name}: flood ended badly: {seen} lines, tail {tail!r}")
        return elapsed

    def big(self, size: int) -> float:
        """Seconds to receive one response line of ``size`` bytes (not kept in memory here)."""
        assert not self.buf
        req_id = self._id()
        self._send(b'{"jsonrpc":"2.0","id":%d,"method":"bench/big","params":{"size":%d}}\n' % (req_id, size))
        t0 = time.perf_counter()
        got = 0
        while True:
            chunk = os.read(self.rfd, READ)
            if not chunk:
                raise EOFError(f"{self.variant.name}: closed during the big line ({self.stderr_text()})")
            got += len(chunk)
            if chunk.endswith(b"\n"):
                break
        elapsed = time.perf_counter() - t0
        if got != size + 1:
            raise RuntimeError(f"{self.variant.name}: big line of {got} bytes, wanted {size + 1}")
        return elapsed

    def close(self, timeout: float = 120.0) -> tuple[int, resource.struct_rusage | None]:
        """End of input; wait for the process to exit. Returns its status and its rusage from wait4."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + timeout
        usage = None
        while True:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                _, status, usage = os.wait4(self.pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                print(f"  {self.variant.name}: did not exit within {timeout:.0f}s; killed", file=sys.stderr)
                break
            time.sleep(0.002)
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]
        return self.proc.returncode, usage


class HwmPoller:
    """Polls VmHWM of a process every few ms, keeping the last (largest) value it saw."""

    def __init__(self, pid: int, every: float = 0.002) -> None:
        self.pid, self.every = pid, every
        self.hwm_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            value = status_kib(self.pid, "VmHWM")
            if value is not None:
                self.hwm_kib = max(self.hwm_kib, value)
            time.sleep(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.hwm_kib


# --- statistics -------------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def rotated(items: list[Any], k: int) -> list[Any]:
    k %= len(items)
    return items[k:] + items[:k]


# --- the phases -------------------------------------------------------------------------------------


def latency_phase(sessions: dict[str, Session], cfg: argparse.Namespace) -> dict[str, Any]:
    names = list(sessions)
    samples: dict[str, dict[str, list[int]]] = {n: {"small": [], "large": []} for n in names}
    per_round: dict[str, dict[str, list[float]]] = {n: {"small": [], "large": []} for n in names}
    for r in range(cfg.rounds):
        for name in rotated(names, r):
            session = sessions[name]
            for key, size, count in (
                ("small", SMALL, cfg.small_per_round),
                ("large", LARGE, cfg.large_per_round),
            ):
                session.roundtrip(size)  # warm-up, not counted
                batch = [session.roundtrip(size) for _ in range(count)]
                samples[name][key] += batch
                per_round[name][key].append(statistics.median(batch))
            settle(session.pid)
            gc.collect()
        print(f"  round trips: round {r + 1}/{cfg.rounds}", end="\r", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {"samples_ns": samples, "round_medians_ns": per_round}


def flood_phase(sessions: dict[str, Session], cfg: argparse.Namespace) -> dict[str, Any]:
    names = list(sessions)
    rates: dict[str, list[float]] = {n: [] for n in names}
    lags: dict[str, list[float]] = {n: [] for n in names}
    for r in range(cfg.flood_rounds):
        for name in rotated(names, r):
            session = sessions[name]
            elapsed = session.flood(cfg.flood_count, SMALL)
            lags[name].append(settle(session.pid))
            rates[name].append(cfg.flood_count / elapsed)
            gc.collect()
        print(f"  flood: round {r + 1}/{cfg.flood_rounds}", end="\r", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {"msgs_per_s": rates, "idle_after_s": lags}


def stall_after(session: Session, *, gap: float = 0.005, cap: float = 30.0) -> float:
    """The slowest small round trip (s) from now until the relay stops working on earlier traffic.

    Probes every ``gap`` seconds; the relay counts as idle once it used under 10% of a core over
    100 ms (the probes themselves cost far less), or after ``cap`` seconds."""
    worst, start = 0, time.monotonic()
    window_start, window_cpu = start, cpu_ns(session.pid)
    while time.monotonic() - start < cap:
        worst = max(worst, session.roundtrip(SMALL))
        time.sleep(gap)
        now = time.monotonic()
        if now - window_start >= 0.1:
            cpu = cpu_ns(session.pid)
            if (cpu - window_cpu) / 1e9 < 0.1 * (now - window_start):
                break
            window_start, window_cpu = now, cpu
    return worst / 1e9


def recorder_peak_kib(recording: Path, timeout: float = 120.0) -> float:
    """wiretap's recorder process reports its own peak RSS (ru_maxrss) in the recording's end event."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, IndexError), recording.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
            last = json.loads(f.read().rsplit(b"\n", 2)[-2])
            if last.get("kind") == "end":
                return float(last.get("recorder_max_rss", 0)) / 1024
        time.sleep(0.02)
    return float("nan")


def big_phase(all_variants: list[Variant], workdir: Path, cfg: argparse.Namespace) -> dict[str, Any]:
    size = cfg.big_mib * MIB
    out: dict[str, dict[str, list[float]]] = {
        v.name: {
            "peak_kib": [],
            "hwm_polled_kib": [],
            "idle_kib": [],
            "transfer_s": [],
            "stall_s": [],
            "exit_s": [],
            "log_bytes": [],
            "recorder_kib": [],
        }
        for v in all_variants
    }
    for r in range(cfg.big_rounds):
        for variant in rotated(all_variants, r):
            session = Session(variant, workdir, f"big{r}")
            session.roundtrip(SMALL)
            settle(session.pid)
            idle = status_kib(session.pid, "VmHWM") or 0
            poller = HwmPoller(session.pid)
            transfer = session.big(size)
            stall = stall_after(session)
            t0 = time.perf_counter()
            code, usage = session.close()
            exit_s = time.perf_counter() - t0
            polled = poller.stop()
            if code != 0:
                raise RuntimeError(f"{variant.name}: exit status {code} after the big line: {session.stderr_text()}")
            row = out[variant.name]
            row["peak_kib"].append(usage.ru_maxrss if usage else float("nan"))
            row["hwm_polled_kib"].append(polled)
            row["idle_kib"].append(idle)
            row["transfer_s"].append(transfer)
            row["stall_s"].append(stall)
            row["exit_s"].append(exit_s)
            row["log_bytes"].append(session.log.stat().st_size if session.log.exists() else 0)
            row["recorder_kib"].append(recorder_peak_kib(session.log) if variant.name.startswith("wiretap") else 0)
            session.log.unlink(missing_ok=True)
            gc.collect()
            print(
                f"  64 MiB line: round {r + 1}/{cfg.big_rounds} {variant.name:<10}",
                end="\r",
                file=sys.stderr,
                flush=True,
            )
    print(file=sys.stderr)
    return out


# --- report -----------------------------------------------------------------------------------------


def summarize(results: dict[str, Any], names: list[str], cfg: argparse.Namespace) -> dict[str, Any]:
    lat, flood, big = results["latency"], results["flood"], results["big"]
    summary: dict[str, Any] = {}
    for name in names:
        row: dict[str, Any] = {}
        for key in ("small", "large"):
            values = lat["samples_ns"][name][key]
            row[f"{key}_p50_us"] = quantile(values, 0.5) / 1000
            row[f"{key}_p99_us"] = quantile(values, 0.99) / 1000
            row[f"{key}_n"] = len(values)
        row["flood_msgs_per_s"] = statistics.median(flood["msgs_per_s"][name])
        row["flood_idle_after_s"] = statistics.median(flood["idle_after_s"][name])
        b = big[name]
        row["big_peak_mib"] = statistics.median(b["peak_kib"]) / 1024
        row["big_hwm_polled_mib"] = statistics.median(b["hwm_polled_kib"]) / 1024
        row["big_idle_mib"] = statistics.median(b["idle_kib"]) / 1024
        row["big_transfer_s"] = statistics.median(b["transfer_s"])
        row["big_stall_ms"] = statistics.median(b["stall_s"]) * 1000
        row["big_exit_s"] = statistics.median(b["exit_s"])
        row["big_recorder_mib"] = statistics.median(b["recorder_kib"]) / 1024
        summary[name] = row
    direct = summary["direct"]
    for row in summary.values():
        for key in ("small", "large"):
            for q in ("p50", "p99"):
                row[f"{key}_{q}_x_direct"] = row[f"{key}_{q}_us"] / direct[f"{key}_{q}_us"]
        row["flood_x_direct"] = row["flood_msgs_per_s"] / direct["flood_msgs_per_s"]
        row["big_peak_x_line"] = row["big_peak_mib"] / cfg.big_mib
    return summary


def paired_wins(results: dict[str, Any], a: str, b: str, key: str) -> tuple[int, int]:
    """Rounds in which ``a``'s batch median beat ``b``'s."""
    ra, rb = results["latency"]["round_medians_ns"][a][key], results["latency"]["round_medians_ns"][b][key]
    return sum(x < y for x, y in zip(ra, rb, strict=True)), len(ra)


def verdicts(
    summary: dict[str, Any], results: dict[str, Any], cfg: argparse.Namespace, subject: str
) -> list[tuple[str, bool, str]]:
    """The issue's targets: p50 no slower than mcp-rec at both sizes; never slower than the minimal
    relay (p50 and p99 at both sizes, flood rate); peak RSS for the big line under 4x the line."""
    w = summary[subject]
    out = []

    def us(row: dict[str, Any], key: str) -> float:
        return float(row[f"{key}_us"])

    if "mcp-rec" in summary:
        rec = summary["mcp-rec"]
        for key, label in (("small", "200 B"), ("large", "100 KB")):
            wins, n = paired_wins(results, subject, "mcp-rec", key)
            a, b = us(w, f"{key}_p50"), us(rec, f"{key}_p50")
            out.append(
                (
                    f"p50 {label} <= mcp-rec",
                    a <= b,
                    f"{a:.0f} vs {b:.0f} us ({a / b:.2f}x); faster in {wins}/{n} rounds",
                )
            )
    if "socat" in summary:  # the targets: at socat's floor
        floor = summary["socat"]
        for key, label, p50_max in (("small", "200 B", 1.0), ("large", "100 KB", 1.1)):
            for q, limit in (("p50", p50_max), ("p99", 1.5)):
                a, b = us(w, f"{key}_{q}"), us(floor, f"{key}_{q}")
                out.append((f"{q} {label} <= {limit}x socat", a <= limit * b, f"{a:.0f} vs {b:.0f} us ({a / b:.2f}x)"))
    if "minimal" in summary:
        mini = summary["minimal"]
        for key, label in (("small", "200 B"), ("large", "100 KB")):
            for q in ("p50", "p99"):
                a, b = us(w, f"{key}_{q}"), us(mini, f"{key}_{q}")
                out.append((f"{q} {label} <= minimal", a <= b, f"{a:.0f} vs {b:.0f} us ({a / b:.2f}x)"))
        a, b = w["flood_msgs_per_s"], mini["flood_msgs_per_s"]
        out.append(("flood rate >= minimal", a >= b, f"{a:.0f} vs {b:.0f} msg/s ({a / b:.2f}x)"))
    peak = max(w["big_peak_mib"], w["big_recorder_mib"])  # the relay's, or its recorder's
    out.append(
        (
            f"{cfg.big_mib} MiB line: peak RSS (relay or recorder) < 4x line ({4 * cfg.big_mib} MiB)",
            peak < 4 * cfg.big_mib,
            f"{peak:.0f} MiB = {peak / cfg.big_mib:.2f}x",
        )
    )
    return out


def render(summary: dict[str, Any], cfg: argparse.Namespace) -> str:
    w = max(10, *(len(n) for n in summary)) + 2
    rt = (
        f"{'round trip':<{w}}{'200 B p50':>11}{'p99':>10}{'p50 x':>8}{'p99 x':>8} |"
        f"{'100 KB p50':>12}{'p99':>10}{'p50 x':>8}{'p99 x':>8}"
    )
    lines = [rt, "-" * len(rt)]
    for name, r in summary.items():
        lines.append(
            f"{name:<{w}}{r['small_p50_us']:>9.0f}us{r['small_p99_us']:>8.0f}us"
            f"{r['small_p50_x_direct']:>8.2f}{r['small_p99_x_direct']:>8.2f} |"
            f"{r['large_p50_us']:>10.0f}us{r['large_p99_us']:>8.0f}us"
            f"{r['large_p50_x_direct']:>8.2f}{r['large_p99_x_direct']:>8.2f}"
        )
    big = f"{cfg.big_mib} MiB line"
    head = (
        f"{'flood, big line':<{w}}{'msg/s':>10}{'x':>7}{'busy after':>12} |"
        f"{big + ' peak RSS':>20}{'x line':>8}{'idle':>8}{'recv':>8}{'stall':>10}{'recorder':>10}"
    )
    lines += ["", head, "-" * len(head)]
    for name, r in summary.items():
        lines.append(
            f"{name:<{w}}{r['flood_msgs_per_s']:>10.0f}{r['flood_x_direct']:>7.2f}"
            f"{r['flood_idle_after_s']:>11.3f}s |"
            f"{r['big_peak_mib']:>16.0f} MiB{r['big_peak_x_line']:>8.2f}{r['big_idle_mib']:>5.0f}MiB"
            f"{r['big_transfer_s']:>7.2f}s{r['big_stall_ms']:>8.1f}ms{r['big_recorder_mib']:>6.0f} MiB"
        )
    lines.append(
        "x: ratio to direct (latency: lower is better; flood: higher is better).\n"
        "busy after: how long the relay kept using CPU after the client had the last notification\n"
        "  (its recording lag).\n"
        "peak RSS: ru_maxrss of the relay process (direct: the server alone, for reference);\n"
        "  idle: its VmHWM before the line; recv: until the client had the whole line;\n"
        "  stall: the slowest 200 B round trip while the relay finishes with the line (a probe every\n"
        "  5 ms from when the client has the line until the relay goes idle);\n"
        "  recorder: peak RSS of wiretap's recorder process (its own ru_maxrss, from the end event).\n"
        "busy after and stall count the relay's child processes' CPU too (wiretap's recorder)."
    )
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "cpu": model,
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "executable": sys.executable,
    }


def wiretap_version() -> dict[str, Any]:
    """Which wiretap the ``wiretap`` variant ran: the commit, and whether wiretap/ had changes on top."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--", "wiretap")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="round-trip rounds (default 30)")
    parser.add_argument("--quick", action="store_true", help="a short run to check that everything works")
    parser.add_argument("--small-per-round", type=int, default=50)
    parser.add_argument("--large-per-round", type=int, default=25)
    parser.add_argument("--flood-rounds", type=int, default=7)
    parser.add_argument("--flood-count", type=int, default=50_000)
    parser.add_argument("--big-rounds", type=int, default=2)
    parser.add_argument("--big-mib", type=int, default=64)
    parser.add_argument(
        "--wiretap-src",
        type=Path,
        action="append",
        default=[],
        help="also run wiretap from this source folder (a copy with changes), as variant wiretap[NAME]",
    )
    parser.add_argument("--only", help="comma-separated variants to run (direct is always run: the ratios need it)")
    parser.add_argument("--keep", action="store_true", help="keep the logs and recordings (printed path)")
    cfg = parser.parse_args()
    if cfg.quick:
        cfg.rounds = min(cfg.rounds, 5)
        cfg.small_per_round, cfg.large_per_round = 20, 10
        cfg.flood_rounds, cfg.flood_count, cfg.big_rounds = 2, 5_000, 1

    started = time.time()
    load = os.getloadavg()[0]
    if load > 0.5:
        print(
            f"note: load average {load:.2f} before the run; other work on this machine adds noise",
            file=sys.stderr,
        )
    all_variants = variants([p.resolve() for p in cfg.wiretap_src])
    if cfg.only:
        wanted = {"direct", *cfg.only.split(",")}
        all_variants = [v for v in all_variants if v.name in wanted]
    names = [v.name for v in all_variants]
    workdir = Path(tempfile.mkdtemp(prefix="wiretap-bench-"))
    print(f"variants: {', '.join(names)}; work folder {workdir}", file=sys.stderr)
    gc.disable()
    results: dict[str, Any] = {}
    sessions = {v.name: Session(v, workdir, "main") for v in all_variants}
    try:
        for s in sessions.values():
            s.roundtrip(SMALL)
            settle(s.pid)
        results["latency"] = latency_phase(sessions, cfg)
        results["flood"] = flood_phase(sessions, cfg)
    finally:
        closing = {name: s.close() for name, s in sessions.items()}
    results["logs"] = {
        name: {
            "exit": closing[name][0],
            "log_bytes": s.log.stat().st_size if s.log.exists() else 0,
            "log_lines": sum(1 for _ in s.log.open("rb")) if s.log.exists() else 0,
        }
        for name, s in sessions.items()
    }
    results["big"] = big_phase(all_variants, workdir, cfg)
    gc.enable()

    summary = summarize(results, names, cfg)
    print()
    print(render(summary, cfg))
    subjects = [n for n in names if n.startswith("wiretap")]
    checks = {}
    for subject in subjects:
        print(f"\ntargets for {subject}:")
        checks[subject] = verdicts(summary, results, cfg, subject)
        for label, ok, detail in checks[subject]:
            print(f"  [{'met' if ok else 'MISSED'}] {label}: {detail}")
    elapsed = time.time() - started
    print(f"\n{len(names)} variants, {cfg.rounds} rounds; took {elapsed:.0f}s")

    stamp = datetime.fromtimestamp(started, UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"stdio-{stamp}.json"
    report = {
        "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "elapsed_s": elapsed,
        "machine": machine() | {"loadavg_before": load},
        "wiretap": wiretap_version(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(cfg).items()}
        | {"small_bytes": SMALL, "large_bytes": LARGE, "wiretap_src": [str(p) for p in cfg.wiretap_src]},
        "summary": summary,
        "targets": {s: [{"target": label, "met": ok, "detail": d} for label, ok, d in c] for s, c in checks.items()},
        "raw": results,
    }
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"results: {path}")
    if cfg.keep:
        print(f"logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
