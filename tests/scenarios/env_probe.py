"""Says how it was started, then becomes the demo MCP server. ``python env_probe.py LOG LABEL [ARGS...]``.

Appends one JSON line to LOG (``label``, the other arguments, the working directory and the
``CLAUDE_PLUGIN_*`` variables), so a test can compare how a client started a server with and without
wiretap in between.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    log, label, *args = sys.argv[1:]
    env = {k: v for k, v in os.environ.items() if k.startswith("CLAUDE_PLUGIN_")}
    with open(log, "a") as f:
        f.write(json.dumps({"label": label, "args": args, "cwd": os.getcwd(), "env": env}) + "\n")
    os.execv(sys.executable, [sys.executable, "-m", "wiretap.demo.server"])


if __name__ == "__main__":
    main()
