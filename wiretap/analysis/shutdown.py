"""How the client stopped its server, as a report verdict (from a profile's shutdown sequence)."""

from __future__ import annotations

from wiretap.analysis.behaviour import Shutdown
from wiretap.analysis.model import ShutdownVerdict


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def shutdown_verdict(shutdown: Shutdown) -> ShutdownVerdict:
    steps = shutdown.steps
    if not steps:
        verdict = "The recording shows no shutdown: the client neither closed the server's stdin nor signalled it."
    else:
        client = [s for s in steps if not s.what.startswith("server ")]
        sequence = ", then ".join(
            s.what if n == 0 else f"{s.what} {_ms(s.after - client[n - 1].after)} later" for n, s in enumerate(client)
        )
        verdict = f"How the client left: {sequence or 'nothing of its own'}."
        if shutdown.server is not None:
            ended = next(s for s in steps if s.what.startswith("server "))
            was = "was " if shutdown.server.startswith("killed") else ""
            verdict += f" The server {was}{shutdown.server}, {_ms(ended.after)} after the first step."
        if shutdown.orphaned:
            verdict += " It outlived the client (left orphaned)."
    if not shutdown.recording_complete:
        verdict += " The recording stops before its end: the recorder was killed (SIGKILL?) before it could finish."
    return ShutdownVerdict(
        verdict,
        [f"+{_ms(s.after)}: {s.what}" for s in steps],
        order=[s.what for s in steps],
        server=shutdown.server,
        orphaned=shutdown.orphaned,
        recording_complete=shutdown.recording_complete,
    )
