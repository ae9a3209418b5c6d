"""Shared fixtures. Real third-party peers are built on first use by tests/support/peers.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # tests/replay/test_record_modes.py runs sample projects
TESTS = Path(__file__).resolve().parent

# A suite started as a background job inherits SIGINT ignored, and so would every wiretap it spawns (an
# ignored signal survives exec; Python then installs no KeyboardInterrupt handler): the Ctrl-C tests
# would wait forever. A handler of our own is reset to the default in each child instead.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Compile wiretap and the test helpers once. The suite starts hundreds of Python processes (taps,
    recorders, replays, scenario peers); where PYTHONDONTWRITEBYTECODE is set (CI here), none of them
    writes its bytecode, so each one compiled every module it imported again; existing bytecode is
    still read."""
    import compileall

    import wiretap

    for folder in (Path(wiretap.__file__).parent, TESTS):
        with contextlib.suppress(OSError):
            compileall.compile_dir(folder, quiet=2)


@pytest.fixture
def wiretap_cmd() -> list[str]:
    """The wiretap command line as a client would run it (a separate process)."""
    return [sys.executable, "-m", "wiretap"]


@pytest.fixture(scope="session")
def claude_code_bin() -> Path:
    """The real Claude Code binary (PEERS.md), installed under .peers/ on first use."""
    from support import peers

    return peers.claude_code()


@pytest.fixture(scope="session")
def mcp_sdk_python() -> Path:
    """The python of a venv holding the real MCP Python SDK 2.3.0 (PEERS.md), built on first use."""
    from support import peers

    return peers.mcp_sdk()


@pytest.fixture(scope="session")
def a2a_sdk_python() -> Path:
    """The python of a venv holding the real a2a-sdk 1.3.0 with uvicorn (PEERS.md), built on first use."""
    from support import peers

    return peers.a2a_sdk()


@pytest.fixture(scope="session")
def fastmcp_tasks_python() -> Path:
    """The python of a venv holding fastmcp 4.1.4 + fastmcp-tasks 4.1.4 (PEERS.md), built on first use."""
    from support import peers

    return peers.fastmcp_tasks()


@pytest.fixture(scope="session")
def server_everything_bin() -> Path:
    """The reference "everything" server's executable (npm, PEERS.md), installed on first use."""
    from support import peers

    return peers.server_everything()


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The MCP TypeScript SDK 1.32.2's node_modules (npm, PEERS.md), installed on first use; skipped
    outside CI where node or npm cannot install it."""
    from support import peers

    try:
        if shutil.which("node") is None:
            raise RuntimeError("node is not on PATH")
        return peers.ts_sdk()
    except (RuntimeError, OSError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the MCP TypeScript SDK cannot be installed here: {exc}")


@pytest.fixture(scope="session")
def node_24() -> Path:
    """A Node 24 binary (npm ``node-<platform>-<arch>``): fetch with proxy variables needs it; skipped outside
    CI where npm cannot install it."""
    from support import peers

    try:
        if shutil.which("npm") is None:
            raise RuntimeError("npm is not on PATH")
        return peers.node_24()
    except (RuntimeError, OSError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"Node 24 cannot be installed here: {exc}")
