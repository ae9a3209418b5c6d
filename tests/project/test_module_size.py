"""Rooms with one job: a module over ``LIMIT`` lines says in its docstring why it is one module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import paths

PACKAGE = paths.REPO / "wiretap"
LIMIT = 400
REASON = "Why one module:"
"""The paragraph of a long module's docstring that gives the reason."""


def long_modules_without_a_reason() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        if source.count("\n") <= LIMIT:
            continue
        docstring = ast.get_docstring(ast.parse(source)) or ""
        if REASON not in docstring:
            found.append(f"{path.relative_to(PACKAGE).as_posix()} ({source.count(chr(10))} lines)")
    return found


def test_every_module_over_the_limit_says_why_it_is_one_module() -> None:
    assert long_modules_without_a_reason() == []


def test_a_long_module_without_a_reason_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big.py").write_text('"""A big one."""\n' + "x = 1\n" * (LIMIT + 1))
    (tmp_path / "said.py").write_text(f'"""A big one.\n\n{REASON} because.\n"""\n' + "x = 1\n" * (LIMIT + 1))
    (tmp_path / "small.py").write_text("x = 1\n")
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path)
    assert [entry.split(" ")[0] for entry in long_modules_without_a_reason()] == ["big.py"]
