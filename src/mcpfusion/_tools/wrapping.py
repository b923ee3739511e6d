"""SPEC §13's one wrapping rule: what a handler returns, as the response it sends."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

import anyio.to_thread

from mcpfusion._present.builder import ResponseBuilder
from mcpfusion._present.content import attachments_of
from mcpfusion._present.paging import Pager
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse, attached, render_value, success
from mcpfusion._present.style import APP_DEFAULT, Style

OFF_LOOP_ROWS: Final = 2_000
"""From this many rows a Presenter renders in a worker thread, off the event loop."""


async def present_off_loop(
    value: Any,
    presenter: Presenter | None,
    context: Any,
    select: Sequence[str] | None = None,
    style: Style = APP_DEFAULT,
    page: Pager | None = None,
) -> ToolResponse:
    """``wrap``, with a large presentation run in a worker thread.

    One big call then does not stall every other call on the server.
    """
    if (
        presenter is not None
        and isinstance(value, list | tuple)
        and len(value) >= OFF_LOOP_ROWS
        and page is None  # a page masks `limit` rows only
    ):
        present = functools.partial(presenter.present, style=style, page=page)
        return await anyio.to_thread.run_sync(present, value, context, select)
    return wrap(value, presenter, context, select, style, page)


def wrap(
    value: Any,
    presenter: Presenter | None,
    context: Any,
    select: Sequence[str] | None = None,
    style: Style = APP_DEFAULT,
    page: Pager | None = None,
) -> ToolResponse:
    """SPEC §13's one wrapping rule, for an action without an output schema.

    ``style`` is the app's: how a Presenter or a plain value is written unless it says.

    Raises:
        PresenterError, SerializationError: server defects.
    """
    if presenter is None and type(value) in PLAIN:
        # The common plain values first, each a single type test: none of them is a
        # response, a builder or an attachment (0.25 µs of a call returning a str).
        return render_value(value, style.format, style.toon_delimiter)
    match value:
        case ToolResponse():
            return value
        case ResponseBuilder():
            return value.build()
        case None:
            return success(None)
        case _ if (items := attachments_of(value)) is not None:
            return attached(items)
        case _ if presenter is not None:
            return presenter.present(value, context, select, style=style, page=page)
        case _:
            return render_value(value, style.format, style.toon_delimiter)


PLAIN: Final = frozenset({str, int, float, bool, dict})
