"""The one table of what a secret looks like: key names, token shapes, and where secrets sit in text.

Every rule carries anchors: lower-case literals, at least one of which occurs (lower-cased) in any
text the rule matches. The redactor's fast pre-check is derived from these anchors alone, so a
rule cannot be added without the pre-check knowing about it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

# Key names, as sequences of lower-case words: "x_api_key", "xApiKey" and "X-API-KEY" are all
# ("x", "api", "key"). A key names a secret when its words end with one of these.
SECRET_KEYS = (
    "authorization",
    "proxy authorization",
    "cookie",
    "api key",
    "access key",
    "account key",
    "private key",
    "secret key",
    "signing key",
    "encryption key",
    "master key",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
    "mcp session id",
    "session key",
    "code verifier",
    "dpop",
)
# ...unless they end with one of these (MCP progress tokens and page cursors are not credentials).
HARMLESS_KEYS = ("progress token", "page token", "next token", "continuation token", "max token", "cancel token")
# Keys that name a secret in a URL query only ("signature" in JSON is usually a function's).
QUERY_ONLY_KEYS = ("sig", "signature", "x amz credential", "x amz security token")
# A value under a key with one of these endings is a secret even when it reads like prose.
PASSWORD_KEYS = ("password", "passwd", "passphrase")

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def key_words(key: str) -> tuple[str, ...]:
    return tuple(word.lower() for word in _WORD.findall(key))


def _spellings(keys: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """Each key as words, and as one word ("apikey", "ACCESSTOKEN" are one word each)."""
    out: set[tuple[str, ...]] = set()
    for key in keys:
        words = tuple(key.split())
        out.add(words)
        out.add(("".join(words),))
    return frozenset(out)


_SECRET = _spellings(SECRET_KEYS)
_HARMLESS = _spellings(HARMLESS_KEYS)
_QUERY_SECRET = _spellings(QUERY_ONLY_KEYS)
_PASSWORD = _spellings(PASSWORD_KEYS)


def _ends_with(words: tuple[str, ...], endings: frozenset[tuple[str, ...]]) -> bool:
    return any(words[-n:] in endings for n in range(1, min(len(words), 4) + 1))


def names_secret(key: str, *, query: bool = False) -> bool:
    words = key_words(key)
    if not words or _ends_with(words, _HARMLESS):
        return False
    return _ends_with(words, _SECRET) or (query and _ends_with(words, _QUERY_SECRET))


def names_password(key: str) -> bool:
    return _ends_with(key_words(key), _PASSWORD)


def _anchor(key: str) -> str:
    # "api key", "access key", "secret key"...: one scan for "key" serves them all ("id" is everywhere)
    words = key.split()
    return words[-2] if words[-1] == "id" else words[-1]


KEY_ANCHORS = tuple(sorted({_anchor(k) for k in SECRET_KEYS + QUERY_ONLY_KEYS}))
OAUTH_ANCHORS = ("grant_type", "state=", "redirect", "callback")
"""What tells an OAuth token request or an authorization response, where ``code`` is a secret."""

# What a value under a secret-naming key must not be to be redacted.
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LITERAL = frozenset({"true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off"})
_PROSE = re.compile(r"[A-Za-z]+(?:[ ,;:!?.'()-]+[A-Za-z]+)+[.!?]?")
_AUTH_SCHEME = re.compile(r"(?i)(?:bearer|basic|token|digest|negotiate|apikey|aws4-hmac-sha256)\s")
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>|\*+|x{3,}|X{3,}|\.\.\.|…")
MARK = re.compile(r"\[redacted(?::[0-9a-f]{4})?\]")


def can_be_secret(value: str, *, password: bool = False) -> bool:
    """Whether a string under a secret-naming key can be one: not a number, flag, placeholder or prose."""
    text = value.strip()
    if not text or MARK.search(text) or _PLACEHOLDER.fullmatch(text):
        return False
    if text.lower() in _LITERAL or _NUMBER.fullmatch(text):
        return False
    if password or _AUTH_SCHEME.match(text):
        return True
    return " " not in text or not _PROSE.fullmatch(text)


def looks_random(token: str) -> bool:
    """Token-like: letters and digits mixed, or both cases over a long run (not a word or a slug)."""
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    mixed_case = any(c.isupper() for c in token) and any(c.islower() for c in token)
    return (has_digit and has_alpha) or (mixed_case and len(token) >= 16)


def _basic_credentials(token: str) -> bool:
    try:
        return b":" in base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


def _bearer(token: str) -> bool:
    return looks_random(token) or any(c in token for c in "._~+/=-")


def _userinfo(info: str) -> bool:
    return ":" in info or looks_random(info)


@dataclass(frozen=True)
class Rule:
    """A regex whose group ``s`` is the secret (the whole match if it has none)."""

    name: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    check: Callable[[str], bool] | None = None
    """Applied to the secret; a key rule's check gets the key instead (see ``key_group``)."""
    key_group: bool = False
    """The rule matches ``key`` and ``s``: it redacts when ``key`` names a secret and ``s`` can be one."""
    query: bool = False
    finds: tuple[str, ...] = ()
    """Where to look (lower-case literals, the anchors unless given): the regex runs only near them."""
    before: int = 8
    """How far before a found literal a match can start..."""
    after: int = 8192
    """...and how far after it a match can end."""

    @property
    def looks_for(self) -> tuple[str, ...]:
        return self.finds or self.anchors


_B = r"(?<![A-Za-z0-9_-])"  # a token starts at a token-like boundary...
_E = r"(?![A-Za-z0-9_-])"  # ...and ends at one


def _token(name: str, anchors: str, body: str, check: Callable[[str], bool] | None = None) -> Rule:
    return Rule(name, re.compile(_B + f"(?P<s>{body})" + _E), tuple(anchors.split()), check)


TOKEN_RULES = (
    _token("openai", "sk-", r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20,}", looks_random),
    _token("stripe", "k_live_ k_test_", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    _token("stripe-webhook", "whsec_", r"whsec_[A-Za-z0-9+/=]{20,}"),
    _token("github", "ghp_ gho_ ghu_ ghs_ ghr_", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _token("github-fine-grained", "github_pat_", r"github_pat_[A-Za-z0-9_]{40,}"),
    _token("gitlab", "glpat-", r"glpat-[A-Za-z0-9_-]{20,}"),
    _token("slack", "xox", r"xox[abposre]-[A-Za-z0-9-]{10,}", looks_random),
    _token("slack-app", "xapp-", r"xapp-\d-[A-Za-z0-9-]{10,}"),
    _token("aws-access-key-id", "akia asia aroa aida", r"(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16}"),
    _token("google-api", "aiza", r"AIza[0-9A-Za-z_-]{35}"),
    _token("google-oauth", "ya29.", r"ya29\.[0-9A-Za-z_-]{20,}"),
    _token("google-client-secret", "gocspx-", r"GOCSPX-[A-Za-z0-9_-]{20,}"),
    _token("jwt", "eyj", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _token("npm", "npm_", r"npm_[A-Za-z0-9]{36}"),
    _token("pypi", "pypi-", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _token("huggingface", "hf_", r"hf_[A-Za-z0-9]{30,}", looks_random),
    _token("sendgrid", "sg.", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _token("shopify", "shpat_ shpca_ shppa_ shpss_", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _token("digitalocean", "_v1_", r"do[opr]_v1_[a-f0-9]{64}"),
    _token("databricks", "dapi", r"dapi[a-f0-9]{32}"),
    _token("mailgun", "key-", r"key-[0-9a-f]{32}"),
    _token("atlassian", "atatt", r"ATATT[A-Za-z0-9_=-]{30,}"),
    _token("square", "sq0", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    _token("linear", "lin_api_", r"lin_api_[A-Za-z0-9]{30,}"),
    _token("age", "age-secret-key-", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    Rule(
        "bearer",
        re.compile(r"(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{8,4096})(?![A-Za-z0-9._~+/=-])"),
        ("bearer",),
        _bearer,
    ),
    Rule(
        "basic",
        re.compile(r"(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])"),
        ("basic",),
        _basic_credentials,
    ),
)


def _endings(keys: tuple[str, ...]) -> set[str]:
    return {" ".join(k.split()[-2:]) if k.endswith(" id") else k.split()[-1] for k in keys}


def _key_pattern(keys: tuple[str, ...], chars: str) -> str:
    """A key ending the way a secret-naming key ends (``names_secret`` still decides)."""
    endings = _endings(keys)
    words = sorted((re.escape(e).replace(r"\ ", "[-_. ]?") for e in endings), key=len, reverse=True)
    return rf"(?P<key>{chars}{{0,80}}?(?i:{'|'.join(words)}))"


_KEY = _key_pattern(SECRET_KEYS, "[A-Za-z0-9_.-]")
_KEY_WORDS = tuple(sorted({e.split()[-1] for e in _endings(SECRET_KEYS)}))
_QUERY_KEY_WORDS = tuple(sorted({e.split()[-1] for e in _endings(SECRET_KEYS + QUERY_ONLY_KEYS)}))
# What follows a key a key rule can match: closing quotes, blanks, then "=" or ":".
KEY_FOLLOWED = re.compile(r"""[\\"']{0,3}\s{0,8}[=:]""")
_QUERY_KEY = _key_pattern(SECRET_KEYS + QUERY_ONLY_KEYS, r"[^=&#?\s\"'<>\\]")
CONTEXT_RULES = (
    Rule(
        "pem-private-key",
        re.compile(r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z ]{0,20}-----|\Z)", re.S),
        ("-----begin",),
        before=0,
        after=20_000,
    ),
    Rule(
        "url-userinfo",
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://(?P<s>[^\s/?#@\"'<>\\]{1,256})@"),
        ("@",),
        _userinfo,
        finds=("://",),
        before=21,
        after=260,
    ),
    Rule(
        "url-query",
        re.compile(r"[?&;]" + _QUERY_KEY + r"=(?P<s>[^=&#?\s\"'<>\\]{1,1024})"),
        KEY_ANCHORS,
        key_group=True,
        query=True,
        finds=_QUERY_KEY_WORDS,
        before=100,
        after=1100,
    ),
    # An OAuth authorization code: "code" is too common a key to be a secret everywhere, so only in a
    # token request's form ("grant_type=") or an authorization response (a redirect to a callback).
    Rule(
        "oauth-code",
        re.compile(r"(?<![A-Za-z0-9_.%-])code=(?P<s>[^=&#?,;\s\"'<>\\]{1,2048})"),
        OAUTH_ANCHORS,
        can_be_secret,
        finds=("code=",),
        before=0,
        after=2100,
    ),
    Rule(
        "json-pair",
        re.compile(r'"' + _KEY + r'\\*"\s*:\s*\\*"(?P<s>(?:[^"\\\n]|\\[^"\n]){1,4096})\\*"'),  # also JSON in JSON
        KEY_ANCHORS,
        key_group=True,
        finds=_KEY_WORDS,
        before=100,
        after=8400,
    ),
    Rule(
        "assignment",
        re.compile(
            r"(?<![A-Za-z0-9_.$-])-{0,2}"
            + _KEY
            + r"""[ \t]*=[ \t]*(?:\\?"(?P<dq>[^"\\\n]{0,1024})\\?"|'(?P<sq>[^'\n]{0,1024})'"""
            + r"""|(?P<s>[^\s"'&;,<>=\\]{1,1024}))"""
        ),
        KEY_ANCHORS,
        key_group=True,
        finds=_KEY_WORDS,
        before=100,
        after=1100,
    ),
    Rule(
        "colon",
        re.compile(r"(?<![A-Za-z0-9_.-])" + _KEY + r"""["']?[ \t]*:[ \t]*["']?(?P<s>[^\s"',{}][^\r\n"',{}]{0,255})"""),
        KEY_ANCHORS,
        key_group=True,
        finds=_KEY_WORDS,
        before=100,
        after=1100,
    ),
)

RULES = TOKEN_RULES + CONTEXT_RULES
_ALL_ANCHORS = {anchor for rule in RULES for anchor in rule.anchors}
# An anchor that holds another is implied by it: the pre-check scans for the others only.
ANCHORS = tuple(sorted(a for a in _ALL_ANCHORS if not any(b != a and b in a for b in _ALL_ANCHORS)))
# Anchors holding one of these rarer characters are looked for only when the character occurs at all.
PIVOTS = "@_.-"
PIVOTED = {pivot: tuple(a for a in ANCHORS if pivot in a) for pivot in PIVOTS}
PLAIN_ANCHORS = tuple(a for a in ANCHORS if not any(p in a for p in PIVOTS))
# A JSON text can spell any ASCII character as an escape, hiding an anchor from a scan of the raw text.
ESCAPED_ASCII = re.compile(r"\\u00[2-7][0-9a-fA-F]")
