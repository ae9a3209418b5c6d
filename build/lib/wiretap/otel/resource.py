"""The OTLP resource: ``service.name`` and the user's attributes, from flags over the standard environment
(``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from wiretap.errors import BadInput
from wiretap.otel.spans import AttributeValue

DEFAULT_SERVICE = "wiretap"


class BadSetting(BadInput):
    """A setting that cannot be parsed; the message names it."""


def parse_pairs(text: str, what: str) -> dict[str, str]:
    """W3C-Baggage-like ``key=value,key2=value2`` with percent-encoded values, as the OTel spec has it."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadSetting(f"{what}: {item.strip()!r} is not key=value")
        pairs[unquote(key.strip())] = unquote(value.strip())
    return pairs


def resource_attributes(
    env: Mapping[str, str], *, service_name: str | None = None, attributes: str | None = None
) -> dict[str, AttributeValue]:
    resource: dict[str, AttributeValue] = {}
    resource.update(parse_pairs(env.get("OTEL_RESOURCE_ATTRIBUTES", ""), "OTEL_RESOURCE_ATTRIBUTES"))
    if attributes:
        resource.update(parse_pairs(attributes, "--resource-attributes"))
    name = service_name or env.get("OTEL_SERVICE_NAME") or str(resource.get("service.name") or DEFAULT_SERVICE)
    resource["service.name"] = name
    return resource
