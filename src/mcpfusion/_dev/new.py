"""A new project from the templates: app, Presenter, tests, README, Makefile, pyproject."""

from __future__ import annotations

import keyword
import re
from importlib import metadata, resources
from pathlib import Path
from string import Template

from mcpfusion._dev.target import UsageError

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")

FILES: dict[str, str] = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "README.md": "README.md.tmpl",
    "Makefile": "Makefile.tmpl",
    "{package}/__init__.py": "",
    "{package}/app.py": "app.py.tmpl",
    "tests/test_app.py": "test_app.py.tmpl",
}
"""Each file of a new project (``{package}`` is its import name) and its template."""


def package_name(name: str) -> str:
    """The import name of project ``name``: lower case, ``-`` as ``_``.

    Raises:
        UsageError: ``name`` cannot name a project (a distribution and a package).
    """
    if not _NAME.match(name):
        raise UsageError(
            f"bad project name '{name}': start with a letter; letters, digits, - and _ only"
        )
    package = name.lower().replace("-", "_")
    if keyword.iskeyword(package) or package in {"mcpfusion", "tests", "test"}:
        raise UsageError(f"bad project name '{name}': '{package}' cannot be its package")
    return package


def _version() -> str:
    """The mcpfusion release the project depends on at least (this one)."""
    try:
        return metadata.version("mcpfusion")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.1.0"


def render_project(name: str) -> dict[str, str]:
    """The files of project ``name``, by path relative to its directory."""
    package = package_name(name)
    values = {"name": name, "package": package, "version": _version()}
    templates = resources.files("mcpfusion._dev") / "templates"
    rendered: dict[str, str] = {}
    for where, template in FILES.items():
        text = template and (templates / template).read_text(encoding="utf-8")
        rendered[where.format(package=package)] = Template(text).substitute(values)
    return rendered


def create_project(name: str, parent: Path) -> Path:
    """Writes project ``name`` into a new directory ``parent/name`` and returns it.

    Raises:
        UsageError: the name is bad, or the directory exists and is not empty (nothing
            is overwritten).
    """
    files = render_project(name)
    root = parent / name
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"{root} exists and is not empty; pick another name or directory")
    for where, text in files.items():
        path = root / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
