"""Byte-exact comparison against the committed golden files of tests/conformance/golden/."""

from __future__ import annotations

import difflib
from pathlib import Path

from mcpfusion import ToolResponse

GOLDEN_DIR = Path(__file__).parent / "golden"

BLOCK_SEPARATOR = "\n=== next block ===\n"
"""Separates the blocks of a multi-block response in its golden file (no block contains it)."""


def golden_text(response: ToolResponse | str) -> str:
    """The text a golden file holds for ``response``: its blocks, separated."""
    if isinstance(response, str):
        return response
    return BLOCK_SEPARATOR.join(response.blocks)


def assert_golden(name: str, actual: ToolResponse | str) -> None:
    """Fails unless ``actual`` equals the golden file ``name`` byte for byte.

    Golden files are written once, checked by eye against SPEC.md and committed; this helper
    never writes them, so a change of wire text always shows up as a failing diff.
    """
    path = GOLDEN_DIR / name
    text = golden_text(actual)
    if not path.exists():
        raise AssertionError(
            f"missing golden file {path}; check this text against SPEC.md, then commit it:\n"
            f"{text!r}"
        )
    expected = path.read_bytes()
    if text.encode() == expected:
        return
    diff = difflib.unified_diff(
        expected.decode().splitlines(keepends=True),
        text.splitlines(keepends=True),
        fromfile=f"golden/{name}",
        tofile="actual",
    )
    raise AssertionError(f"wire text differs from golden/{name}:\n{''.join(diff)}")
