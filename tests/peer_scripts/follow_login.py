"""A BROWSER for a login with nobody at the browser: GET the authorization URL (argv[1]) without following
its redirect, then GET the redirect's Location (the client's own callback). The authorization server's
CA is ``LOGIN_CA`` from the environment; proxy variables are ignored (a browser's leg is the user's)."""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def main() -> None:
    context = ssl.create_default_context(cafile=os.environ.get("LOGIN_CA"))
    opener = urllib.request.build_opener(
        _Stay, urllib.request.HTTPSHandler(context=context), urllib.request.ProxyHandler({})
    )
    try:
        opener.open(sys.argv[1], timeout=30)
        sys.exit("the authorization server did not redirect")
    except urllib.error.HTTPError as redirect:
        location = redirect.headers["Location"]
    opener.open(location, timeout=30).read()


if __name__ == "__main__":
    main()
