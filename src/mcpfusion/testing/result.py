"""What a test sees of one call: the blocks by kind, read through the side door."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpfusion.response import Suggestion, ToolResponse, view_of
from mcpfusion.ui import UIBlock
from mcpfusion.wire.parse import ParsedError, parse, parse_error


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One progress report a handler sent with ``ctx.progress``."""

    done: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class _Parts:
    data: Any
    system_rules: tuple[str, ...]
    ui_blocks: tuple[UIBlock, ...]
    directives: tuple[str, ...]
    suggestions: tuple[Suggestion, ...]
    embeds: tuple[UIBlock, ...]
    error: ParsedError | None


class CallResult:
    """One tool call's result, split by block kind.

    For responses built by a Presenter or ``ResponseBuilder`` the parts come from the side
    door (SPEC §13), so ``data`` is the exact value and nothing is re-parsed; otherwise
    they are read back from the text with ``mcpfusion.wire.parse`` (which cannot tell UI
    blocks from embeds, so ``embeds`` is empty there). The split happens on first access.

    Attributes:
        response: the response as the app returned it.
        progress: the progress reports sent during the call, in order.
    """

    __slots__ = ("_parts", "progress", "response")

    def __init__(self, response: ToolResponse, progress: tuple[ProgressEvent, ...] = ()) -> None:
        self.response = response
        self.progress = progress
        self._parts: _Parts | None = None

    def __repr__(self) -> str:
        return f"CallResult(is_error={self.is_error}, blocks={len(self.blocks)})"

    @property
    def data(self) -> Any:
        """The data block's value (``None`` for an error envelope)."""
        return self._split().data

    @property
    def system_rules(self) -> tuple[str, ...]:
        """The ``<domain_rules>`` entries."""
        return self._split().system_rules

    @property
    def ui_blocks(self) -> tuple[UIBlock, ...]:
        """The UI blocks (kind 2)."""
        return self._split().ui_blocks

    @property
    def directives(self) -> tuple[str, ...]:
        """The ``<llm_directives>`` entries."""
        return self._split().directives

    @property
    def suggestions(self) -> tuple[Suggestion, ...]:
        """The ``<action_suggestions>`` entries."""
        return self._split().suggestions

    @property
    def embeds(self) -> tuple[UIBlock, ...]:
        """The blocks of child Presenters (kind 3)."""
        return self._split().embeds

    @property
    def error(self) -> ParsedError | None:
        """Code, severity and message of an error envelope, else ``None``."""
        return self._split().error

    @property
    def error_code(self) -> str | None:
        """The envelope's code (``VALIDATION_ERROR`` for ``<validation_error>``), else ``None``."""
        error = self.error
        return error.code if error else None

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
    def structured_content(self) -> dict[str, Any] | None:
        """The result's ``structuredContent``, if any."""
        return self.response.structured_content

    @property
    def raw(self) -> dict[str, Any]:
        """The exact MCP ``CallToolResult`` as a dict."""
        return self.response.to_mcp()

    def _split(self) -> _Parts:
        if self._parts is None:
            self._parts = _split(self.response)
        return self._parts


def _split(response: ToolResponse) -> _Parts:
    view = view_of(response)
    if view is not None:
        return _Parts(
            view.data,
            view.system_rules,
            view.ui_blocks,
            view.directives,
            view.suggestions,
            view.embeds,
            parse_error(response.blocks[0]),
        )
    parsed = parse(response.blocks)
    return _Parts(
        None if parsed.error else (parsed.data if parsed.is_json else parsed.data_text),
        parsed.rules,
        tuple(
            UIBlock(b.type, b.content, title=b.title, width=b.width, priority=b.priority)
            for b in parsed.ui_blocks
        ),
        parsed.directives,
        tuple(Suggestion(tool, reason) for tool, reason in parsed.suggestions),
        (),
        parsed.error,
    )
