"""Check MCP results against the real MCP Python SDK's strict per-version wire surface.

For tests/e2e/test_lab_probe_strict.py; runs in the mcp 2.3 venv's python: ``lab_strict_results.py FILE``,
FILE a JSON list of ``{"method", "version", "result"}``. ``mcp_types.methods.validate_server_result``
is what the SDK's client judges every answer by once a connection is adopted. Prints a JSON list with one
entry per item: null when valid, else the validation error.
"""

from __future__ import annotations

import json
import sys

from mcp_types.methods import validate_server_result
from pydantic import ValidationError


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        items = json.load(f)
    verdicts: list[str | None] = []
    for item in items:
        try:
            validate_server_result(item["method"], item["version"], item["result"])
            verdicts.append(None)
        except (ValidationError, KeyError, ValueError) as exc:
            verdicts.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(verdicts))


if __name__ == "__main__":
    main()
