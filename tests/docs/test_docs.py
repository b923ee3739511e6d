"""Runs every Python sample of README.md and docs/*.md, and checks the outputs they show.

Conventions, written as HTML comments on the line before a fence (invisible when rendered):

- ``<!-- no-run -->`` before a ``python`` fence: the sample starts a server, so it is
  compiled but not run.
- ``<!-- output -->`` before any fence: that fence is the exact stdout of the ``python``
  sample just above it.
- A ``console`` fence is run too: each ``$ command`` line (``mcpfusion`` or ``python``) runs
  in a folder holding the README's quick start as ``quickstart.py``, and the lines up to the
  next command are its exact stdout.

The samples of one file run in order in one namespace (later ones use earlier definitions),
under a ``__name__`` that is not ``"__main__"``. After a sample runs, every ``test_*``
function it defined is called too (coroutines with ``asyncio.run``; the ``fusion_tester``
fixture is the only parameter supplied), so the test examples in the docs are tests that
pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpfusion.testing import FusionTester

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?P<ticks>`{3,})(?P<info>[^`]*)$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_MARKER = re.compile(r"^<!--\s*(?P<name>[a-z-]+)\s*-->$")


@dataclass
class Fence:
    """A fenced block of a Markdown page."""

    info: str
    body: str
    line: int
    marker: str | None


def fences(text: str) -> list[Fence]:
    """The fenced blocks of ``text``, each with the marker comment just before it, if any."""
    found: list[Fence] = []
    lines = text.split("\n")
    index = 0
    marker: str | None = None
    while index < len(lines):
        line = lines[index]
        opening = _FENCE.match(line)
        if opening is None:
            match = _MARKER.match(line.strip())
            if match is not None:
                marker = match.group("name")
            elif line.strip():
                marker = None
            index += 1
            continue
        ticks, start = opening.group("ticks"), index
        index += 1
        body: list[str] = []
        while index < len(lines) and lines[index].rstrip() != ticks:
            body.append(lines[index])
            index += 1
        found.append(Fence(opening.group("info").strip(), "\n".join(body), start + 1, marker))
        marker = None
        index += 1
    return found


# The fixtures a docs sample's test function may ask for, by name.
FIXTURES: dict[str, Any] = {"fusion_tester": FusionTester}


def _run_tests_defined(namespace: dict[str, Any], before: set[str]) -> None:
    for name, value in list(namespace.items()):
        if name in before or not name.startswith("test_") or not inspect.isfunction(value):
            continue
        wanted = list(inspect.signature(value).parameters)
        unknown = [p for p in wanted if p not in FIXTURES]
        assert not unknown, f"{name} asks for fixtures the docs runner lacks: {unknown}"
        result = value(*(FIXTURES[p] for p in wanted))
        if inspect.iscoroutine(result):
            asyncio.run(result)


def run_page(path: Path) -> int:
    """Runs the samples of one page; returns how many ran.

    Raises:
        AssertionError: if a shown output differs from the real one.
    """
    # A real module, registered while the page runs, so pydantic and dataclasses can
    # resolve the annotations of classes the samples define.
    module = types.ModuleType(f"docs_{path.stem.lower().replace('-', '_')}")
    sys.modules[module.__name__] = module
    try:
        return _run_samples(path, module.__dict__)
    finally:
        del sys.modules[module.__name__]


def run_console(fence: Fence, where: str) -> None:
    """Runs each ``$ command`` of a console sample and compares its stdout with the text."""
    commands: list[tuple[str, list[str]]] = []
    for line in fence.body.split("\n"):
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    for command, expected in commands:
        argv = shlex.split(command)
        if argv[0] == "mcpfusion":
            argv[0] = str(Path(sys.executable).with_name("mcpfusion"))
        elif argv[0] == "python":
            argv[0] = sys.executable
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
            check=False,
        )
        shown = "\n".join(expected)
        assert done.stdout.rstrip("\n") == shown, f"{where}: $ {command}\n{done.stderr}"


def _run_samples(path: Path, namespace: dict[str, Any]) -> int:
    blocks = fences(path.read_text(encoding="utf-8"))
    ran = 0
    for position, fence in enumerate(blocks):
        if fence.info == "console" and fence.marker != "no-run":
            run_console(fence, f"{path.name}:{fence.line}")
            ran += 1
        if fence.info != "python":
            continue
        where = f"{path.name}:{fence.line}"
        # dont_inherit: this module's `from __future__ import annotations` must not leak in.
        code = compile(fence.body, where, "exec", dont_inherit=True)
        if fence.marker == "no-run":
            continue
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        before = set(namespace)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(code, namespace)
            _run_tests_defined(namespace, before)
        ran += 1
        if following is not None and following.marker == "output":
            assert stdout.getvalue().rstrip("\n") == following.body, (
                f"{where}: the output shown at line {following.line} is not what it prints"
            )
    return ran


def quick_start() -> str:
    """The README's quick start: its first Python sample."""
    readme = fences((ROOT / "README.md").read_text(encoding="utf-8"))
    return next(b.body for b in readme if b.info == "python")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_samples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sample of the page runs (or compiles, if it starts a server) as shown."""
    # The pages refer to the quick start saved as quickstart.py, as the README suggests.
    (tmp_path / "quickstart.py").write_text(quick_start() + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "quickstart", raising=False)
    run_page(page)


def test_relative_links_resolve() -> None:
    """Every relative link of the README and the docs points to a file that exists."""
    for page in PAGES:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            assert (page.parent / target.split("#")[0]).exists(), f"{page.name}: {target}"


def test_readme_quick_start_shows_its_exact_output() -> None:
    """The README shows the blocks its quick start prints, and the check above covers them."""
    blocks = fences((ROOT / "README.md").read_text(encoding="utf-8"))
    shown = [b for b in blocks if b.marker == "output"]
    assert shown, "the README must show the output of its quick start"
    assert any("<domain_rules>" in b.body for b in shown)


def test_every_page_has_a_sample_that_runs() -> None:
    """Each page carries at least one sample that is run, not only compiled."""
    for page in PAGES:
        blocks = fences(page.read_text(encoding="utf-8"))
        runnable = [b for b in blocks if b.info in ("python", "console") and b.marker != "no-run"]
        assert runnable, f"{page.name} has no sample that runs"


def test_fence_reader() -> None:
    """The fence reader keeps bodies verbatim and attaches the marker just above a fence."""
    text = "x\n<!-- no-run -->\n```python\na = 1\n\nb = 2\n```\n\n```text\nout\n```\n"
    found = fences(text)
    assert [(f.info, f.body, f.marker) for f in found] == [
        ("python", "a = 1\n\nb = 2", "no-run"),
        ("text", "out", None),
    ]
