"""Forward mode against reverse mode, and TLS interception against mitmdump's, in one interleaved run.

    python bench/http_forward.py [--rounds N] [--seconds S] [--mitmdump]

Variants, all against ``bench/http_upstream.py`` (plain HTTP, and HTTPS with a test CA):

* ``reverse``      ``wiretap proxy --upstream http://…/mcp``: the client is given wiretap's URL.
* ``forward``      ``wiretap proxy --forward``: the client keeps the upstream's plain HTTP URL and sends
  absolute-form requests to wiretap as its proxy.
* ``forward-tls``  the same proxy, the HTTPS upstream: CONNECT, then TLS with the run's CA, intercepted.
* ``mitmdump-tls`` (``--mitmdump``) mitmproxy 11.0.2 (tests/support/peers.py) as a regular proxy in front of the
  HTTPS upstream, streaming bodies: the reference for TLS interception.

Each round visits every variant in turn (the order rotates), with the aiohttp load client
(bench/http_load.py) in a process of its own: sequential ``POST /mcp`` on one keep-alive connection (p50,
p99), then 16 keep-alive connections back to back (requests/s). Reported: medians over rounds, and each
variant's throughput as a ratio to ``reverse`` (and TLS to ``mitmdump-tls``). Recording and redaction
are on (the defaults). Results: a table on stdout and bench/results/forward-<utc>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import trustme

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests"))
from http_proxy import LoadClient, _free_port, _wait_listening, percentile, stop, wait_idle  # noqa: E402
from http_upstream import PATH  # noqa: E402

CONCURRENCY = 16


@dataclass
class Variant:
    name: str
    url: str = ""
    proxy: str | None = None
    cafile: str | None = None
    proc: subprocess.Popen[str] | None = None
    rounds: list[dict[str, float]] = field(default_factory=list)


def _upstream(tmp: Path, certfile: Path | None) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, str(BENCH / "http_upstream.py")]
    command += ["--certfile", str(certfile)] if certfile else []
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _forward(tmp: Path, cafile: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    command = [sys.executable, "-m", "wiretap", "proxy", "--forward", "--out", f"{tmp}/forward/"]
    command += ["--upstream-cafile", str(cafile)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    env: dict[str, str] = {}
    for line in proc.stdout:
        if line.strip() == "# ready":
            return proc, env
        name, _, value = shlex.split(line)[1].partition("=")
        env[name] = value
    raise RuntimeError("the forward proxy did not start")


def _mitmdump(tmp: Path, cafile: Path) -> tuple[subprocess.Popen[str], str, str]:
    from support import peers

    port, confdir = _free_port(), tmp / "mitmproxy"
    command = [str(peers.mitmproxy()), "--listen-host", "127.0.0.1", "--listen-port", str(port), "-q"]
    command += ["--set", "stream_large_bodies=1", "--set", f"confdir={confdir}"]
    command += ["--set", f"ssl_verify_upstream_trusted_ca={cafile}"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    _wait_listening(port, proc, "mitmdump")
    for _ in range(100):
        if (confdir / "mitmproxy-ca-cert.pem").exists():
            break
        time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}", str(confdir / "mitmproxy-ca-cert.pem")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=2.0, help="of each phase, a round")
    parser.add_argument("--mitmdump", action="store_true", help="add mitmdump (installs mitmproxy 11.0.2)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wiretap-bench-forward-"))
    ca = trustme.CA()
    cafile, certfile = tmp / "ca.pem", tmp / "upstream.pem"
    ca.cert_pem.write_to_path(str(cafile))
    issued = ca.issue_cert("127.0.0.1")
    certfile.write_bytes(issued.private_key_pem.bytes() + b"".join(p.bytes() for p in issued.cert_chain_pems))
    procs: list[subprocess.Popen[str]] = []
    load = LoadClient()
    try:
        plain, plain_url = _upstream(tmp, None)
        tls, tls_url = _upstream(tmp, certfile)
        procs += [plain, tls]
        reverse = subprocess.Popen(
            [sys.executable, "-m", "wiretap", "proxy", "--upstream", plain_url + PATH, "--out", str(tmp / "r.jsonl")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
        )  # fmt: skip
        assert reverse.stdout is not None
        forward, env = _forward(tmp, cafile)
        procs += [reverse, forward]
        variants = [
            Variant("reverse", reverse.stdout.readline().strip(), proc=reverse),
            Variant("forward", plain_url + PATH, env["HTTP_PROXY"], proc=forward),
            Variant("forward-tls", tls_url + PATH, env["HTTPS_PROXY"], env["SSL_CERT_FILE"], proc=forward),
        ]
        if args.mitmdump:
            mitm, mitm_url, mitm_ca = _mitmdump(tmp, cafile)
            procs.append(mitm)
            variants.append(Variant("mitmdump-tls", tls_url + PATH, mitm_url, mitm_ca, proc=mitm))
        pids = [p.pid for p in procs]
        for n in range(args.rounds):
            order = variants[n % len(variants) :] + variants[: n % len(variants)]
            for variant in order:
                load.run("via", proxy=variant.proxy, cafile=variant.cafile)
                result = load.run("latency", url=variant.url, seconds=args.seconds)
                samples = sorted(result["samples_us"])
                wait_idle(pids)
                rps = load.run("throughput", url=variant.url, seconds=args.seconds, concurrency=CONCURRENCY)
                errors = result["errors"] + rps["errors"]
                variant.rounds.append(
                    {
                        "p50_us": percentile(samples, 50),
                        "p99_us": percentile(samples, 99),
                        "rps": rps["requests"] / rps["seconds"],
                        "errors": errors,
                    }
                )
                wait_idle(pids)
    finally:
        load.close()
        for proc in reversed(procs):
            stop(proc, signal.SIGINT)
    summary = {
        v.name: {k: statistics.median(r[k] for r in v.rounds) for k in ("p50_us", "p99_us", "rps")} for v in variants
    }
    for name, row in summary.items():
        row["errors"] = sum(r["errors"] for r in next(v for v in variants if v.name == name).rounds)
        row["rps_vs_reverse"] = row["rps"] / summary["reverse"]["rps"]
        if "mitmdump-tls" in summary:
            row["rps_vs_mitmdump_tls"] = row["rps"] / summary["mitmdump-tls"]["rps"]
    print(f"{'variant':14} {'p50 µs':>8} {'p99 µs':>8} {'req/s':>8} {'×reverse':>9} {'×mitm-tls':>10} errors")
    for name, row in summary.items():
        mitm = f"{row['rps_vs_mitmdump_tls']:.2f}" if "rps_vs_mitmdump_tls" in row else "-"
        print(
            f"{name:14} {row['p50_us']:8.0f} {row['p99_us']:8.0f} {row['rps']:8.0f} {row['rps_vs_reverse']:9.2f} "
            f"{mitm:>10} {row['errors']}"
        )
    out = args.out or BENCH / "results" / f"forward-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = {v.name: v.rounds for v in variants}
    out.write_text(
        json.dumps({"rounds": args.rounds, "seconds": args.seconds, "summary": summary, "runs": runs}, indent=2)
    )
    print(f"results: {os.path.relpath(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
