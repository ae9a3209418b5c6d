"""The README and docs/ hold no dead link, no example command wiretap would refuse, and no path that is not there.

Links are checked against the files and their headings (GitHub's anchors); every ``wiretap`` command line
in a shell block is parsed by the real click commands, so a renamed option or subcommand fails here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml
from support import paths

from wiretap.cli import cli, is_command, routed
from wiretap.errors import ExitStatus

REPO = paths.REPO
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
SHELL_BLOCKS = {"sh", "bash", "shell", "console"}
MAX_SKIPPED = 3
"""Command lines with shell substitutions, which cannot be parsed without running a shell."""

FENCE = re.compile(r"^(\s*)```(\w*)")
LINK = re.compile(r"(?<!\\)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")
OPERATORS = {"&&", "||", "|", ";", "&"}
REDIRECTS = {">", ">>", "<", ">&", "<&", "&>"}
REPO_PATH = re.compile(r"(?<![\w/.~$<-])((?:tests|bench|wiretap|recordings|\.ci)/[\w./*-]*)")


def prose(text: str) -> Iterator[tuple[int, str]]:
    """Lines outside code blocks, with inline code removed."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, CODE_SPAN.sub("", line)


def outside_blocks(text: str) -> Iterator[str]:
    """Lines outside code blocks, inline code kept."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield line


def blocks(text: str) -> Iterator[tuple[str, int, str]]:
    """Each line of each fenced block: its language, line number and text."""
    language: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            language = fence.group(2) if language is None else None
        elif language is not None:
            yield language, number, line


def github_slug(heading: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not fenced:
            slug = github_slug(heading.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links() -> list[tuple[Path, int, str]]:
    found = []
    for page in PAGES:
        for number, line in prose(page.read_text()):
            for target in LINK.findall(line):
                if not re.match(r"[a-z][a-z0-9+.-]*:", target):
                    found.append((page, number, target))
    return found


def test_every_relative_link_names_a_file_and_a_heading_that_exist() -> None:
    links = relative_links()
    bad = []
    for page, number, target in links:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(REPO)}:{number}: {target}"
        if not file.exists():
            bad.append(f"{where}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            bad.append(f"{where}: no such heading")
    assert bad == []
    assert len(links) > 40  # the README's links to docs/ and the pages' cross-links were all read


def test_the_readme_links_every_docs_page_and_mkdocs_lists_every_page() -> None:
    readme = {t.partition("#")[0] for p, _, t in relative_links() if p.name == "README.md"}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages <= readme

    def nav_files(entries: list[object]) -> Iterator[str]:
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(value, list):
                yield from nav_files(value)
            else:
                yield str(value)

    # MkDocs names a Python function for the anchors' slugs; a safe load reads the rest.
    config = yaml.safe_load(re.sub(r"!!python/\S+", "", (REPO / "mkdocs.yml").read_text()))
    listed = list(nav_files(config["nav"]))
    assert sorted(listed) == sorted(p.name for p in DOCS.glob("*.md"))
    assert config["docs_dir"] == "docs"


def command_lines() -> Iterator[tuple[str, list[str] | None]]:
    """Every ``wiretap`` command in a shell block: where, and its arguments (None: a shell substitution)."""
    for page in PAGES:
        for language, number, line in blocks(page.read_text()):
            if language == "yaml":  # a CI job's steps: "run: wiretap …", "- wiretap …"
                line = re.sub(r"^\s*(?:-\s+)?(?:run:\s*)?", "", line)
            elif language not in SHELL_BLOCKS:
                continue
            if "wiretap" not in line:
                continue
            where = f"{page.relative_to(REPO)}:{number}: {line.strip()}"
            if "$(" in line or "`" in line or "<(" in line:
                yield where, None
                continue
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            segment: list[str] = []
            for token in [*lexer, ";"]:
                if token not in OPERATORS:
                    segment.append(token)
                    continue
                while segment and re.fullmatch(r"[A-Za-z_]\w*=.*", segment[0]):
                    segment.pop(0)  # VAR=value before the command
                if "--" in segment and segment[segment.index("--") + 1 :][:1] == ["wiretap"]:
                    segment = segment[segment.index("--") + 1 :]  # "claude mcp add NAME -- wiretap …"
                if segment and segment[0] == "wiretap":
                    yield where, without_redirects(segment[1:])
                segment = []


def without_redirects(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token in REDIRECTS:
            if kept and kept[-1].isdigit():
                kept.pop()
            skip = True
        else:
            kept.append(token)
    return kept


def refusal(command: click.Command, name: str, args: list[str], parent: click.Context) -> str | None:
    """Why click would refuse these arguments, without running the command or any callback; None if it would not."""
    ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
    try:
        opts, rest, _ = command.make_parser(ctx).parse_args(list(args))
    except click.UsageError as exc:
        return exc.format_message()
    for param in command.params:
        values = opts.get(param.name) if param.name else None
        if isinstance(param.type, click.Choice) and values is not None:
            for value in values if isinstance(values, list | tuple) else [values]:
                try:
                    param.type.convert(value, param, ctx)
                except click.BadParameter as exc:
                    return f"{param.opts[0]}: {exc.format_message()}"
        given = isinstance(values, str) or (isinstance(values, list | tuple) and len(values) > 0)
        if isinstance(param, click.Argument) and param.required and not given:
            return f"missing argument {param.human_readable_name}"
    if any(param.is_eager and opts.get(param.name or "") for param in command.get_params(ctx)):
        return None  # --version, --help: answered before anything else is looked at
    if isinstance(command, click.Group):
        if not rest:
            return None if command.invoke_without_command else "missing subcommand"
        sub = command.get_command(ctx, rest[0])
        return f"no subcommand {rest[0]!r}" if sub is None else refusal(sub, rest[0], rest[1:], ctx)
    if rest:
        return f"unexpected arguments {rest}"
    return None


def check(args: list[str]) -> str | None:
    args = routed(args)  # as wiretap.cli.main reads "wiretap [--out DIR] -- CLIENT …"
    top = click.Context(cli, info_name="wiretap")
    if args and args[0].startswith("-"):
        return refusal(cli, "wiretap", args, top)
    command = cli.get_command(top, args[0]) if args else None
    if command is None:
        return f"no command {args[0]!r}"
    return refusal(command, args[0], args[1:], top)


def test_every_example_command_names_a_real_command_and_only_its_options() -> None:
    lines = list(command_lines())
    refused = [f"{where}: {why}" for where, args in lines if args is not None and (why := check(args))]
    skipped = [where for where, args in lines if args is None]
    assert refused == []
    assert len(skipped) <= MAX_SKIPPED, skipped
    assert len(lines) - len(skipped) > 15  # the examples of every page were read


def synopses() -> Iterator[tuple[str, str]]:
    """Each ``wiretap`` usage line of a text block, with the lines that continue it."""
    for page in PAGES:
        current: tuple[str, str] | None = None
        for language, number, line in blocks(page.read_text()):
            if language != "text":
                continue
            if line.startswith("wiretap "):
                if current:
                    yield current
                current = (f"{page.relative_to(REPO)}:{number}: {line.strip()}", line)
            elif current and re.match(r"\s+[\[-]", line):
                current = (current[0], f"{current[1]} {line}")
            elif current:
                yield current
                current = None
        if current:
            yield current


def synopsis_refusal(text: str) -> str | None:
    """An option the synopsis names that its command does not take; None when there is none."""
    words = text.split()[1:]
    if words[:1] == ["lab"]:
        words = routed(words)  # "wiretap lab [OPTIONS] -- CLIENT …" is the lab's run command
    if "--" in words:
        words = words[: words.index("--")]  # the client's or server's own arguments follow
    top = click.Context(cli, info_name="wiretap")
    names = [w for w in words if re.fullmatch(r"[a-z][a-z-]*", w)]
    ctx = top
    command: click.Command | None = None
    if names and is_command(names[0]):
        for name in names:
            group = command or cli
            found = group.get_command(ctx, name) if isinstance(group, click.Group) else None
            if found is None:
                break
            ctx = click.Context(found, info_name=name, parent=ctx)
            command = found
    else:
        command = cli.get_command(top, "wrap")  # "wiretap [OPTIONS] -- CLIENT …"
    assert command is not None
    known = {o for param in command.get_params(ctx) for o in [*param.opts, *param.secondary_opts]}
    unknown = [o for o in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", " ".join(words)) if o not in known]
    return f"{command.name} takes no {', '.join(unknown)}" if unknown else None


def test_every_usage_line_names_only_options_its_command_takes() -> None:
    lines = list(synopses())
    refused = [f"{where}: {why}" for where, text in lines if (why := synopsis_refusal(text))]
    assert refused == []
    assert len(lines) > 20


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["report", "rec.jsonl", "--nope"], "No such option"),
        (["report", "rec.jsonl", "--format", "pdf"], "--format"),
        (["report", "rec.jsonl", "extra.jsonl"], "unexpected arguments"),
        (["reports", "rec.jsonl"], "no command"),
        (["import", "codex"], "no subcommand"),
        (["show"], "missing argument"),
        (["sessions", "--prune", "--keep"], "requires an argument"),
    ],
)
def test_the_command_check_refuses_what_wiretap_refuses(args: list[str], why: str) -> None:
    assert why in (check(args) or "")
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", *args], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--out", "my-session", "--", "claude", "-p", "x", "--allowedTools", "y"],
        ["replay", "rec.jsonl", "--as", "client", "--", "python", "-m", "my_server"],
        ["lab", "--scripted", "--conditions", "progress", "--", "claude", "-p"],
        ["import", "claude-code", "--session", "abc"],
        ["--version"],
    ],
)
def test_the_command_check_accepts_what_wiretap_accepts(args: list[str]) -> None:
    assert check(args) is None


def test_the_readme_examples_on_shipped_recordings_run_and_succeed(tmp_path: Path) -> None:
    readme = [args for where, args in command_lines() if where.startswith("README.md") and args]
    runnable = [args for args in readme if any(a.startswith("recordings/") for a in args)]
    assert len(runnable) >= 3
    (tmp_path / "recordings").symlink_to(REPO / "recordings")
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"}
    for args in runnable:
        done = subprocess.run(
            [sys.executable, "-m", "wiretap", *args], cwd=tmp_path, capture_output=True, text=True, check=False, env=env
        )
        assert done.returncode == 0, (args, done.stderr)


def test_every_repository_path_the_docs_name_exists() -> None:
    missing = []
    for page in PAGES:
        for match in REPO_PATH.finditer("\n".join(outside_blocks(page.read_text()))):
            path = match.group(1).rstrip(".")
            if not any(REPO.glob(path.rstrip("/"))):
                missing.append(f"{page.relative_to(REPO)}: {path}")
    assert missing == []


def test_every_package_and_module_the_layout_names_exists() -> None:
    package = REPO / "wiretap"
    named = re.findall(r"`([a-z_]+/(?:[a-z_]+\.py)?|[a-z_]+\.py)`", (DOCS / "layout.md").read_text())
    assert len(named) > 20
    missing = [
        n
        for n in named
        if not any(p.relative_to(package).as_posix().endswith(n.rstrip("/")) for p in package.rglob("*"))
    ]
    assert missing == []


def test_the_exit_status_table_lists_every_exit_status() -> None:
    table = re.findall(r"^\| (\d+) \|", (DOCS / "exit-statuses.md").read_text(), re.MULTILINE)
    assert [int(status) for status in table] == sorted(int(status) for status in ExitStatus)
