"""What a test sees of one call: the response, its parts and its error, read exactly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpfusion._errors import ErrorEnvelope
from mcpfusion._present.content import Attachment
from mcpfusion._present.response import ToolResponse, view_of
from mcpfusion._wire.parse import parse, parse_error
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One progress report a handler sent with ``ctx.progress``."""

    done: float
    total: float | None = None
    message: str | None = None


class CallResult:
    """One tool call's result, split by block kind.

    ``view`` is the response's structured view (SPEC §13's side door) when a Presenter or
    ``ResponseBuilder`` built it, so ``data`` is the exact value and nothing is re-parsed;
    otherwise it is read back from the text with ``mcpfusion.wire.parse`` (which cannot
    tell UI blocks from embeds, so ``embeds`` is empty there, and ``data`` is ``None`` for
    an error envelope).

    Attributes:
        response: the response as the app returned it.
        progress: the progress reports sent during the call, in order.
        view: the response's parts.
        error: the error envelope, when the call failed (or warned), else ``None``.
    """

    __slots__ = ("error", "progress", "response", "view")

    error: ErrorEnvelope | None
    view: ResponseView

    def __init__(self, response: ToolResponse, progress: tuple[ProgressEvent, ...] = ()) -> None:
        self.response = response
        self.progress = progress
        view = view_of(response)
        if not response.blocks:  # attachments alone
            view, self.error = ResponseView(None), None
        elif view is None:
            parsed = parse(response.blocks)
            view, self.error = parsed.view, parsed.error
        else:
            self.error = parse_error(response.blocks[0])
        self.view = view

    @classmethod
    def from_mcp(cls, result: Any, progress: tuple[ProgressEvent, ...] = ()) -> CallResult:
        """Reads the result of any server's tool call, as an MCP client received it.

        Example, with any client::

            result = CallResult.from_mcp(await client.call_tool("get_user", {"user_id": 1}))
            assert result.system_rules == ("ids are stable",)

        ``result`` is the SDK client's ``CallToolResult``, FastMCP's client result (call
        with ``raise_on_error=False`` to read error envelopes), or its JSON as a dict. Its
        text blocks are read back with ``mcpfusion.wire.parse``, so every part is what the
        wire carries (embeds stay in ``ui_blocks``); other content (images, resources) is
        not part of any block and is left out.

        Raises:
            ValueError: if the result has no text content.
        """
        if isinstance(result, Mapping):
            content, is_error = result.get("content") or (), result.get("isError")
            structured = result.get("structuredContent")
        else:
            content, is_error = getattr(result, "content", ()), getattr(result, "is_error", False)
            structured = getattr(result, "structured_content", None)
        blocks = tuple(text for item in content if (text := _text_of(item)) is not None)
        if not blocks:
            raise ValueError("this tool result has no text content to read")
        response = ToolResponse(
            blocks,
            is_error=bool(is_error),
            structured_content=structured if isinstance(structured, dict) else None,
        )
        return cls(response, progress)

    def __repr__(self) -> str:
        return f"CallResult(is_error={self.is_error}, blocks={len(self.blocks)})"

    @property
    def data(self) -> Any:
        """The data block's value (``None`` for an error envelope)."""
        return self.view.data

    @property
    def ui_blocks(self) -> tuple[UIBlock, ...]:
        """The UI blocks (kind 2)."""
        return self.view.ui_blocks

    @property
    def embeds(self) -> tuple[UIBlock, ...]:
        """The blocks of child Presenters (kind 3)."""
        return self.view.embeds

    @property
    def directives(self) -> tuple[str, ...]:
        """The ``<llm_directives>`` entries."""
        return self.view.directives

    @property
    def system_rules(self) -> tuple[str, ...]:
        """The ``<domain_rules>`` entries."""
        return self.view.system_rules

    @property
    def suggestions(self) -> tuple[Suggestion, ...]:
        """The ``<action_suggestions>`` entries."""
        return self.view.suggestions

    @property
    def invalidations(self) -> tuple[str, ...]:
        """The ``<cache_invalidation>`` entries: what a successful mutation made stale."""
        return self.view.invalidations

    @property
    def caused_by(self) -> str:
        """The ``{tool}.{action}`` named by the ``<cache_invalidation>`` block, else ``""``."""
        return self.view.caused_by

    @property
    def error_code(self) -> str | None:
        """The envelope's code (``VALIDATION_ERROR`` for ``<validation_error>``), else ``None``."""
        return self.error.code if self.error else None

    @property
    def is_error(self) -> bool:
        """The result's ``isError`` flag."""
        return self.response.is_error

    @property
    def blocks(self) -> tuple[str, ...]:
        """The text of every block, in wire order."""
        return self.response.blocks

    @property
    def text(self) -> str:
        """Every block's text, joined by a blank line."""
        return self.response.text

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        """The content after the text blocks: images, audio, resources."""
        return self.response.attachments

    @property
    def structured_content(self) -> dict[str, Any] | None:
        """The result's ``structuredContent``, if any."""
        return self.response.structured_content

    @property
    def raw(self) -> dict[str, Any]:
        """The exact MCP ``CallToolResult`` as a dict."""
        return self.response.to_mcp()


def _text_of(item: Any) -> str | None:
    """The text of a text content item (a model or its JSON), else ``None``."""
    if isinstance(item, Mapping):
        kind, text = item.get("type"), item.get("text")
    else:
        kind, text = getattr(item, "type", None), getattr(item, "text", None)
    return text if kind == "text" and isinstance(text, str) else None
