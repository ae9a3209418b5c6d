"""Recorder throughput: how fast the recorder process turns a flood into a complete recording.

    python bench/recorder_throughput.py [--rounds N] [--wiretap-src DIR ...]

A driver process per variant and round builds wiretap's real ``Recorder`` (the recorder process, its
pipe and its inbox), opens a ``line`` stream as the stdio tap does and hands it a flood with
``Recorder.data()`` in 64 KiB chunks, cut wherever 64 KiB ends (as the relay's reads cut them), then
closes it and waits for the recorder process to finish the file. The time is from the first chunk
to the recorder's exit (the file is then complete: the driver checks its line count), so it is the
recorder's pace, not the relay's: the relay's ``data()`` only blocks when the recorder's inbox is full.

Workloads (redaction on, as by default; the padding is lorem ipsum, free of anything redaction matches):

* ``200 B``: 200,000 notifications of 200 bytes (``echo_server.py``'s flood notifications).
* ``100 KB``: 1,000 ``tools/call`` results of 100,000 bytes.
* ``4 MiB``: 25 results of 4 MiB.

Variants: ``wiretap`` from this checkout, and ``wiretap[NAME]`` from each ``--wiretap-src DIR`` (DIR holds
``wiretap/``), interleaved round by round with the order rotating. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
sys.path.insert(0, str(BENCH))
from echo_server import NOTE_PREFIX, NOTE_SUFFIX, RESULT_PREFIX, RESULT_SUFFIX, fit  # noqa: E402

CHUNK = 64 << 10
WORKLOADS = {"200 B": (200, 200_000), "100 KB": (100_000, 1_000), "4 MiB": (4 << 20, 25)}


def flood(size: int, count: int) -> bytes:
    if size <= 1000:
        one = fit(NOTE_PREFIX, NOTE_SUFFIX, size) + b"\n"
        return one * count
    return b"".join(fit(RESULT_PREFIX % i, RESULT_SUFFIX, size) + b"\n" for i in range(count))


def drive(workload: str, out: Path) -> dict[str, Any]:
    """In the driver process: record one flood through the real recorder process, timed."""
    from wiretap.recording.events import Direction, Header
    from wiretap.recording.recorder import Recorder
    from wiretap.recording.spec import StreamSpec
    from wiretap.recording.writer import RecordingWriter, create_private

    size, count = WORKLOADS[workload]
    data = flood(size, count)
    chunks = [data[at : at + CHUNK] for at in range(0, len(data), CHUNK)]
    recorder = Recorder(RecordingWriter(create_private(out), out), Header(transport="stdio", name="b", argv=["x"]))
    recorder.open(Direction.S2C, StreamSpec("line", {"dir": "s2c"}))
    while out.stat().st_size == 0:  # the recorder process is up and has written the header
        time.sleep(0.001)
    cpu0 = os.times()
    started = time.monotonic()
    for chunk in chunks:
        recorder.data(Direction.S2C, chunk)
    handed = time.monotonic()
    recorder.closed(Direction.S2C)
    recorder.close()
    done = time.monotonic()
    cpu1 = os.times()
    with out.open("rb") as f:
        lines = sum(1 for _ in f)
    return {
        "seconds": done - started,
        "handed_s": handed - started,
        "bytes": len(data),
        "messages": count,
        "lines": lines,
        "complete": lines == count + 3,  # header, the messages, eof, end
        "recorder_cpu_s": (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system),
    }


def run_driver(src: Path | None, workload: str, workdir: Path, n: int) -> dict[str, Any]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    out = workdir / f"rec-{n}.jsonl"
    # Run from the work folder: ``python -m wiretap.recording.sink`` would find ./wiretap first.
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--driver", workload, str(out)],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"driver failed: {proc.stderr.strip()}")
    out.unlink(missing_ok=True)
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of: " + ", ".join(WORKLOADS))
    parser.add_argument("--wiretap-src", type=Path, action="append", default=[])
    parser.add_argument("--no-checkout", action="store_true", help="only the --wiretap-src variants")
    parser.add_argument("--driver", nargs=2, help=argparse.SUPPRESS)
    cfg = parser.parse_args()
    if cfg.driver:
        print(json.dumps(drive(cfg.driver[0], Path(cfg.driver[1]))))
        return 0
    started = time.time()
    load = os.getloadavg()
    variants: list[tuple[str, Path | None]] = [] if cfg.no_checkout else [("wiretap", None)]
    variants += [(f"wiretap[{p.name}]", p.resolve()) for p in cfg.wiretap_src]
    workloads = cfg.workloads.split(",")
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {w: {v: [] for v, _ in variants} for w in workloads}
    n = 0
    with tempfile.TemporaryDirectory(prefix="wiretap-recbench-") as tmp:
        for r in range(cfg.rounds):
            for w in workloads:
                order = variants[r % len(variants) :] + variants[: r % len(variants)]
                for name, src in order:
                    n += 1
                    samples[w][name].append(run_driver(src, w, Path(tmp), n))
                    print(f"round {r + 1} {w:>7} {name}: {samples[w][name][-1]['seconds']:.3f}s", file=sys.stderr)
    load_after = os.getloadavg()
    summary: dict[str, Any] = {}
    lines = [f"{'workload':<9}{'variant':<18}{'msg/s':>11}{'MB/s':>9}{'p50 s':>9}{'cpu s':>8}  complete"]
    for w in workloads:
        for name, _ in variants:
            runs = samples[w][name]
            secs = statistics.median(s["seconds"] for s in runs)
            first = runs[0]
            row = {
                "seconds": secs,
                "msg_per_s": first["messages"] / secs,
                "mb_per_s": first["bytes"] / secs / 1e6,
                "recorder_cpu_s": statistics.median(s["recorder_cpu_s"] for s in runs),
                "complete": all(s["complete"] for s in runs),
            }
            summary.setdefault(w, {})[name] = row
            lines.append(
                f"{w:<9}{name:<18}{row['msg_per_s']:>11,.0f}{row['mb_per_s']:>9.1f}{secs:>9.3f}"
                f"{row['recorder_cpu_s']:>8.2f}  {'yes' if row['complete'] else 'NO'}"
            )
    print("\n".join(lines))
    print("\ntargets (issue 10, item 3): >= 200 MB/s for large frames; 200 B: at least the relay's flood rate")
    print("  (stdio_roundtrip.py's flood column for wiretap, from a run on the same machine)")
    for w in workloads:
        if WORKLOADS[w][0] >= 100_000:
            for name, _ in variants:
                mb = summary[w][name]["mb_per_s"]
                print(f"  [{'met' if mb >= 200 else 'MISSED'}] {w} {name}: {mb:.0f} MB/s")
    print(f"load average before {load[0]:.2f}, after {load_after[0]:.2f}; {cfg.rounds} rounds")
    stamp = datetime.fromtimestamp(started, UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"recorder-{stamp}.json"
    report = {"loadavg": [load, load_after], "config": {"rounds": cfg.rounds, "chunk": CHUNK},
              "summary": summary, "raw": samples}  # fmt: skip
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
