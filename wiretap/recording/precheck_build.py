"""Building the redaction pre-check's Hyperscan database in a child process, for the recorder.

Hyperscan's compiler is several MiB of code that stays resident in a process that ran it, and the
recorder's peak memory is budgeted: a forked child compiles and serializes the database, and the
recorder only loads it.
"""

from __future__ import annotations

import contextlib
import os

from wiretap.wire.token_precheck import serialized_database, use_built_apart


def build_precheck_apart() -> None:
    """Build the pre-check's database in a child process, to be loaded here. Call it before any thread
    starts (it forks); where it cannot fork or Hyperscan is missing, the database is compiled on first use."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return
    try:
        read, write = os.pipe()
    except OSError:
        return
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return
    if pid == 0:  # the child: whatever happens, it ends here, and an empty pipe means "compile it yourself"
        try:
            os.close(read)
            view = memoryview(serialized_database() or b"")
            while view:
                view = view[os.write(write, view) :]
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)
    os.close(read)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    use_built_apart(b"".join(chunks) or None)
