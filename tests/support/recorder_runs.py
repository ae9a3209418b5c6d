"""The recorder process fed a batch of relay records, and the bytes it wrote."""

from __future__ import annotations

import os
from pathlib import Path

from wiretap.recording import channel
from wiretap.recording.channel import Op, RecordDecoder
from wiretap.recording.sink import Sink
from wiretap.recording.spec import StreamSpec
from wiretap.recording.writer import RecordingWriter


def record(tmp_path: Path, chunks: list[bytes], *, redacted: bool = True, name: str = "rec.jsonl") -> bytes:
    """Chunks through a Sink (the recorder process's code, in this process), and the file it wrote."""
    records = [
        channel.encode_json(Op.HEADER, 0, 0.0, {"kind": "header", "redacted": redacted}),
        channel.encode_json(Op.OPEN, 1, 0.0, StreamSpec("line", {"dir": "s2c"}).to_dict()),
        *(channel.encode(Op.DATA, 1, 0.001 * (n + 1), chunk) for n, chunk in enumerate(chunks)),
        channel.encode(Op.CLOSED, 1, 0.001 * (len(chunks) + 1)),
    ]
    path = tmp_path / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    sink = Sink(RecordingWriter(fd, path))
    for rec in RecordDecoder().feed(b"".join(records)):
        sink.record_safely(rec)
    sink.writer.flush()
    os.close(fd)
    return path.read_bytes()
