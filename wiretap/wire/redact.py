"""Credential redaction for what goes into a recording or onto a terminal (never for what is forwarded).

A secret becomes ``[redacted:3fa2]``: four hex digits of a hash keyed per recording, so a reader
can tell the same token again from a different one without learning either. What counts as a
secret is the table in ``wiretap.secrets``; the pre-check is derived from that table's anchors.
"""

from __future__ import annotations

import functools
import hmac
import json
import os
import re
from typing import Any
from urllib.parse import unquote

from wiretap.wire.secrets import (
    KEY_FOLLOWED,
    MARK,
    OAUTH_ANCHORS,
    RULES,
    Rule,
    can_be_secret,
    names_password,
    names_secret,
)
from wiretap.wire.token_precheck import may_hold_token_fast

REDACTED = "[redacted]"
"""What wiretap 0.x wrote for every secret; still recognised as already redacted."""

_SCHEME = re.compile(r"(?i)(?:bearer|basic|token)\s+")
_SECRET_GROUPS = ("s", "dq", "sq")


_RULE_ANCHORS = frozenset(anchor for rule in RULES for anchor in rule.anchors)


def _places(text: str, lower: str, rule: Rule) -> list[int]:
    """Where ``rule``'s literals occur; for a key rule, only those followed by "=" or ":" (most mentions
    of "token" are prose)."""
    found: list[int] = []
    for literal in rule.looks_for:
        at = lower.find(literal)
        while at != -1:
            if not rule.key_group or KEY_FOLLOWED.match(text, _word_end(lower, at)) is not None:
                found.append(at)
            at = lower.find(literal, at + 1)
    return sorted(found)


_LETTERS = re.compile(r"[a-z]*")


def _word_end(lower: str, start: int) -> int:
    return _LETTERS.match(lower, start).end()  # type: ignore[union-attr]  # [a-z]* always matches


_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NOT_QUERY_KEY = frozenset("=&#? \t\r\n\"'<>\\")


def _key_start(text: str, found: int, query: bool) -> int:
    """Where the key holding ``found`` starts (keys are at most 80 characters)."""
    start = found
    while start > 0 and found - start < 82:
        char = text[start - 1]
        if (char in _NOT_QUERY_KEY) if query else (char not in _KEY_CHARS):
            break
        start -= 1
    return start


@functools.lru_cache(maxsize=4096)
def _names_secret(key: str) -> bool:
    """``names_secret`` (not for a query), remembered: the keys of JSON messages repeat."""
    return names_secret(key)


def _secret_flag(item: str) -> bool:
    """``--api-key``, ``-password``: an argument whose next one is its value."""
    return item[:1] == "-" and "=" not in item and _names_secret(item)


def is_sensitive_key(key: str) -> bool:
    return names_secret(key)


class Redactor:
    """Redacts with one key: the same secret gets the same mark everywhere in one recording."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else os.urandom(16)

    def mark(self, secret: str) -> str:
        core = _SCHEME.sub("", secret.strip(), count=1)  # "Bearer x" in a header and "x" in a URL: one token
        digest = hmac.new(self._key, core.encode("utf-8", "surrogatepass"), "sha256").hexdigest()
        return f"[redacted:{digest[:4]}]"

    def text(self, text: str) -> tuple[str, int]:
        """Redact free text: token shapes anywhere, and values after secret-naming keys."""
        return self.string(text)

    def string(self, text: str, *, under: str | None = None) -> tuple[str, int]:
        """A string value; ``under`` is the key it sits under, if any."""
        if under is not None and _names_secret(under) and can_be_secret(text, password=names_password(under)):
            return self.mark(text), 1
        if not may_hold_token_fast(text):
            return text, 0
        if text.lstrip()[:1] in ("{", "["):
            redacted = self._json_text(text)
            if redacted is not None:
                return redacted
        return self._rules(text)

    def _json_text(self, text: str) -> tuple[str, int] | None:
        """JSON held in a string (a tool result's text, a JSON log line): redacted as JSON, and
        re-serialized only if it held a secret. None if it is not JSON."""
        try:
            cleaned, count = self.json(json.loads(text))
        except (ValueError, RecursionError):
            return None
        if not count:
            return text, 0
        if "\n" in text.strip():
            return json.dumps(cleaned, ensure_ascii=False, indent=2), count
        compact = '": ' not in text and '", ' not in text
        return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":") if compact else None), count

    def _rules(self, text: str) -> tuple[str, int]:
        lower = text.lower()
        present = {anchor for anchor in _RULE_ANCHORS if anchor in lower}
        places: dict[tuple[str, ...], list[int]] = {}  # where each rule's literals are, until the text changes
        total = 0
        for rule in RULES:
            if not present.isdisjoint(rule.anchors):
                if rule.looks_for not in places:
                    places[rule.looks_for] = _places(text, lower, rule)
                text, count = self._apply(rule, text, places[rule.looks_for])
                if count:
                    total += count
                    lower = text.lower()
                    places.clear()
        return text, total

    def _apply(self, rule: Rule, text: str, places: list[int]) -> tuple[str, int]:
        """Try ``rule`` only where a match could start near its literals (a scan from every character would be slow)."""
        pieces: list[str] = []
        done = 0  # text before this is settled
        for found in places:
            if found < done:
                continue
            if rule.key_group:
                key_start = _key_start(text, found, rule.query)
                starts = range(max(done, key_start - 3), key_start + 1)
            else:
                starts = range(max(done, found - rule.before), found + 1)
            end = min(len(text), found + rule.after)
            match = next((m for at in starts if (m := rule.pattern.match(text, at, end)) and m.end() > found), None)
            replacement = self._replacement(rule, match) if match is not None else None
            if match is not None and replacement is not None:
                pieces += [text[done : match.start()], replacement]
                done = match.end()
        if not pieces:
            return text, 0
        return "".join([*pieces, text[done:]]), len(pieces) // 2

    def _replacement(self, rule: Rule, match: re.Match[str]) -> str | None:
        group = next((g for g in _SECRET_GROUPS if g in match.re.groupindex and match.group(g) is not None), 0)
        secret = match.group(group)
        if rule.key_group:
            key = match.group("key")
            password = rule.name != "colon" and names_password(key)  # "password: see below" is prose
            if not names_secret(key, query=rule.query) or not can_be_secret(secret, password=password):
                return None
        elif rule.check is not None and not rule.check(secret):
            return None
        whole = match.string
        return whole[match.start() : match.start(group)] + self.mark(secret) + whole[match.end(group) : match.end()]

    def json(self, value: Any, *, under: str | None = None) -> tuple[Any, int]:
        """A copy of a JSON value with secrets replaced, and how many were replaced."""
        if isinstance(value, str):
            return self.string(value, under=under)
        if isinstance(value, dict):
            count = 0
            out: dict[str, Any] = {}
            for key, item in value.items():
                out[key], n = self.json(item, under=key)
                count += n
            return out, count
        if isinstance(value, list):
            return self._items(value, under)
        return value, 0

    def _items(self, value: list[Any], under: str | None) -> tuple[list[Any], int]:
        """A list's items; one that follows a secret-naming flag (an ``args`` list is an argv) is a secret."""
        count = 0
        items = []
        after_flag = False
        for item in value:
            if after_flag and isinstance(item, str) and item[:1] != "-" and MARK.search(item) is None:
                cleaned, n = self.mark(item), 1
            else:
                cleaned, n = self.json(item, under=under)
            after_flag = isinstance(item, str) and _secret_flag(item)
            items.append(cleaned)
            count += n
        return items, count

    def header(self, name: str, value: str) -> str:
        if names_secret(name) and value.strip():
            return self.mark(value)
        if name.lower() == "location" and "code=" in value:  # an authorization response: the code is its secret
            return self.url(value, oauth=True)
        return self.text(value)[0]

    def url(self, url: str, *, oauth: bool = False) -> str:
        """A URL or request target: userinfo, secret query parameters and token shapes, also percent-encoded.
        Each query parameter on its own, so that a value never runs into the next one."""
        base, mark, query = url.partition("?")
        if not mark:
            return self._url_part(url)
        first, *rest = query.split("&")
        if "code=" in query and (oauth or any(anchor in url.lower() for anchor in OAUTH_ANCHORS)):
            return "&".join(self._oauth_part(part, at == 0, base) for at, part in enumerate(query.split("&")))
        return "&".join([self._url_part(f"{base}?{first}"), *(self._url_part("&" + part)[1:] for part in rest)])

    def _oauth_part(self, part: str, first: bool, base: str) -> str:
        """One parameter of an authorization callback's query (the code is its secret)."""
        key, sep, value = part.partition("=")
        if key == "code" and sep and can_be_secret(unquote(value)):
            shown = f"code={self.mark(unquote(value))}"
        else:
            shown = self._url_part("&" + part)[1:]
        return self._url_part(base + "?") + shown if first else shown

    def _url_part(self, part: str) -> str:
        if "%" not in part:
            return self.text(part)[0]
        decoded, count = self.text(unquote(part))
        return decoded if count else part

    def query(self, query: str) -> str:
        """A query string without its ``?``."""
        return self.url("?" + query)[1:]

    def argv(self, argv: list[str]) -> list[str]:
        """Token shapes and assignments in any argument, and the value after a secret-naming flag."""
        return self._items(argv, None)[0]


_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[A-Z ]{0,20}-----")


class LineRedactor:
    """Redacts a stream one line at a time (a server's stderr), remembering what spans lines: a PEM
    private key written line by line is hidden whole, not only its BEGIN line."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redactor = redactor or _DEFAULT
        self._in_key = False

    def line(self, text: str) -> str:
        if self._in_key:
            self._in_key = _PEM_END.search(text) is None
            return self._redactor.mark(text) if text.strip() else text
        begin = _PEM_BEGIN.search(text)
        if begin is not None and _PEM_END.search(text, begin.end()) is None:
            self._in_key = True
        return self._redactor.text(text)[0]


_DEFAULT = Redactor()


def redact_text(text: str) -> tuple[str, int]:
    return _DEFAULT.text(text)


def redact_json(value: Any) -> tuple[Any, int]:
    """Return a copy of a JSON value with credentials replaced, and how many were replaced."""
    return _DEFAULT.json(value)


def redact_argv(argv: list[str]) -> list[str]:
    """Redact token-shaped arguments and the value after a credential-named flag."""
    return _DEFAULT.argv(argv)


def redact_header(name: str, value: str) -> str:
    return _DEFAULT.header(name, value)


def redact_url(url: str) -> str:
    return _DEFAULT.url(url)


def redact_query(query: str) -> str:
    return _DEFAULT.query(query)
