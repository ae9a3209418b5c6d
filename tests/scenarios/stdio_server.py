"""Scenario stdio servers that misbehave on purpose, with known truth. ``python stdio_server.py MODE``.

Modes:
  answer       answers every JSON-RPC request with {"echo": <params>}; exits 0 on end of input
  one-and-bye  answers the first request, says "bye" on stderr and exits 0
  crash        answers the first request, writes half a line, and exits with code 3
  segfault     answers the first request, then kills itself with SIGSEGV
  on-sigint    prints its pid to stderr, waits; exits 0 on SIGINT, saying so on stderr
  stubborn     prints its pid, ignores SIGINT, dies on SIGTERM (what Claude Code's escalation meets)
  sleeper      prints its pid and sleeps forever, ignoring end of input
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def answer_lines(limit: int | None = None) -> None:
    answered = 0
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request.get("params")}}))
        sys.stdout.write("\n")
        sys.stdout.flush()
        answered += 1
        if limit is not None and answered >= limit:
            return


def wait_forever() -> None:
    while True:
        time.sleep(3600)


def main(mode: str) -> None:
    if mode == "answer":
        answer_lines()
    elif mode == "one-and-bye":
        answer_lines(limit=1)
        say("bye")
    elif mode == "crash":
        answer_lines(limit=1)
        sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/mess')
        sys.stdout.flush()
        os._exit(3)
    elif mode == "segfault":
        answer_lines(limit=1)
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "on-sigint":
        signal.signal(signal.SIGINT, lambda *_: (say("got SIGINT, bye"), sys.exit(0)))
        say(f"pid {os.getpid()}")
        wait_forever()
    elif mode == "stubborn":
        signal.signal(signal.SIGINT, lambda *_: say("ignoring SIGINT"))
        say(f"pid {os.getpid()}")
        wait_forever()
    elif mode == "sleeper":
        say(f"pid {os.getpid()}")
        wait_forever()
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1])
