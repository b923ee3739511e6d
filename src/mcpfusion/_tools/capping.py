"""Fitting an answer under its byte cap: whole UI blocks first, then whole rows (SPEC §17)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpfusion._present.cap import fitted, notice, size_of, ui_count
from mcpfusion._present.failures import too_large
from mcpfusion._present.response import ToolResponse, envelope_of, view_of

__all__ = ["capped"]

Render = Callable[[Any], Awaitable[ToolResponse]]
"""Renders a handler's value as the action does (its Presenter or output schema)."""


async def capped(
    response: ToolResponse, value: Any, render: Render, cap: int, tool: str, action: str
) -> ToolResponse:
    """``response`` if its text fits in ``cap`` bytes, else the most of it that does.

    In order (SPEC §17): UI blocks and embeds are left out, the last first; then, when the
    handler returned a list, the answer is made again, without UI blocks, from the longest
    leading run of its rows that fits (one row at least), so its data block, structured
    content (validated against the output schema again) and rules all describe the rows
    sent. A notice saying what was left out is the first UI block. What still does not fit
    is ``TOO_LARGE``.

    Errors pass untouched: the framework's envelopes are short, and cut sent values
    already (SPEC §9).
    """
    if response.is_error or envelope_of(response) is not None:
        return response
    size = size_of(response)
    if size <= cap:
        return response
    blocks = ui_count(response)
    for keep in range(blocks - 1, -1, -1):
        candidate = fitted(response, keep, notice(cap, blocks - keep, 0, 0))
        if size_of(candidate) <= cap:
            return candidate
    rows = value if isinstance(value, list | tuple) else None
    if rows and view_of(response) is not None:
        found = await _fewest_left_out(rows, render, cap)
        if found is not None:
            return found
    return too_large(tool, action, size, cap)


async def _fewest_left_out(
    rows: list[Any] | tuple[Any, ...], render: Render, cap: int
) -> ToolResponse | None:
    """The answer made of the longest leading run of ``rows`` that fits, at least one,
    or ``None``.

    A binary search: the answer grows with the rows it holds, so about log2(rows) answers
    are made, each by the action's own rendering.
    """

    async def made(count: int) -> ToolResponse | None:
        response = await render(rows[:count])
        if response.is_error or view_of(response) is None:
            return None  # the action refused the shorter list: nothing fits
        blocks = ui_count(response)
        candidate = fitted(response, 0, notice(cap, blocks, count, len(rows)))
        return candidate if size_of(candidate) <= cap else None

    best = await made(1)
    if best is None:
        return None  # not even the first row fits: an empty list would say nothing
    low, high = 1, len(rows) - 1  # all of them did not fit
    while low < high:
        middle = (low + high + 1) // 2
        found = await made(middle)
        if found is None:
            high = middle - 1
        else:
            low, best = middle, found
    return best
