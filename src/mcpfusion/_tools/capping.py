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
        # The size of all the rows with the notice a shortened answer carries: with the
        # size of one row's answer, where the run ends if rows cost the same.
        whole = size_of(fitted(response, 0, notice(cap, blocks, len(rows) - 1, len(rows))))
        found = await _fewest_left_out(rows, render, cap, whole)
        if found is not None:
            return found
    return too_large(tool, action, size, cap)


async def _fewest_left_out(
    rows: list[Any] | tuple[Any, ...], render: Render, cap: int, whole: int
) -> ToolResponse | None:
    """The answer made of the longest leading run of ``rows`` that fits, at least one,
    or ``None``.

    The answer grows with the rows it holds, so a search finds the run. It starts where
    the run would end if every row cost the same (read off the sizes of the answer of one
    row and of ``whole``, all the rows') and gallops from there to bracket the run, then
    halves the bracket. Rows of even size are found in a few
    answers of about the run's length, not log2(rows) answers of up to half of them: a
    cap of 64 KiB over 10,000 invoices costs 1.2x their uncapped answer, against 2.3x for
    a plain halving search (``benchmarks/capping.py``, both measured at load 8 on 2 cores).
    """

    one = 0

    async def made(count: int) -> ToolResponse | None:
        nonlocal one
        response = await render(rows[:count])
        if response.is_error or view_of(response) is None:
            return None  # the action refused the shorter list: nothing fits
        blocks = ui_count(response)
        candidate = fitted(response, 0, notice(cap, blocks, count, len(rows)))
        size = size_of(candidate)
        one = one or size
        return candidate if size <= cap else None

    best = await made(1)
    if best is None:
        return None  # not even the first row fits: an empty list would say nothing
    fits, over = 1, len(rows)  # the longest run known to fit, the shortest known not to
    per_row = max(whole - one, 1) / (len(rows) - 1)
    probe = min(max(1 + int((cap - one) / per_row), 2), over - 1)
    if fits < probe:
        found = await made(probe)
        step = 1
        if found is not None:  # gallop up while answers fit
            fits, best = probe, found
            while fits + step < over:
                found = await made(fits + step)
                if found is None:
                    over = fits + step
                    break
                fits, best = fits + step, found
                step *= 2
        else:  # gallop down while they do not
            over = probe
            while over - step > fits:
                found = await made(over - step)
                if found is not None:
                    fits, best = over - step, found
                    break
                over -= step
                step *= 2
    while over - fits > 1:
        middle = (fits + over) // 2
        found = await made(middle)
        if found is None:
            over = middle
        else:
            fits, best = middle, found
    return best
