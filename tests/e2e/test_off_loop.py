"""A large presentation runs off the event loop: one big call does not stall the others."""

from __future__ import annotations

import anyio
import pytest

from benchmarks.off_loop import BIG, beside_the_big_call, big_app, rows

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_one_row_calls_finish_while_a_100k_row_call_is_presented() -> None:
    """While 100k rows are presented, one-row calls keep finishing (how late: a benchmark)."""
    # How long the one-row calls wait is a bound of benchmarks/off_loop.py, as a ratio to
    # the big call's duration: a busy machine slows both, and fails no test.
    with anyio.fail_after(60):
        _, _, during = await beside_the_big_call(big_app(rows()))
    # Presented on the loop, the big call would let none finish until it returned.
    assert during >= 3, f"{during} one-row calls finished beside {BIG:,} rows"
