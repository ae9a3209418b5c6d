"""A stdio server that floods: COUNT notifications of SIZE bytes, numbered, as fast as the pipe takes them.

``flood_server.py COUNT SIZE [forever]``: prints its pid on stderr first; with ``forever`` it starts
over after COUNT (until killed), otherwise it exits 0 after the last one.
"""

from __future__ import annotations

import os
import sys


def line(n: int, size: int) -> bytes:
    head = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d,"pad":"' % n
    tail = b'"}}\n'
    return head + b"x" * max(0, size - len(head) - len(tail)) + tail


def main(count: int, size: int, forever: bool) -> None:
    os.write(2, b"pid %d\n" % os.getpid())
    batch = 64
    n = 0
    while True:
        for start in range(0, count, batch):
            data = b"".join(line(n + i, size) for i in range(min(batch, count - start)))
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
            n += min(batch, count - start)
        if not forever:
            return


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), len(sys.argv) > 3 and sys.argv[3] == "forever")
