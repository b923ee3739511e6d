"""``ResponseBuilder``: collects the parts of a response in any order, then builds it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Self

from mcpfusion._present.content import ATTACHMENTS, Attachment, attachments_of
from mcpfusion._present.response import ToolResponse, attached, new_view, render_parts, success
from mcpfusion._wire.datablock import DATA_FORMATS, DELIMITERS, DataFormat, Delimiter
from mcpfusion._wire.parts import BULLET_KINDS, ResponseView, Suggestion, UIBlock


class ResponseBuilder:
    """Collects the parts of a response in any order; ``build()`` emits them in SPEC §2 order.

    Example:
        response(invoice).rule("amount_cents is in CENTS.").suggest("billing.remind", "...").build()

    Attributes:
        data: the value of the data block; it may be replaced before ``build()``.
        data_format: ``"json"`` (indented, default), ``"compact"`` or ``"toon"``.
        delimiter: the TOON delimiter, ``"|"`` (default), ``","`` or ``"\t"``.
        user_ui: annotate UI blocks and embeds for the user only (``audience: ["user"]``).
    """

    __slots__ = (
        "_attachments",
        "_bullets",
        "_caused_by",
        "_embeds",
        "_finish",
        "_shared_ui",
        "_ui",
        "data",
        "data_format",
        "delimiter",
        "user_ui",
    )

    def __init__(
        self,
        data: Any,
        *,
        data_format: DataFormat = "json",
        delimiter: Delimiter = "|",
        user_ui: bool = False,
    ) -> None:
        if data_format not in DATA_FORMATS:
            raise ValueError(f"data_format must be one of {DATA_FORMATS}; got {data_format!r}")
        if delimiter not in DELIMITERS:
            raise ValueError(f"delimiter must be one of {DELIMITERS}; got {delimiter!r}")
        self.data = data
        self.data_format: DataFormat = data_format
        self.delimiter: Delimiter = delimiter
        self.user_ui = user_ui
        self._shared_ui = 0  # leading UI blocks the model reads even with user_ui
        self._finish: Callable[[ResponseView], ResponseView] | None = None
        self._ui: list[UIBlock] = []
        self._embeds: list[UIBlock] = []
        self._attachments: list[Attachment] = []
        # The entries of each bullet kind, by ResponseView field (SPEC §2 kinds 4 to 6).
        self._bullets: dict[str, list[Any]] = {kind.field: [] for kind in BULLET_KINDS}
        self._caused_by = ""

    def ui(self, *blocks: UIBlock | Attachment | None) -> Self:
        """Adds UI blocks (kind 2), in order; ``None`` entries are skipped.

        An image or a sound (``ui.image``, ``ui.audio``) is attached instead (``attach``).
        """
        add_ui(self._ui, self._attachments, blocks)
        return self

    def attach(self, *items: Attachment | None) -> Self:
        """Adds content sent after every text block, in order: ``Image``, ``Audio``,
        ``EmbeddedResource``, ``ResourceLink``; ``None`` entries are skipped."""
        add_checked(self._attachments, items, ATTACHMENTS, "attach")
        return self

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        """The content attached so far."""
        return tuple(self._attachments)

    def notice(self, block: UIBlock | None) -> Self:
        """Adds a UI block the model reads even when UI goes to the user (a truncation
        notice), ahead of every other UI block; ``None`` is skipped."""
        added: list[UIBlock] = []
        add_checked(added, [block], UIBlock, "notice")
        for notice in added:
            self._ui.insert(self._shared_ui, notice)
            self._shared_ui += 1
        return self

    def finishing(self, step: Callable[[ResponseView], ResponseView]) -> Self:
        """Sets a last step that rewrites the parts before they are rendered (redaction)."""
        self._finish = step
        return self

    def without_ui(self) -> Self:
        """Drops the UI blocks and embeds, keeping the notices the model must read."""
        del self._ui[self._shared_ui :]
        self._embeds.clear()
        return self

    def embed(self, *blocks: UIBlock | None) -> Self:
        """Adds blocks rendered by a child Presenter (kind 3), in order."""
        add_checked(self._embeds, blocks, UIBlock, "embed")
        return self

    def directive(self, *hints: str | None) -> Self:
        """Adds ``<llm_directives>`` entries; falsy entries are dropped."""
        add_checked(self._bullets["directives"], hints, str, "directive")
        return self

    def rule(self, *rules: str | None) -> Self:
        """Adds ``<domain_rules>`` entries; falsy entries are dropped."""
        add_checked(self._bullets["system_rules"], rules, str, "rule")
        return self

    def suggest(self, tool: str, reason: str) -> Self:
        """Adds one ``<action_suggestions>`` entry, ``tool: reason``."""
        self._bullets["suggestions"].append(Suggestion(tool, reason))
        return self

    def suggestion(self, *suggestions: Suggestion | None) -> Self:
        """Adds prepared suggestions; ``None`` entries are skipped."""
        add_checked(self._bullets["suggestions"], suggestions, Suggestion, "suggestion")
        return self

    def invalidate(self, *patterns: str | None, caused_by: str = "") -> Self:
        """Adds ``<cache_invalidation>`` entries: state-name patterns this response made
        stale (SPEC §15), e.g. ``"billing.*"``; falsy entries are dropped.

        ``caused_by`` names the ``{tool}.{action}`` that changed them; an action's own
        ``invalidates=`` sets it, and a builder returned by a handler gets it from its
        action.
        """
        if not isinstance(caused_by, str):
            raise TypeError(f"caused_by is a str; got {type(caused_by).__name__}")
        add_checked(self._bullets["invalidations"], patterns, str, "invalidate")
        if caused_by:
            self._caused_by = caused_by
        return self

    def caused_by(self, name: str) -> Self:
        """Names the ``{tool}.{action}`` behind the invalidation entries, unless named."""
        if not self._caused_by:
            self._caused_by = name
        return self

    def merge(self, view: ResponseView, *, with_ui: bool = True) -> Self:
        """Adds the parts of another response's view after this one's (data excepted).

        Its UI blocks and embeds become embeds; ``with_ui=False`` drops them (SPEC §6).
        """
        if with_ui:
            self._embeds += view.ui_blocks
            self._embeds += view.embeds
        for field, entries in self._bullets.items():
            entries += getattr(view, field)
        return self

    def view(self) -> ResponseView:
        """The parts collected so far, as added (not yet folded or de-duplicated)."""
        bullets = [tuple(entries) for entries in self._bullets.values()]
        return new_view(self.data, tuple(self._ui), tuple(self._embeds), *bullets, self._caused_by)

    def build(self) -> ToolResponse:
        """Renders the blocks in SPEC §2 order; the response carries its structured view."""
        if self._finish is None:
            data, ui_blocks, embeds = self.data, tuple(self._ui), tuple(self._embeds)
            bullets = tuple(self._bullets.values())
            caused_by = self._caused_by
        else:
            view = self._finish(self.view())
            data, ui_blocks, embeds = view.data, view.ui_blocks, view.embeds
            bullets = tuple(getattr(view, kind.field) for kind in BULLET_KINDS)
            caused_by = view.caused_by
        return render_parts(
            data,
            ui_blocks,
            embeds,
            bullets,
            caused_by,
            self.data_format,
            self.delimiter,
            self.user_ui,
            self._shared_ui,
            tuple(self._attachments),
        )


def add_checked(
    target: list[Any], values: Iterable[Any], kind: type | tuple[type, ...], what: str
) -> None:
    """Appends the truthy values, each checked to be a ``kind``; falsy ones are dropped.

    The one rule for parts added to a response, by its builder or by Presenter callbacks.

    Raises:
        TypeError: if a value is not a ``kind``.
    """
    for value in values:
        if not value:
            continue
        if not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise TypeError(f"{what} expects {names} values; got {type(value).__name__}")
        target.append(value)


def add_ui(
    ui: list[UIBlock], attachments: list[Attachment], values: Sequence[UIBlock | Attachment | None]
) -> None:
    """Appends UI values, each checked: blocks to ``ui``, images and sounds to ``attachments``.

    Raises:
        TypeError: if a value is neither.
    """
    for value in values:  # a loop, not any(): no generator for the common UI blocks only
        if isinstance(value, ATTACHMENTS):
            items = [value for value in values if isinstance(value, ATTACHMENTS)]
            add_checked(attachments, items, ATTACHMENTS, "ui")
            values = [value for value in values if not isinstance(value, ATTACHMENTS)]
            break
    add_checked(ui, values, UIBlock, "ui")


def response(
    data: Any, *, data_format: DataFormat = "json", delimiter: Delimiter = "|"
) -> ResponseBuilder:
    """Starts a response whose data block holds ``data``."""
    return ResponseBuilder(data, data_format=data_format, delimiter=delimiter)


def as_response(value: Any) -> ToolResponse:
    """A value as a response, by SPEC §13's wrapping rule for actions without a Presenter.

    A ``ToolResponse`` passes untouched, a ``ResponseBuilder`` is built, an image, a sound
    or a resource (or a list of only those) is sent as the content, anything else is
    ``success(value)`` (``None`` is ``OK``).
    """
    if isinstance(value, ToolResponse):
        return value
    if isinstance(value, ResponseBuilder):
        return value.build()
    items = attachments_of(value)
    if items is not None:
        return attached(items)
    return success(value)
