"""``wiretap otel``: push recordings, session folders and folders of them to an OTLP endpoint."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiretap.errors import BadInput, ExitStatus
from wiretap.otel.endpoint import Target, metrics_target, metrics_wanted, target_from
from wiretap.otel.resource import resource_attributes
from wiretap.otel.spans import AttributeValue
from wiretap.recording.folders import NotASession, is_session
from wiretap.recording.migrate import UnsupportedFormat
from wiretap.recording.reader import NotARecording

if TYPE_CHECKING:
    from wiretap.otel.metrics import Durations
    from wiretap.otel.push import Sent


def sources(paths: tuple[Path, ...]) -> Iterator[Path]:
    """Each recording and session folder named, or found under a folder named (a session whole)."""
    for path in paths:
        if not path.is_dir() or is_session(path):
            yield path
            continue
        sessions = sorted(p.parent for p in path.rglob("manifest.json") if is_session(p.parent))
        yield from sessions
        for file in sorted(path.rglob("*.jsonl")):
            if not any(file.is_relative_to(s) for s in sessions):
                yield file


class Progress:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total: int) -> None:
        self._bar = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress as Bar

            self._bar = Bar(transient=True, console=Console(stderr=True))
            self._bar.start()
            self._task = self._bar.add_task("sending", total=total)

    def advance(self, name: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=name[-40:])

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def push_all(
    found: list[Path], target: Target, resource: dict[str, AttributeValue], durations: Durations | None = None
) -> tuple[Sent, list[str]]:
    from wiretap.otel.push import Sent, Unreachable, send
    from wiretap.otel.sources import iter_spans_of

    total, problems = Sent(), []
    progress = Progress(len(found))
    try:
        for path in found:
            try:
                total.add(send(target, iter_spans_of(path), resource, durations))
            except (NotARecording, NotASession, UnsupportedFormat) as exc:
                problems.append(str(exc))
            except Unreachable:
                raise
            except OSError as exc:
                problems.append(f"{path}: {exc.strerror or exc}")
            progress.advance(path.name)
    finally:
        progress.stop()
    return total, problems


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--endpoint",
    metavar="URL",
    help="OTLP/HTTP endpoint (default: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else http://localhost:4318).",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="K=V",
    help="A request header, e.g. an API key (adds to OTEL_EXPORTER_OTLP_HEADERS).",
)
@click.option(
    "--service-name", metavar="NAME", help="service.name of the spans (default: OTEL_SERVICE_NAME, else wiretap)."
)
@click.option(
    "--resource-attributes", metavar="K=V,…", help="More resource attributes (adds to OTEL_RESOURCE_ATTRIBUTES)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    help="Seconds per request (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10).",
)
@click.option(
    "--metrics", "with_metrics", is_flag=True,
    help="Also send the MCP duration histograms to /v1/metrics (also OTEL_METRICS_EXPORTER=otlp).",
)  # fmt: skip
def otel(
    paths: tuple[Path, ...], endpoint: str | None, headers: tuple[str, ...], service_name: str | None,
    resource_attributes: str | None, timeout: float | None, with_metrics: bool = False,
) -> None:  # fmt: skip
    """Send recordings to an OpenTelemetry backend as traces (OTLP over HTTP).

    PATHS are recordings, session folders, or folders holding them (searched recursively). Exits 0
    when every span was accepted; 1 when a file was skipped or the endpoint refused spans; 2 for a bad
    setting (or without wiretap[otel]); 3 when the endpoint cannot be reached or answers with an error.
    """
    target = target_from(os.environ, endpoint=endpoint, headers=headers, timeout=timeout)
    resource = _resource(service_name, resource_attributes)
    found = list(sources(paths))
    if not found:
        raise BadInput(f"no recordings or session folders in {', '.join(map(str, paths))}")
    durations = None
    if metrics_wanted(os.environ, with_metrics):
        from wiretap.otel.metrics import Durations

        durations = Durations()
    sent, problems = push_all(found, target, resource, durations)
    for problem in problems:
        click.echo(f"wiretap: skipped {problem}", err=True)
    click.echo(_summary(sent, len(found) - len(problems), len(found), target.url), err=True)
    points = _push_metrics(metrics_target(os.environ, target), durations, resource) if durations else None
    if problems or sent.rejected or (points is not None and points.rejected):
        sys.exit(int(ExitStatus.FAILED))


def _push_metrics(target: Target, durations: Durations, resource: dict[str, AttributeValue]) -> Sent:
    from wiretap.otel.push import send_metrics

    points = send_metrics(target, durations, resource)
    line = f"wiretap: sent {points.accepted} histogram data point(s) to {target.url}"
    if points.rejected:
        line += f"; the endpoint refused {points.rejected}" + "".join(f" ({m})" for m in points.messages)
    click.echo(line, err=True)
    return points


def _resource(service_name: str | None, attributes: str | None) -> dict[str, AttributeValue]:
    return resource_attributes(os.environ, service_name=service_name, attributes=attributes)


def _summary(sent: Sent, read: int, found: int, url: str) -> str:
    line = f"wiretap: sent {sent.accepted} spans from {read} of {found} recording(s) to {url}"
    if sent.rejected:
        line += f"; the endpoint refused {sent.rejected}" + (f" ({'; '.join(sent.messages)})" if sent.messages else "")
    return line
