"""Redaction's search of a response for traces of the redacted values (SPEC §16)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Final

from mcpfusion._present.data_search import Column, columns, planned, rewrite, scrubbed_data
from mcpfusion._present.masking import collector_paused
from mcpfusion._present.redaction import Traces
from mcpfusion._present.text_fields import Fields
from mcpfusion._present.trace_finder import MIN_TRACE, Finder, finder_of
from mcpfusion._wire.format import fold_lines
from mcpfusion._wire.parts import BULLET_KINDS, ResponseView, UIBlock

_TEXT_KINDS: Final[tuple[tuple[str, Callable[[Any], str], Callable[[Any, str], Any]], ...]] = tuple(
    (kind.field, kind.text, kind.with_text) for kind in BULLET_KINDS if kind.text is not None
)
"""The bullet kinds whose entries carry free text: (field, its text, the entry rewritten)."""


class Scrubber:
    """Replaces the traces of redacted values in the parts of a response, longest first.

    All the values (one per row in view) are searched for at once by one ``Finder`` (a
    prefix prefilter, else an automaton), made on first use and used for every text of the
    response, so the cost follows the texts' length plus the number of values, not their
    product.

    Args:
        traces: the redacted values to search for.
        fields: what the data's fields can hold (``text_fields``), so the data's search
            reads only the columns that may hold text; ``None`` walks every value.
        filled: the paths redaction filled with one fixed text, and that text: not
            searched again, unless the text itself holds a trace.
        owned: the data masking made for a response no caller sees before it is sent:
            if the view still holds it, its rows are rewritten in place, and so are the
            strings at key paths through the schema's nested models (which masking
            built too), instead of copied.
    """

    __slots__ = ("_fields", "_filled", "_finder", "_made", "_owned", "_traces")

    def __init__(
        self,
        traces: Traces,
        fields: Fields | None = None,
        filled: tuple[tuple[tuple[str, ...], ...], str] = ((), ""),
        owned: object | None = None,
    ) -> None:
        self._traces = traces
        self._fields = fields
        self._filled = filled
        self._owned = owned
        self._finder: Finder | None = None
        self._made = False

    def _search(self) -> Finder | None:
        """The finder of the traces' forms, made on first use; ``None`` if none fits."""
        if not self._made:
            self._finder, self._made = finder_of(*self._traces.joined_forms()), True
        return self._finder

    def _data_columns(self, data: Any, finder: Finder, built: bool) -> list[Column]:
        """The data's strings that may hold a trace (``planned``, else ``columns``);
        ``built``: the data is masking's own."""
        if self._fields is None:
            return columns(data, finder.shortest)
        paths, text = self._filled
        skip = () if finder.hits(text) else paths
        measure = not finder.cheap
        return planned(data, self._fields, finder.shortest, skip, measure, built)

    def _built_path(self, path: tuple[str, ...]) -> bool:
        """Whether ``path`` leads through the schema's nested models to one of their
        fields: every container on it is one masking built."""
        known: Any = self._fields
        for key in path[:-1]:
            known = known.get(key) if isinstance(known, dict) else None
        return isinstance(known, dict) and path[-1] in known

    def _text(self, text: str) -> str:
        """``text`` with every trace replaced; ``text`` itself where none occurs."""
        finder = self._search()
        if finder is None or len(text) < finder.shortest:
            return text
        hits = finder.hits(text)
        return rewrite(text, hits) if hits else text

    def found(self, texts: Iterable[str]) -> list[tuple[str, str]]:
        """The traces that occur in ``texts`` with their replacements, longest first."""
        joined = "\0".join(texts)
        finder = self._search()
        if finder is None or len(joined) < MIN_TRACE:
            return []
        found = dict(hit for _, hit in finder.hits(joined))
        return sorted(found.items(), key=lambda item: -len(item[0]))

    def view(self, view: ResponseView) -> ResponseView:
        """The view with every trace replaced: in the data's other strings (its redacted
        values are censored already: a phone typed into a note) and in every other part."""
        finder = self._search()
        if finder is None:  # no value long enough to search for
            return view
        rows = len(view.data) if isinstance(view.data, list) else 0
        in_place = self._owned is not None and view.data is self._owned
        owned = self._built_path if in_place else None
        with collector_paused(rows):  # its copies would trigger collections of every row
            found = self._data_columns(view.data, finder, in_place)
            data = scrubbed_data(view.data, finder, found, owned)
        text = self._text

        def block(ui: UIBlock) -> UIBlock:
            # A type stays one line, whatever a censor function returns.
            content, title, kind = text(ui.content), text(ui.title), fold_lines(text(ui.type))
            if (content, title, kind) == (ui.content, ui.title, ui.type):
                return ui
            return replace(ui, content=content, title=title, type=kind)

        bullets: dict[str, Any] = {}
        for field, text_of, rewrite_entry in _TEXT_KINDS:
            entries, written = getattr(view, field), []
            for entry in entries:
                old = text_of(entry)
                new = text(old)
                written.append(entry if new is old else rewrite_entry(entry, new))
            if any(new is not old for new, old in zip(written, entries, strict=True)):
                bullets[field] = tuple(written)
        ui_blocks, embeds = tuple(map(block, view.ui_blocks)), tuple(map(block, view.embeds))
        same = data is view.data and not bullets
        if same and ui_blocks == view.ui_blocks and embeds == view.embeds:
            return view
        return replace(view, data=data, ui_blocks=ui_blocks, embeds=embeds, **bullets)
