"""``.venv-fastmcp``: the venv with FastMCP, made on first use and when pyproject changes.

Importing FastMCP patches the MCP SDK, so it never enters the main venv; its suite and
``benchmarks.six_calls`` run in this one.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-fastmcp"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".installed"

SETUP_TIMEOUT = 900
"""Seconds to make the venv: a fresh machine downloads FastMCP and its dependencies."""


class VenvUnavailable(RuntimeError):
    """The venv could not be made (no network, a failed install)."""


def run(*argv: str | Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Runs ``argv`` in the repository, capturing its text output."""
    return subprocess.run(
        [str(arg) for arg in argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _wanted() -> str:
    return hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()


def fastmcp_python() -> Path:
    """The interpreter of ``.venv-fastmcp``, made or refreshed when needed.

    Raises:
        VenvUnavailable: naming the step that failed and its output.
    """
    if STAMP.is_file() and STAMP.read_text() == _wanted() and PYTHON.is_file():
        return PYTHON
    steps = [
        (sys.executable, "-m", "venv", "--clear", VENV),
        (PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip"),
        (PYTHON, "-m", "pip", "install", "--quiet", "-e", f"{REPO}[dev,fastmcp]"),
    ]
    for step in steps:
        try:
            done = run(*step, timeout=SETUP_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise VenvUnavailable(f"cannot make .venv-fastmcp: {exc}") from None
        if done.returncode != 0:
            command = " ".join(map(str, step))
            raise VenvUnavailable(f"cannot make .venv-fastmcp: {command}\n{done.stderr}")
    STAMP.write_text(_wanted())
    return PYTHON
