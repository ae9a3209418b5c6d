"""Writes secrets.jsonl: fake secrets of real shapes, each in the context it is usually found in.

Every value is random (seeded, so the file is stable); none is a real credential. Rerun after
adding a shape: ``python tests/corpora/make_secrets.py``.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

_R = random.Random(11)
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
DIGITS = "0123456789"


def rnd(n: int, alphabet: str = ALNUM) -> str:
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        s = "".join(_R.choice(alphabet) for _ in range(n))
        if not mixed or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
            return s


ROWS: list[dict[str, str]] = []


def add(shape: str, context: str, secret: str, shown: str | None = None) -> None:
    text = context.replace("{}", secret)
    ROWS.append({"shape": shape, "text": text, "secret": shown or secret})


def build() -> None:
    add("openai-legacy", "key {} in use", "sk-" + rnd(48))
    add("openai-project", "key {} in use", "sk-proj-" + rnd(64, URLSAFE))
    add("anthropic", "using {}", "sk-ant-api03-" + rnd(80, URLSAFE))
    add("stripe-live", "stripe {}", "sk_live_" + rnd(24))
    add("stripe-restricted", "stripe {}", "rk_live_" + rnd(24))
    add("stripe-test", "stripe {}", "sk_test_" + rnd(24))
    add("stripe-webhook", "webhook secret {}", "whsec_" + rnd(32))
    add("github-pat", "push with {}", "ghp_" + rnd(36))
    add("github-oauth", "{}", "gho_" + rnd(36))
    add("github-app", "({})", "ghs_" + rnd(36))
    add("github-fine-grained", "pat {}", "github_pat_" + rnd(22) + "_" + rnd(59))
    add("gitlab", "gitlab {}", "glpat-" + rnd(20))
    add("slack-bot", "slack {}", "xoxb-" + rnd(11, DIGITS) + "-" + rnd(12, DIGITS) + "-" + rnd(24))
    add("slack-user", "slack {}", "xoxp-" + rnd(11, DIGITS) + "-" + rnd(24))
    add("slack-app", "{}", "xapp-1-" + rnd(11, UPPER) + "-" + rnd(30))
    add("aws-access-key-id", "id={}", "AKIA" + rnd(16, UPPER))
    add("aws-session-key-id", "id {}", "ASIA" + rnd(16, UPPER))
    add("google-api", "maps {}", "AIza" + rnd(35, URLSAFE))
    add("google-oauth", "{}", "ya29." + rnd(60, URLSAFE))
    add("google-client-secret", "{}", "GOCSPX-" + rnd(28, URLSAFE))
    payload = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"A"}').decode().rstrip("=")
    add("jwt", "session {} ok", "eyJhbGciOiJIUzI1NiJ9." + payload + "." + rnd(43, URLSAFE))
    add("npm", "//registry.npmjs.org/:_authToken={}", "npm_" + rnd(36))
    add("pypi", "twine {}", "pypi-AgEIcHlwaS5vcmc" + rnd(60, URLSAFE))
    add("huggingface", "hub {}", "hf_" + rnd(34))
    add("sendgrid", "mail {}", "SG." + rnd(22, URLSAFE) + "." + rnd(43, URLSAFE))
    add("shopify", "{}", "shpat_" + rnd(32, HEX))
    add("digitalocean", "{}", "dop_v1_" + rnd(64, HEX))
    add("databricks", "{}", "dapi" + rnd(32, HEX))
    add("mailgun", "{}", "key-" + rnd(32, HEX))
    add("atlassian", "{}", "ATATT3xFfGF0" + rnd(40))
    add("square", "{}", "sq0atp-" + rnd(22))
    add("linear", "{}", "lin_api_" + rnd(40))
    add("age", "{}", "AGE-SECRET-KEY-1" + rnd(58, UPPER))
    add("bearer", "Authorization: Bearer {}", rnd(24))
    add("bearer-lower", "auth bearer {} sent", rnd(30, URLSAFE + "."))
    add("basic", "Authorization: Basic {}", base64.b64encode(b"dbuser:" + rnd(12).encode()).decode())
    add("url-userinfo", "https://dbuser:{}@db.example.com/x", rnd(14))
    add("url-userinfo-postgres", "postgres://app:{}@10.0.0.5:5432/db", rnd(14))
    add("url-query-api-key", "https://api.example.com/v1?api_key={}&page=2", rnd(20))
    add("url-query-access-token", "GET /cb?state=1&access_token={} done", rnd(20))
    add("url-query-sig", "https://acct.blob.core.windows.net/c/b?sv=2020&sig={}", rnd(24))
    add("env-api-key", "OPENAI_API_KEY={} python app.py", rnd(16))
    add("env-password-quoted", 'DB_PASSWORD="{}"', rnd(16))
    add("env-token-single-quoted", "export GITHUB_TOKEN='{}'", rnd(16))
    add("aws-secret-access-key", "aws_secret_access_key = {}", rnd(40, B64))
    add("aws-secret-access-key-env", "AWS_SECRET_ACCESS_KEY={}", rnd(40, B64))
    add("argv-token-flag", "--token={}", rnd(16))
    add("argv-api-key-flag", "--api-key={}", rnd(16))
    add("json-api-key", '{"api_key": "{}"}', rnd(16))
    add("json-x-api-key", '{"x_api_key":"{}"}', rnd(16))
    add("json-set-cookie", '{"set_cookie": "sid={}; Path=/"}', rnd(16))
    add("json-client-secret", '{"clientSecret": "{}"}', rnd(16))
    add("json-password", '{"password": "{}"}', rnd(16))
    nested = rnd(16)
    add("json-in-json", json.dumps({"result": json.dumps({"access_token": nested})}), nested)
    add("log-password", "login failed password: {}", rnd(16))
    add("header-x-api-key", "X-Api-Key: {}", rnd(16))
    add("header-mcp-session-id", "mcp-session-id: {}", rnd(32, HEX))
    add("header-cookie", "Cookie: session={}", rnd(16))
    lines = [rnd(64, B64) for _ in range(3)]
    add("pem-rsa", "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----", "\n".join(lines), lines[1])
    lines = [rnd(70, B64) for _ in range(3)]
    add(
        "pem-openssh",
        "key: -----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        "\n".join(lines),
        lines[0],
    )
    body = rnd(64, B64)
    add("pem-escaped-newlines", "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----", body)
    redirect = "redirect_uri=http%3A%2F%2Flocalhost%3A8090%2Fcallback"
    token_request = "grant_type=authorization_code&code={}&" + redirect + "&client_id=c1"
    add("oauth-code-in-token-request", token_request, rnd(32, URLSAFE))
    add("oauth-code-verifier", "grant_type=authorization_code&code_verifier={}&client_id=c1", rnd(43, URLSAFE))
    add("oauth-code-in-callback", "http://localhost:8090/callback?code={}&state=af0ifjsldkj", rnd(24, URLSAFE))
    add("oauth-refresh-token", "grant_type=refresh_token&refresh_token={}&client_id=c1", rnd(32, URLSAFE))
    add("oauth-client-secret-form", "grant_type=client_credentials&client_secret={}", rnd(32, URLSAFE))
    add("oauth-code-in-redirect-body", "Found. Redirecting to http://localhost:8766/cb?code={}", rnd(36, URLSAFE))
    add("json-id-token", '{"id_token": "{}", "token_type": "Bearer"}', rnd(40, URLSAFE))


if __name__ == "__main__":
    build()
    with (Path(__file__).parent / "secrets.jsonl").open("w") as f:
        for row in ROWS:
            f.write(json.dumps(row) + "\n")
    print(len(ROWS), "shapes")
