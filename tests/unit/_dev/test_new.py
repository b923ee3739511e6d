"""``mcpfusion new``: the project's files, its name rules, and that it never overwrites."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from mcpfusion._dev.new import create_project, package_name, render_project
from mcpfusion._dev.target import UsageError
from mcpfusion.cli import main


def test_a_project_has_an_app_tests_readme_and_pyproject() -> None:
    """The rendered files are the app, its package, its tests, the README and pyproject."""
    files = render_project("todo-server")
    assert sorted(files) == [
        "Makefile",
        "README.md",
        "pyproject.toml",
        "tests/test_app.py",
        "todo_server/__init__.py",
        "todo_server/app.py",
    ]
    project = tomllib.loads(files["pyproject.toml"])["project"]
    assert project["name"] == "todo-server"
    assert project["dependencies"][0].startswith("mcpfusion>=")
    assert "mcpfusion run todo_server.app:app" in files["README.md"]
    assert "\tmcpfusion run todo_server.app:app\n" in files["Makefile"]
    assert "from todo_server.app import app" in files["tests/test_app.py"]


def test_bad_names_are_refused() -> None:
    """A name that cannot be a package, or shadows one, is a usage error."""
    with pytest.raises(UsageError, match="start with a letter"):
        package_name("1st")
    with pytest.raises(UsageError, match="'class' cannot be its package"):
        package_name("class")
    with pytest.raises(UsageError, match="'mcpfusion' cannot be its package"):
        package_name("mcpfusion")


def test_an_existing_directory_is_never_overwritten(tmp_path: Path) -> None:
    """A non-empty target directory is refused; nothing in it changes."""
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="exists and is not empty"):
        create_project("taken", tmp_path)
    assert (tmp_path / "taken" / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_new_writes_the_project_and_prints_its_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mcpfusion new`` writes the files and prints the install, test and run commands."""
    assert main(["new", "notes", "--directory", str(tmp_path)]) == 0
    assert (tmp_path / "notes" / "notes" / "app.py").is_file()
    out = capsys.readouterr().out
    assert "make test" in out and "mcpfusion run notes.app:app" in out
