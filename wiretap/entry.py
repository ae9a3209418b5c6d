"""The ``wiretap`` command's entry point: an unsupported platform is refused before anything POSIX-only is imported."""

from __future__ import annotations

import sys

from wiretap.errors import ExitStatus


def main() -> None:
    if sys.platform == "win32":
        sys.stderr.write("Error: wiretap does not run on Windows yet (Linux and macOS only)\n")
        sys.exit(int(ExitStatus.UNSUPPORTED))
    from wiretap.cli import main as cli_main

    cli_main()
