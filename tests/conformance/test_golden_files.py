"""Housekeeping for the golden files: each one is pinned by a conformance test."""

from __future__ import annotations

from pathlib import Path

from tests.conformance.golden import GOLDEN_DIR


def test_every_golden_file_is_used() -> None:
    """Every file under golden/ is named by some conformance test, so none goes stale."""
    sources = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py"))
    unused = [path.name for path in GOLDEN_DIR.iterdir() if f'"{path.name}"' not in sources]
    assert unused == []
    assert len(list(GOLDEN_DIR.iterdir())) >= 10
