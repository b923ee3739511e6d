"""``mcpfusion new`` output installs in a fresh venv with this checkout and passes its own tests."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.e2e.servers import REPO, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _run(
    *command: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs ``command`` in ``cwd``, bounded, with its output captured for the failure message."""
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )


def test_a_new_project_passes_make_test_in_a_fresh_venv(tmp_path: Path) -> None:
    """The generated project installs against this checkout; ruff, mypy and its tests pass."""
    created = run_cli("new", "hello-tools", "--directory", str(tmp_path))
    assert created.returncode == 0, created.stderr
    project = tmp_path / "hello-tools"
    venv.EnvBuilder(with_pip=True).create(tmp_path / "venv")
    bin_dir = tmp_path / "venv" / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / "python"
    install = _run(python, "-m", "pip", "install", "--quiet", "-e", REPO, cwd=project)
    assert install.returncode == 0, install.stderr
    install = _run(python, "-m", "pip", "install", "--quiet", "-e", ".[dev]", cwd=project)
    assert install.returncode == 0, install.stderr
    # The fresh venv first on PATH, as an activated one would be; nothing else of ours.
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    checks = _run("make", "test", cwd=project, env=env)
    assert checks.returncode == 0, checks.stdout + checks.stderr
    assert "2 passed" in checks.stdout
    inspect = _run(bin_dir / "mcpfusion", "inspect", "hello_tools.app:app", cwd=project)
    assert inspect.returncode == 0, inspect.stderr
    assert "items" in inspect.stdout
