"""A Presenter's compiled plan: what it always sends under one app style, rendered once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcpfusion._present.content import Attachment
from mcpfusion._present.response import (
    FOR_USER,
    BlockAnnotations,
    ToolResponse,
    new_response,
    new_view,
    render_value,
)
from mcpfusion._present.style import Style
from mcpfusion._wire import format as wire
from mcpfusion._wire.datablock import DataFormat, Delimiter, render_data
from mcpfusion._wire.parts import BULLET_KINDS, BulletKind, UIBlock

_DIRECTIVES, _RULES, _SUGGESTIONS = BULLET_KINDS[:3]  # a Presenter sends no invalidations


# The distinct entry lists a callback of one Presenter returns that are remembered, each
# rendered once: most callbacks pick among a few suggestions, rules or directives.
REMEMBERED_ADDITIONS: Final = 256


@dataclass(frozen=True, slots=True)
class Fixed:
    """One bullet kind's fixed entries (a Presenter's ``rules=`` and the like), rendered.

    Attributes:
        kind: the bullet kind.
        entries: the entries as declared.
        read: what a response's view holds for them (the lines read back).
        block: the whole block, sent as it is when no callback adds an entry; empty when
            the entries render to no line.
        with_added: the block and the view's entries with entries a callback added after
            them, for the ``REMEMBERED_ADDITIONS`` lists of entries used last.
    """

    kind: BulletKind
    lines: tuple[str, ...]
    read: tuple[Any, ...]
    block: str
    with_added: Callable[[tuple[Any, ...]], tuple[str, tuple[Any, ...]]] = field(
        repr=False, compare=False
    )

    @classmethod
    def of(cls, kind: BulletKind, entries: Sequence[Any]) -> Fixed:
        """Renders ``entries`` of ``kind`` once."""
        lines = tuple(kind.lines(entries))
        block = wire.bullet_block(kind.tag, lines) if lines else ""
        read = tuple(map(kind.read, lines))
        # Entries are str or frozen Suggestions: hashable, and rendered as a pure function
        # of their value, so a remembered rendering is the one a fresh one would make.
        remembered = functools.lru_cache(maxsize=REMEMBERED_ADDITIONS)(
            functools.partial(_with_added, kind, lines, read)
        )
        return cls(kind, lines, read, block, remembered)

    def joined(self, added: Sequence[Any], blocks: list[str]) -> tuple[Any, ...]:
        """Appends the block of the fixed entries then ``added`` (at least one entry) to
        ``blocks``; returns what the view holds for it (the one rule: ``BulletKind.lines``)."""
        entries = tuple(added)
        try:
            block, read = self.with_added(entries)
        except TypeError:  # an unhashable entry (a subclass's own __eq__): rendered afresh
            block, read = _with_added(self.kind, self.lines, self.read, entries)
        if block:
            blocks.append(block)
        return read


def _with_added(
    kind: BulletKind, lines: tuple[str, ...], read: tuple[Any, ...], added: tuple[Any, ...]
) -> tuple[str, tuple[Any, ...]]:
    """The block of ``kind`` with the fixed ``lines`` then ``added``, and its view's entries."""
    joined = kind.lines(added, after=lines)
    if not joined:
        return "", ()
    return wire.bullet_block(kind.tag, joined), read + tuple(map(kind.read, joined[len(lines) :]))


@dataclass(frozen=True, slots=True)
class Plan:
    """How one Presenter presents a single object under one app style, decided once.

    Made when an app's catalog freezes (``Presenter.compile``): the style is resolved
    (the Presenter's choices, then the app's, then the defaults) and the fixed rules,
    directives and suggestions are rendered as their blocks. A call then masks the
    object, runs the callbacks and writes only what they return; the blocks are those
    ``ResponseBuilder.build`` writes for the same parts, byte for byte.

    Attributes:
        style: the app style it was made for.
        data_format: the data block's format.
        delimiter: the TOON delimiter.
        user_ui: whether UI blocks are annotated for the user only.
        directives: the fixed ``<llm_directives>`` entries.
        rules: the fixed ``<domain_rules>`` entries.
        suggestions: the fixed ``<action_suggestions>`` entries.
    """

    style: Style
    data_format: DataFormat
    delimiter: Delimiter
    user_ui: bool
    directives: Fixed
    rules: Fixed
    suggestions: Fixed

    @classmethod
    def of(
        cls,
        own: Style,
        app: Style,
        directives: Sequence[str],
        rules: Sequence[str],
        suggestions: Sequence[Any],
    ) -> Plan:
        """The plan of a Presenter styled ``own`` presenting for an app styled ``app``."""
        return cls(
            app,
            own.data_format or app.data_format or "json",
            own.delimiter or app.delimiter or "|",
            (own.ui_audience or app.ui_audience) == "user",
            Fixed.of(_DIRECTIVES, directives),
            Fixed.of(_RULES, rules),
            Fixed.of(_SUGGESTIONS, suggestions),
        )

    def render(
        self,
        data: Any,
        ui_blocks: tuple[UIBlock, ...],
        embeds: tuple[UIBlock, ...],
        directives: Sequence[str],
        rules: Sequence[str],
        suggestions: Sequence[Any],
        attachments: tuple[Attachment, ...],
    ) -> ToolResponse:
        """The response: ``data`` (masked and selected), the UI blocks, the children's
        blocks and the entries the callbacks and children returned (checked), after the
        fixed ones; as ``render_parts`` writes it."""
        fixed = self.directives.block or self.rules.block or self.suggestions.block
        added = ui_blocks or embeds or attachments or directives or rules or suggestions
        if not (fixed or added):
            return render_value(data, self.data_format, self.delimiter)
        blocks = [render_data(data, self.data_format, self.delimiter)]
        for block in ui_blocks:
            blocks.append(block.text)
        for block in embeds:
            blocks.append(block.text)
        # A kind with neither fixed nor added entries sends nothing: no call for it.
        # A kind with fixed entries only sends its block as rendered: no call for it either.
        sent_directives = sent_rules = sent_suggestions = ()
        if directives:
            sent_directives = self.directives.joined(directives, blocks)
        elif self.directives.block:
            blocks.append(self.directives.block)
            sent_directives = self.directives.read
        if rules:
            sent_rules = self.rules.joined(rules, blocks)
        elif self.rules.block:
            blocks.append(self.rules.block)
            sent_rules = self.rules.read
        if suggestions:
            sent_suggestions = self.suggestions.joined(suggestions, blocks)
        elif self.suggestions.block:
            blocks.append(self.suggestions.block)
            sent_suggestions = self.suggestions.read
        view = new_view(
            data, ui_blocks, embeds, sent_directives, sent_rules, sent_suggestions, (), ""
        )
        marks: tuple[BlockAnnotations | None, ...] = ()
        if self.user_ui and (ui_blocks or embeds):
            shown = len(ui_blocks) + len(embeds)  # block 0 is the data, then UI and embeds
            marks = tuple(FOR_USER if 0 < i <= shown else None for i in range(len(blocks)))
        return new_response(tuple(blocks), False, None, marks, attachments, view)
