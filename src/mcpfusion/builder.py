"""The ResponseBuilder and the one rule that turns a handler's return value into a response."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Self

from mcpfusion.datablock import DATA_FORMATS, DataFormat, render_data
from mcpfusion.response import ResponseView, Suggestion, ToolResponse, attach_view
from mcpfusion.ui import UIBlock
from mcpfusion.wire import format as wire


class ResponseBuilder:
    """Collects the parts of a response in any order; ``build()`` emits them in SPEC §2 order.

    Example:
        response(invoice).rule("amount_cents is in CENTS.").suggest("billing.remind", "...").build()
    """

    __slots__ = ("_data", "_directives", "_embeds", "_format", "_rules", "_suggestions", "_ui")

    def __init__(self, data: Any, *, data_format: DataFormat = "json") -> None:
        if data_format not in DATA_FORMATS:
            raise ValueError(f"data_format must be one of {DATA_FORMATS}; got {data_format!r}")
        self._data = data
        self._format: DataFormat = data_format
        self._ui: list[UIBlock] = []
        self._embeds: list[UIBlock] = []
        self._directives: list[str] = []
        self._rules: list[str] = []
        self._suggestions: list[Suggestion] = []

    @classmethod
    def _of(
        cls,
        data: Any,
        data_format: DataFormat,
        ui: list[UIBlock],
        embeds: list[UIBlock],
        directives: list[str],
        rules: list[str],
        suggestions: list[Suggestion],
    ) -> ResponseBuilder:
        """A builder over parts a Presenter has already checked (its hot path)."""
        builder = cls.__new__(cls)  # the parts are checked already: skip __init__
        builder._data, builder._format = data, data_format
        builder._ui, builder._embeds = ui, embeds
        builder._directives, builder._rules, builder._suggestions = directives, rules, suggestions
        return builder

    def ui(self, *blocks: UIBlock | None) -> Self:
        """Adds UI blocks (kind 2), in order; ``None`` entries are skipped."""
        add_checked(self._ui, blocks, UIBlock, "ui")
        return self

    def embed(self, *blocks: UIBlock | None) -> Self:
        """Adds blocks rendered by a child Presenter (kind 3), in order."""
        add_checked(self._embeds, blocks, UIBlock, "embed")
        return self

    def directive(self, *hints: str | None) -> Self:
        """Adds ``<llm_directives>`` entries; falsy entries are dropped."""
        add_checked(self._directives, hints, str, "directive")
        return self

    def rule(self, *rules: str | None) -> Self:
        """Adds ``<domain_rules>`` entries; falsy entries are dropped."""
        add_checked(self._rules, rules, str, "rule")
        return self

    def suggest(self, tool: str, reason: str) -> Self:
        """Adds one ``<action_suggestions>`` entry, ``tool: reason``."""
        self._suggestions.append(Suggestion(tool, reason))
        return self

    def suggestion(self, *suggestions: Suggestion | None) -> Self:
        """Adds prepared suggestions; ``None`` entries are skipped."""
        add_checked(self._suggestions, suggestions, Suggestion, "suggestion")
        return self

    def build(self) -> ToolResponse:
        """Renders the blocks in SPEC §2 order and attaches the structured view."""
        directives = wire.bullet_entries(self._directives)
        rules = wire.bullet_entries(self._rules)
        suggestions = _unique_suggestions(self._suggestions)
        blocks = [render_data(self._data, self._format)]
        for block in self._ui:
            blocks.append(block.text)
        for block in self._embeds:
            blocks.append(block.text)
        for tag, entries in zip(
            wire.BULLET_TAGS, (directives, rules, [s.entry for s in suggestions]), strict=True
        ):
            text = wire.bullet_block(tag, entries)
            if text is not None:
                blocks.append(text)
        view = ResponseView(
            self._data,
            tuple(rules),
            tuple(self._ui),
            tuple(directives),
            tuple(suggestions),
            tuple(self._embeds),
        )
        return attach_view(ToolResponse(tuple(blocks)), view)


def add_checked(target: list[Any], values: Iterable[Any], kind: type, what: str) -> None:
    """Appends the truthy values, each checked to be a ``kind``; falsy ones are dropped.

    The one rule for parts added to a response, by its builder or by Presenter callbacks.
    """
    for value in values:
        if not value:
            continue
        if not isinstance(value, kind):
            raise TypeError(f"{what} expects {kind.__name__} values; got {type(value).__name__}")
        target.append(value)


def _unique_suggestions(suggestions: Iterable[Suggestion]) -> list[Suggestion]:
    """Folds and neutralizes reasons, dropping later duplicates of the same entry."""
    unique: dict[str, Suggestion] = {}
    for suggestion in suggestions:
        reason = wire.bullet_entry(suggestion.reason)
        if reason != suggestion.reason:
            suggestion = Suggestion(suggestion.tool, reason)
        unique.setdefault(suggestion.entry, suggestion)
    return list(unique.values())


def response(data: Any, *, data_format: DataFormat = "json") -> ResponseBuilder:
    """Starts a response whose data block holds ``data``."""
    return ResponseBuilder(data, data_format=data_format)


def success(data: Any) -> ToolResponse:
    """A response with only a data block (indented JSON, a str verbatim, ``None`` as OK)."""
    return ResponseBuilder(data).build()


def toon_success(data: Any) -> ToolResponse:
    """A response whose data block is TOON with the ``|`` delimiter (SPEC §10)."""
    return ResponseBuilder(data, data_format="toon").build()


Renderer = Callable[[Any], ToolResponse | ResponseBuilder]


def as_response(value: Any, render: Renderer | None = None) -> ToolResponse:
    """Interprets a handler's return value with the one wrapping rule of SPEC §13.

    1. a ``ToolResponse`` passes untouched; 2. a ``ResponseBuilder`` is built;
    3. ``None`` is ``OK``; 4. with a Presenter, ``render`` presents the value;
    5. anything else is ``success(value)``.
    """
    if isinstance(value, ToolResponse):
        return value
    if isinstance(value, ResponseBuilder):
        return value.build()
    if value is None:
        return success(None)
    if render is not None:
        rendered = render(value)
        return rendered.build() if isinstance(rendered, ResponseBuilder) else rendered
    return success(value)
