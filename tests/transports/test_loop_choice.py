"""The proxies run on uvloop where it is installed, and on asyncio's own loop without it or when told."""

from __future__ import annotations

import asyncio
import sys

import pytest

from wiretap.run.proxy import _loop_factory


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop does not install on Windows")
def test_uvloop_is_the_default_loop_where_it_installs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIRETAP_UVLOOP", raising=False)
    factory = _loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_wiretap_uvloop_0_falls_back_to_asyncio_and_a_proxy_loop_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIRETAP_UVLOOP", "0")
    assert _loop_factory() is None
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        assert runner.run(asyncio.sleep(0, "ran")) == "ran"
        assert type(runner.get_loop()).__module__.startswith("asyncio")


def test_without_uvloop_installed_the_loop_is_asyncio_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIRETAP_UVLOOP", raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # (what an absent module looks like to import)
    assert _loop_factory() is None
