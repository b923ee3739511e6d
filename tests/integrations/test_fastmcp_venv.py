"""The FastMCP suite, run in its own venv: importing FastMCP patches the SDK this suite tests.

``.venv-fastmcp`` (gitignored) is made on first use with the package's ``dev`` and
``fastmcp`` extras, and again whenever ``pyproject.toml`` changes; a machine that cannot
make it skips these tests, except under ``CI=true`` where that fails them.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.environment import unavailable

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-fastmcp"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".installed"
SUITE = "tests/integrations/fastmcp_suite"
CHECKED = [
    REPO / "src/mcpfusion/integrations/fastmcp.py",
    *sorted((REPO / SUITE).glob("*.py")),
]
"""What mypy checks in that venv: the main venv's mypy excludes these files (named one by
one here, as mypy's ``exclude`` still applies to a folder given on its command line)."""

SETUP_TIMEOUT = 900
"""Seconds to make the venv: a fresh machine downloads FastMCP and its dependencies."""


def _wanted() -> str:
    return hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()


def _run(*argv: str | Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def fastmcp_python() -> Path:
    """The interpreter of ``.venv-fastmcp``, made or refreshed when needed."""
    if STAMP.is_file() and STAMP.read_text() == _wanted() and PYTHON.is_file():
        return PYTHON
    steps = [
        (sys.executable, "-m", "venv", "--clear", VENV),
        (PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip"),
        (PYTHON, "-m", "pip", "install", "--quiet", "-e", f"{REPO}[dev,fastmcp]"),
    ]
    for step in steps:
        try:
            done = _run(*step, timeout=SETUP_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            unavailable(f"cannot make .venv-fastmcp: {exc}")
        if done.returncode != 0:
            unavailable(f"cannot make .venv-fastmcp: {' '.join(map(str, step))}\n{done.stderr}")
    STAMP.write_text(_wanted())
    return PYTHON


@pytest.mark.slow
def test_the_fastmcp_suite_passes(fastmcp_python: Path) -> None:
    """Every FastMCP test passes, in the venv that has FastMCP."""
    done = _run(fastmcp_python, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider", timeout=600)
    report = f"{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    assert " passed" in done.stdout.strip().splitlines()[-1], report


@pytest.mark.slow
def test_the_fastmcp_code_is_type_checked(fastmcp_python: Path) -> None:
    """The FastMCP integration and its tests pass mypy --strict against FastMCP's types."""
    done = _run(fastmcp_python, "-m", "mypy", *CHECKED, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
