"""Rules the test suite keeps about itself, checked on its own source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _is_raises(call: ast.Call) -> bool:
    """Whether ``call`` is ``pytest.raises(...)``, or ``raises(...)`` imported from pytest."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return (
            func.attr == "raises" and isinstance(func.value, ast.Name) and func.value.id == "pytest"
        )
    return isinstance(func, ast.Name) and func.id == "raises"


def _has_match(call: ast.Call) -> bool:
    """Whether ``call`` passes a ``match=`` that is not a literal None."""
    return any(
        keyword.arg == "match"
        and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
        for keyword in call.keywords
    )


def raises_without_match(source: str) -> list[int]:
    """The line of every ``pytest.raises(...)`` call in ``source`` that has no ``match=``."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and _is_raises(node) and not _has_match(node)
    )


def test_every_pytest_raises_pins_its_message() -> None:
    """Each pytest.raises in tests/ has a match=, so a test cannot pass on the wrong error."""
    missing = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in raises_without_match(path.read_text(encoding="utf-8"))
    ]
    assert missing == []


def test_the_match_rule_reads_every_spelling() -> None:
    """Multi-line, nested and imported-name calls are found; match=None counts as none."""
    source = "\n".join(
        [
            "import pytest",
            "from pytest import raises",
            "with pytest.raises(ValueError, match='x'):",
            "    pass",
            "with pytest.raises(",  # line 5
            "    ValueError,",
            "):",
            "    pass",
            "with raises(KeyError):",  # line 9
            "    pass",
            "with pytest.raises(TypeError, match=None):",  # line 11
            "    with pytest.raises(OSError):",  # line 12
            "        pass",
            "with pytest.raises(",
            "    ValueError,",
            "    match=r'^y$',",
            "):",
            "    pass",
        ]
    )
    assert raises_without_match(source) == [5, 9, 11, 12]
