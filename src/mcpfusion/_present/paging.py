"""Paging a Presenter's list: the page a call asks for, and a page a handler fetched itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcpfusion._present.response import ToolResponse, require_view, structured_json, with_view
from mcpfusion._wire.datablock import to_jsonable
from mcpfusion._wire.format import PAGE_HINT, PAGE_NOTICE, PAGE_NOTICE_OPEN

PAGE_KEY: Final = "page"
"""The key of ``structuredContent`` that says what a paged answer holds (SPEC §5.4)."""
ITEMS_KEY: Final = "items"
"""The key of ``structuredContent`` holding the rows as sent (SPEC §5.4)."""
_MARKS: Final = ("<", "\\u003c", "&lt;", "\ufffd")


@dataclass(frozen=True, slots=True)
class Page:
    """Rows a handler fetched for the page asked for (``ctx.page``), not the whole list.

    Return it instead of every row when the rows come from a database::

        rows = db.fetch(offset=ctx.page.offset, limit=ctx.page.limit + 1)
        return Page(rows)  # a row past the limit says there is a next page

    Attributes:
        items: the rows from ``ctx.page.offset`` on: at most ``ctx.page.limit`` of them,
            or one more to say that more follow when ``total`` is unknown.
        total: how many rows the whole list holds, if the handler knows (``COUNT(*)``).
    """

    items: Sequence[Any]
    total: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.items, str | bytes | dict) or not isinstance(self.items, Sequence):
            raise TypeError(f"Page items are a list of rows; got {type(self.items).__name__}")
        total = self.total
        if total is not None and (isinstance(total, bool) or not isinstance(total, int)):
            raise TypeError(f"Page total is an int or None; got {type(total).__name__}")
        if total is not None and total < 0:
            raise ValueError(f"Page total cannot be negative; got {total}")


@dataclass(frozen=True, slots=True)
class Pager:
    """The page one call of a paging action asks for, and how to write the next cursor.

    Attributes:
        offset: the index of the page's first row in the whole list (0 without a cursor).
        limit: the most rows a page holds: the Presenter's agent limit.
        target: the action to call for the next page (``tool.action``), for the suggestion.
        seal: writes the cursor of the page starting at a given offset.
    """

    offset: int
    limit: int
    target: str
    seal: Callable[[int], str] = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class PageCut:
    """What paging kept of a list: the rows to present and what to say about the rest.

    Attributes:
        rows: the rows of this page.
        offset: the index of its first row in the whole list.
        total: the rows of the whole list, ``None`` when unknown.
        more: whether rows follow this page.
    """

    rows: Sequence[Any]
    offset: int
    total: int | None
    more: bool

    @classmethod
    def of(cls, data: Any, pager: Pager) -> PageCut:
        """Cuts ``data`` (every row, or a handler's ``Page``) to the page ``pager`` asks for.

        Rows past the page are dropped before masking, like the agent limit's (SPEC §5.1).
        """
        if isinstance(data, Page):
            rows, total = data.items, data.total
            more = len(rows) > pager.limit
            if total is not None:
                more = pager.offset + min(len(rows), pager.limit) < total
        else:
            total = len(data)
            rows = data[pager.offset :]
            more = len(rows) > pager.limit
        return cls(rows[: pager.limit], pager.offset, total, more)

    def notice(self, cursor: str) -> str:
        """The truncation notice of a page that has a next one (SPEC §5.4)."""
        first, last = self.offset + 1, self.offset + len(self.rows)
        if self.total is None:
            return PAGE_NOTICE_OPEN.format(first=first, last=last, cursor=cursor)
        hidden = self.total - last
        return PAGE_NOTICE.format(
            first=first, last=last, total=self.total, hidden=hidden, cursor=cursor
        )

    def hint(self, cursor: str) -> str:
        """The reason of the next-page suggestion (SPEC §5.4)."""
        return PAGE_HINT.format(first=self.offset + len(self.rows) + 1, cursor=cursor)

    def summary(self, cursor: str | None) -> dict[str, Any]:
        """The ``page`` object of ``structuredContent`` (SPEC §5.4)."""
        return {
            "offset": self.offset,
            "returned": len(self.rows),
            "total": self.total,
            "nextCursor": cursor,
        }


def paged(response: ToolResponse, cut: PageCut, cursor: str | None) -> ToolResponse:
    """A page's response with ``structuredContent``: the rows as sent and what was cut.

    Clients that read ``structuredContent`` instead of the text get the same rows: the
    response's view, after masking, redaction (its search of the data included) and
    ``_select``, strings neutralized as SPEC §7 requires there.
    """
    view = require_view(response)
    structured = {ITEMS_KEY: to_jsonable(view.data), PAGE_KEY: cut.summary(cursor)}
    # The data block holds every string of these rows: with no "<" there (raw or written
    # inert) and no U+FFFD (a lone surrogate's), none needs neutralizing, the common case,
    # which then skips serializing the rows a second time.
    shown = response.blocks[0] if response.blocks else "<"
    if any(mark in shown for mark in _MARKS):
        structured, _ = structured_json(structured)
    return with_view(dataclasses.replace(response, structured_content=structured), view)
