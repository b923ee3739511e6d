"""Fitting an answer under its byte cap: the search for the longest run of rows that fits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfusion._present.cap import fitted, notice, size_of
from mcpfusion._present.response import ToolResponse, render_value
from mcpfusion._tools.capping import capped


class Counted:
    """Renders rows as a plain JSON answer and counts the answers it made."""

    def __init__(self) -> None:
        self.made: list[int] = []

    async def __call__(self, part: Sequence[Any]) -> ToolResponse:
        self.made.append(len(part))
        return render_value(list(part))


def _fits(rows: list[str], count: int, cap: int) -> bool:
    answer = render_value(rows[:count])
    return size_of(fitted(answer, 0, notice(cap, 0, count, len(rows)))) <= cap


def _cap(rows: list[str], cap: int) -> tuple[ToolResponse, Counted]:
    render = Counted()

    async def run() -> ToolResponse:
        return await capped(render_value(rows), rows, render, cap, "t", "a")

    return anyio.run(run), render


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=400), min_size=2, max_size=60),
    cap=st.integers(min_value=150, max_value=4000),
)
def test_the_run_kept_is_the_longest_that_fits(sizes: list[int], cap: int) -> None:
    """Whatever the row sizes (a huge row anywhere), the answer keeps exactly the longest
    leading run of rows whose answer fits, or is TOO_LARGE when not even one does."""
    rows = ["é" * size for size in sizes]
    answer, _ = _cap(rows, cap)
    if size_of(render_value(rows)) <= cap:
        assert answer.blocks == render_value(rows).blocks
        return
    longest = max((n for n in range(1, len(rows)) if _fits(rows, n, cap)), default=0)
    if longest == 0:
        assert answer.is_error
        assert "TOO_LARGE" in answer.blocks[0]
        return
    assert json.loads(answer.blocks[0]) == rows[:longest]
    assert size_of(answer) <= cap


@pytest.mark.parametrize(("count", "cap"), [(100, 1_000), (10_000, 2_000), (10_000, 60_000)])
def test_even_rows_take_a_handful_of_answers(count: int, cap: int) -> None:
    """Rows of one size are found in a few answers of about the run's length, not
    log2(rows) answers of up to half the rows."""
    rows = [f"row {n:05d}" for n in range(count)]
    answer, render = _cap(rows, cap)
    kept = json.loads(answer.blocks[0])
    assert 1 < len(kept) < count
    assert rows[: len(kept)] == kept
    assert len(render.made) <= 5
    assert max(render.made) <= len(kept) + 2
