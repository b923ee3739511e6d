"""The FastMCP suite, run in its own venv: importing FastMCP patches the SDK this suite tests.

``.venv-fastmcp`` (gitignored) is made on first use with the package's ``dev`` and
``fastmcp`` extras, and again whenever ``pyproject.toml`` changes; a machine that cannot
make it skips these tests, except under ``CI=true`` where that fails them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.environment import unavailable
from tests.integrations.fastmcp_venv import REPO, VenvUnavailable, run
from tests.integrations.fastmcp_venv import fastmcp_python as made

SUITE = "tests/integrations/fastmcp_suite"
CHECKED = [
    REPO / "src/mcpfusion/integrations/fastmcp.py",
    *sorted((REPO / SUITE).glob("*.py")),
]
"""What mypy checks in that venv: the main venv's mypy excludes these files (named one by
one here, as mypy's ``exclude`` still applies to a folder given on its command line)."""


@pytest.fixture(scope="module")
def fastmcp_python() -> Path:
    """The interpreter of ``.venv-fastmcp``, made or refreshed when needed."""
    try:
        return made()
    except VenvUnavailable as exc:
        unavailable(str(exc))


@pytest.mark.slow
def test_the_fastmcp_suite_passes(fastmcp_python: Path) -> None:
    """Every FastMCP test passes, in the venv that has FastMCP."""
    done = run(fastmcp_python, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider", timeout=600)
    report = f"{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    assert " passed" in done.stdout.strip().splitlines()[-1], report


@pytest.mark.slow
def test_the_fastmcp_code_is_type_checked(fastmcp_python: Path) -> None:
    """The FastMCP integration and its tests pass mypy --strict against FastMCP's types."""
    done = run(fastmcp_python, "-m", "mypy", *CHECKED, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
