"""How a Presenter presents: mask, limit, callbacks and children into a builder (SPEC §5.1)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import Any, Self

from pydantic import ValidationError

from mcpfusion._errors import PresenterError
from mcpfusion._present import ui
from mcpfusion._present.builder import ResponseBuilder
from mcpfusion._present.content import ATTACHMENTS
from mcpfusion._present.failures import SENT_LIMIT, cut
from mcpfusion._present.masking import Mask, as_mapping, collector_paused
from mcpfusion._present.omission import Plan as Omission
from mcpfusion._present.paging import Page, PageCut, Pager, paged
from mcpfusion._present.redaction import Redaction, Traces
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.scrubber import Scrubber
from mcpfusion._present.style import Style, style_of
from mcpfusion._present.text_fields import WALK, Fields
from mcpfusion._wire.datablock import select_fields
from mcpfusion._wire.format import TRUNCATION_NOTICE
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock
from mcpfusion._wire.repair import MISSING

UI_VALUES = (UIBlock, *ATTACHMENTS)  # what a UI callback may return: blocks, images, sounds
Hook = tuple[Callable[..., Any], bool]
"""A callback and whether it takes the context: called ``fn(data, ctx)`` or ``fn(data)``."""


def collect(hooks: list[Hook], data: Any, ctx: Any, kind: type | tuple[type, ...]) -> list[Any]:
    """Calls each callback and gathers what it returns: one ``kind`` value or several.

    The builder the values go to checks each one and drops the falsy ones.
    """
    out: list[Any] = []
    for fn, takes_context in hooks:
        value = fn(data, ctx) if takes_context else fn(data)
        if not value:
            continue
        if isinstance(value, kind):  # the common case: one value
            out.append(value)
        else:
            out.extend(value)
    return out


@dataclass(slots=True)
class Hooks:
    """The callbacks of one kind: those for a single object and those for a whole list."""

    one: list[Hook] = field(default_factory=list)
    many: list[Hook] = field(default_factory=list)

    def of(self, collection: bool) -> list[Hook]:
        return self.many if collection else self.one


CHUNK_ROWS = 2_000
"""Rows masked per validation call: each call holds the GIL, so a long list is masked in
chunks and a presentation running in a worker thread lets the event loop in between."""


class Presenting:
    """The present path of a ``Presenter``: ``present`` and ``builder``, and what they share.

    A base of ``Presenter``, which sets these attributes when it is defined.
    """

    name: str
    style: Style
    limit: int | None
    _mask: Mask
    _static_rules: tuple[str, ...]
    _static_directives: tuple[str, ...]
    _static_suggestions: tuple[Suggestion, ...]
    _omit: Omission | None
    _redaction: Redaction | None
    _text_fields: Fields | None
    _notice: Callable[[int], UIBlock] | None
    _embeds: dict[str, Self]
    _select_keys: tuple[str, ...]
    _ui: Hooks
    _rules: Hooks
    _suggest: Hooks
    _directives: list[Hook]

    @property
    def select_keys(self) -> tuple[str, ...]:
        """The top-level keys of the data block: schema fields, then embed-only keys."""
        return self._select_keys

    def present(
        self,
        data: Any,
        ctx: Any = None,
        select: Iterable[str] | None = None,
        *,
        style: Style | None = None,
        page: Pager | None = None,
    ) -> ToolResponse:
        """Renders ``data`` through the SPEC §5.1 pipeline into a built response.

        ``style`` is the app's: it decides what this Presenter leaves open. Not given, it
        is the style of the app whose call ``ctx`` belongs to (so a handler's own
        ``view.present(data, ctx)`` honours ``Fusion(data_format=..., ui_audience=...)``),
        and the defaults without a context. ``page`` is the page a call of a paging action asks
        for (SPEC §5.4); without it a list is cut by the agent limit alone.

        Raises:
            PresenterError: if the data does not fit the schema or a callback fails.
        """
        # A large list allocates enough objects to trigger full collections that traverse
        # the caller's rows again and again: the collector waits for the whole
        # presentation (mask, callbacks and render).
        with collector_paused(len(data) if isinstance(data, list | tuple) else 0):
            built, cut = self._builder(data, ctx, select, style, page, owned=True)
            response = built.build()
        return response if cut is None else paged(response, *cut)

    def builder(
        self,
        data: Any,
        ctx: Any = None,
        select: Iterable[str] | None = None,
        *,
        style: Style | None = None,
        page: Pager | None = None,
    ) -> ResponseBuilder:
        """Like ``present`` but returns the builder, for a caller that adds more parts.

        Redaction reaches the parts added later too: they are searched when it is built.
        """
        return self._builder(data, ctx, select, style, page)[0]

    def _builder(
        self,
        data: Any,
        ctx: Any,
        select: Iterable[str] | None,
        style: Style | None,
        page: Pager | None,
        owned: bool = False,
    ) -> tuple[ResponseBuilder, tuple[PageCut, str | None] | None]:
        """``builder``'s work, and for a page what was cut and the next cursor.

        ``owned``: the builder stays the framework's (``present``), so what masking made
        is never seen by the caller before it is sent, and redaction may write into it,
        unless a censor function placed its own objects there.
        """
        cut = None
        with collector_paused(len(data) if isinstance(data, list | tuple) else 0):
            if page is not None and isinstance(data, list | tuple | Page):
                # Only the top level pages; an embedded list keeps its plain limit.
                built, cut = self._render_page(data, ctx, page)
            else:  # presented outside a paging call: the plain agent limit
                built = self._render(data.items if isinstance(data, Page) else data, ctx, True)
            # Callbacks have seen the real values; from here on, the data is what is sent.
            traces = Traces()
            if self._finishes():
                built.data = self._finished(built.data, traces)
        built.data = select_fields(built.data, self.select_keys, select)
        if traces:
            writable = owned and (self._redaction is None or self._redaction.places_text)
            built.finishing(self._scrubber(traces, built.data if writable else None).view)
        app = style_of(ctx) if style is None else style
        own = self.style  # the Presenter's choices first, then the app's, then the defaults
        built.data_format = own.data_format or app.data_format or "json"
        built.delimiter = own.delimiter or app.delimiter or "|"
        built.user_ui = (own.ui_audience or app.ui_audience) == "user"
        return built, cut

    def _scrubber(self, traces: Traces, owned: object | None) -> Scrubber:
        """The search for ``traces``, reading only the fields the schema says hold text;
        an embed's key holds its child's data, which is walked. ``owned`` is the data
        masking made, if it may be written in place (``Scrubber``)."""
        fields = self._text_fields
        if fields is not None and self._embeds:
            fields = {**fields, **dict.fromkeys(self._embeds, WALK)}
        filled = self._redaction.filled() if self._redaction is not None else ((), "")
        return Scrubber(traces, fields, filled, owned)

    def _finishes(self) -> bool:
        """Whether this Presenter or a child redacts or omits anything."""
        return (
            self._redaction is not None
            or self._omit is not None
            or any(child._finishes() for child in self._embeds.values())
        )

    def _finished(self, data: Any, traces: Traces) -> Any:
        """The data as sent: children's subtrees first, then redaction and omission.

        The rows are the framework's own (masking made them) and every callback has run,
        so they are finished in place.
        """
        rows = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
        for key, child in self._embeds.items():
            if child._finishes():
                for row in rows:
                    if isinstance(row, dict) and key in row:
                        row[key] = child._finished(row[key], traces)
        if self._redaction is not None:
            self._redaction.censor(rows, traces)
        if self._omit is not None:
            skip = tuple(self._embeds)
            for row in rows:
                self._omit.prune(row, skip)
        return data

    def _render(self, data: Any, ctx: Any, with_ui: bool) -> ResponseBuilder:
        # with_ui is False under a collection parent, which drops child UI blocks (SPEC §6):
        # their callbacks are not run at all rather than run and thrown away.
        if data is None:
            return (
                ResponseBuilder(None)
                .directive(*self._static_directives)
                .rule(*self._static_rules)
                .suggestion(*self._static_suggestions)
            )
        if isinstance(data, list | tuple):
            return self._render_collection(data, ctx, with_ui)
        # A generator of rows, dict.values(); a dict is tested first, the ABCs cost 0.3 µs.
        if type(data) is not dict and isinstance(data, Iterator | ValuesView):
            return self._render_collection(list(data), ctx, with_ui)
        masked = self._masked_one(data)
        children = self._embedded(data, masked, ctx, with_ui) if self._embeds else ()
        built = ResponseBuilder(masked)
        self._run_callbacks(built, ctx, collection=False, with_ui=with_ui)
        for view in children:  # the parent's own entries go first
            built.merge(view, with_ui=with_ui)
        return built

    def _embedded(
        self, data: Any, masked: dict[str, Any], ctx: Any, with_ui: bool
    ) -> list[ResponseView]:
        """Presents each child's value of one raw object into ``masked`` (SPEC §6): the
        views of their parts, to be added after this Presenter's own."""
        children = []
        for key, child in self._embeds.items():
            raw = _read(data, key)
            if raw is not None:
                sub = child._render(raw, ctx, with_ui)
                masked[key] = sub.data
                children.append(sub.view())
        return children

    def _render_collection(
        self, rows: Sequence[Any], ctx: Any, with_ui: bool, limited: bool = True
    ) -> ResponseBuilder:
        hidden = 0
        if limited and self.limit is not None and len(rows) > self.limit:
            hidden = len(rows) - self.limit
            rows = rows[: self.limit]  # before masking: dropped rows are never validated
        masked = self._masked_many(rows)
        built = ResponseBuilder(masked)
        if hidden and with_ui:
            try:
                built.notice(self._truncation_block(len(masked), hidden))
            except Exception as exc:
                raise PresenterError.callback_failed(self.name, exc) from exc
        children: list[ResponseView] = []
        for key, child in self._embeds.items():
            for raw_row, row in zip(rows, masked, strict=True):
                raw = _read(raw_row, key)
                if raw is not None:
                    sub = child._render(raw, ctx, with_ui=False)
                    row[key] = sub.data
                    children.append(sub.view())
        self._run_callbacks(built, ctx, collection=True, with_ui=with_ui)
        for view in children:
            built.merge(view, with_ui=False)
        return built

    def _render_page(
        self, data: Any, ctx: Any, page: Pager
    ) -> tuple[ResponseBuilder, tuple[PageCut, str | None]]:
        """The page ``page`` asks for: rows cut, then presented as a list under no limit.

        A page with a next one starts with the paging notice and suggests the call that
        fetches it; both carry its cursor, returned for ``structuredContent`` with the cut.
        """
        cut = PageCut.of(data, page)
        built = self._render_collection(cut.rows, ctx, with_ui=True, limited=False)
        cursor = None
        if cut.more:
            cursor = page.seal(cut.offset + len(cut.rows))
            built.notice(ui.summary(cut.notice(cursor)))
            built.suggestion(Suggestion(page.target, cut.hint(cursor)))
        return built, (cut, cursor)

    def _truncation_block(self, shown: int, hidden: int) -> UIBlock | None:
        if self._notice is not None:
            return self._notice(hidden)
        return ui.summary(TRUNCATION_NOTICE.format(shown=shown, hidden=hidden))

    def _run_callbacks(
        self, built: ResponseBuilder, ctx: Any, *, collection: bool, with_ui: bool
    ) -> None:
        # A callback that raises, or returns the wrong type, is a Presenter failure (SPEC §9).
        data = built.data
        try:
            # Each kind only when it has entries: a call then skips what this Presenter
            # does not use (0.5-0.8 µs of ``benchmarks/call.py``'s one-row Presenter, with
            # one UI and one suggestion callback and no directives).
            if with_ui and (ui_hooks := self._ui.of(collection)):
                built.ui(*collect(ui_hooks, data, ctx, UI_VALUES))
            if self._static_directives:
                built.directive(*self._static_directives)
            if self._directives:
                built.directive(*collect(self._directives, data, ctx, str))
            if self._static_rules:
                built.rule(*self._static_rules)
            if rule_hooks := self._rules.of(collection):
                built.rule(*collect(rule_hooks, data, ctx, str))
            if self._static_suggestions:
                built.suggestion(*self._static_suggestions)
            if suggest_hooks := self._suggest.of(collection):
                built.suggestion(*collect(suggest_hooks, data, ctx, Suggestion))
        except Exception as exc:
            raise PresenterError.callback_failed(self.name, exc) from exc

    def _masked_one(self, item: Any) -> dict[str, Any]:
        try:
            return self._mask.one(item)
        except ValidationError as exc:
            raise self._error(exc, collection=False) from exc

    def _masked_many(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        if len(rows) <= CHUNK_ROWS:
            return self._masked_chunk(rows, 0)
        masked: list[dict[str, Any]] = []
        for start in range(0, len(rows), CHUNK_ROWS):
            masked += self._masked_chunk(rows[start : start + CHUNK_ROWS], start)
        return masked

    def _masked_chunk(self, rows: Sequence[Any], offset: int) -> list[dict[str, Any]]:
        try:
            return self._mask.many(rows)
        except ValidationError as exc:
            raise self._error(exc, collection=True, offset=offset) from exc

    def _error(self, exc: ValidationError, *, collection: bool, offset: int = 0) -> PresenterError:
        # The path and pydantic's error type only: its message can quote the data, or what
        # an attribute getter raised (addresses, secrets, file paths). The whole error is
        # chained to the PresenterError, so the server log has it.
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        loc = list(first["loc"])
        index = loc.pop(0) if collection and loc and isinstance(loc[0], int) else None
        path = cut(".".join(str(part)[: SENT_LIMIT + 1] for part in loc))
        return PresenterError(
            self.name, offset + index if isinstance(index, int) else None, path, first["type"]
        )


def _read(item: Any, key: str) -> Any:
    """Reads ``key`` from a raw item: a mapping key or an attribute; absent is ``None``."""
    if isinstance(item, Mapping):  # the schema accepts any mapping, so embeds must too
        value = item.get(key)
    elif (row := as_mapping(item)) is not None:  # a database row read by key
        value = row.get(key)
    else:
        value = getattr(item, key, None)
    return None if value is MISSING else value
