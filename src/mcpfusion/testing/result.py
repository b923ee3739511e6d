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
class CallResult:
    """One tool call's result, split by block kind.

    For responses built by a Presenter or ``ResponseBuilder`` the parts come from the side
    door (SPEC §13), so ``data`` is the exact value and nothing is re-parsed; otherwise
    they are read back from the text with ``mcpfusion.wire.parse`` (which cannot tell UI
    blocks from embeds, so ``embeds`` is empty there).

    Attributes:
        response: the response as the app returned it.
        data: the data block's value (``None`` for an error envelope).
        system_rules: the ``<domain_rules>`` entries.
        ui_blocks: the UI blocks (kind 2).
        directives: the ``<llm_directives>`` entries.
        suggestions: the ``<action_suggestions>`` entries.
        embeds: the blocks of child Presenters (kind 3).
        error: code, severity and message of an error envelope, else ``None``.
        progress: the progress reports sent during the call, in order.
    """

    response: ToolResponse
    data: Any
    system_rules: tuple[str, ...] = ()
    ui_blocks: tuple[UIBlock, ...] = ()
    directives: tuple[str, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()
    embeds: tuple[UIBlock, ...] = ()
    error: ParsedError | None = None
    progress: tuple[ProgressEvent, ...] = ()

    @classmethod
    def of(cls, response: ToolResponse, progress: tuple[ProgressEvent, ...] = ()) -> CallResult:
        """Splits ``response`` into its parts."""
        view = view_of(response)
        if view is not None:
            return cls(
                response,
                view.data,
                view.system_rules,
                view.ui_blocks,
                view.directives,
                view.suggestions,
                view.embeds,
                parse_error(response.blocks[0]),
                progress,
            )
        parsed = parse(response.blocks)
        return cls(
            response,
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
            progress,
        )

    @property
    def is_error(self) -> bool:
        """The result's ``isError`` flag."""
        return self.response.is_error

    @property
    def error_code(self) -> str | None:
        """The envelope's code (``VALIDATION_ERROR`` for ``<validation_error>``), else ``None``."""
        return self.error.code if self.error else None

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
