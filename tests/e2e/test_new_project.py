"""``mcpfusion new`` output installs in a fresh venv with this checkout and passes its own tests."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.e2e.servers import REPO, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs ``command`` in ``cwd``, bounded, with its output captured for the failure message."""
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_a_new_project_passes_its_tests_in_a_fresh_venv(tmp_path: Path) -> None:
    """The generated project installs against this checkout and its tests and lock pass."""
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
    tests = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout
    inspect = _run(bin_dir / "mcpfusion", "inspect", "hello_tools.app:app", cwd=project)
    assert inspect.returncode == 0, inspect.stderr
    assert "items" in inspect.stdout
