"""Start-up: how long wiretap takes to run a command that does nothing, from exec to exit.

    python bench/start_time.py [--rounds N] [--wiretap-src DIR ...]

Two commands, each run ``--rounds`` times per variant, the variants interleaved round by round:

* ``version``: ``wiretap --version`` (the CLI's imports alone);
* ``tap``: ``wiretap tap --out FILE -- true`` (the relay and its recorder process started, a server
  that exits at once, the recording finished): what every MCP server a client launches through
  wiretap pays before and after its own work.

Variants: ``wiretap`` from this checkout, and ``wiretap[NAME]`` from each ``--wiretap-src DIR`` (DIR holds
``wiretap/``; it is compiled first, as an installed copy would be). Medians and minimums over the rounds.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--wiretap-src", type=Path, action="append", default=[])
    cfg = parser.parse_args()
    true = shutil.which("true") or "/usr/bin/true"
    variants = [("wiretap", CHECKOUT), *((f"wiretap[{p.name}]", p.resolve()) for p in cfg.wiretap_src)]
    for _, src in variants:
        compileall.compile_dir(src / "wiretap", quiet=2)
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="wiretap-start-") as tmp:
        for r in range(cfg.rounds):
            for name, src in variants[r % len(variants) :] + variants[: r % len(variants)]:
                env = {**os.environ, "PYTHONPATH": str(src)}
                out = Path(tmp) / f"{r}-{len(times)}.jsonl"
                commands = {"version": ["--version"], "tap": ["tap", "--out", str(out), "--", true]}
                for what, args in commands.items():
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "wiretap", *args], env=env, cwd=tmp, check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
                    times.setdefault((what, name), []).append(time.perf_counter() - started)
    print(f"{'command':<9}{'variant':<20}{'median s':>10}{'min s':>8}")
    for (what, name), values in times.items():
        print(f"{what:<9}{name:<20}{statistics.median(values):>10.3f}{min(values):>8.3f}")
    print(f"{cfg.rounds} rounds; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
