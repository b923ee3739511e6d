"""Presenters: masked, limited, rule-carrying views of one domain entity (SPEC §5, §6, §11)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from mcpfusion._errors import DefinitionError, PresenterError
from mcpfusion._present import ui
from mcpfusion._present.builder import ResponseBuilder, add_checked, add_ui
from mcpfusion._present.content import ATTACHMENTS, Attachment
from mcpfusion._present.failures import SENT_LIMIT, cut
from mcpfusion._present.masking import Mask, as_mapping, collector_paused
from mcpfusion._present.models import schema_from_model
from mcpfusion._present.omission import plan_of
from mcpfusion._present.paging import Page, PageCut, Pager, paged
from mcpfusion._present.plan import Plan
from mcpfusion._present.redaction import DEFAULT_CENSOR, Censor, Redaction, Scrubber, Traces
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.style import Audience, Style, style_of
from mcpfusion._present.text_fields import WALK, text_fields
from mcpfusion._wire.datablock import DataFormat, Delimiter, select_fields
from mcpfusion._wire.format import TRUNCATION_NOTICE
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock
from mcpfusion._wire.repair import MISSING

F = TypeVar("F", bound=Callable[..., Any])
_UI_VALUES = (UIBlock, *ATTACHMENTS)  # what a UI callback may return: blocks, images, sounds
_Hook = tuple[Callable[..., Any], bool]
"""A callback and whether it takes the context: called ``fn(data, ctx)`` or ``fn(data)``."""


def _hook(fn: Callable[..., Any]) -> _Hook:
    """Reads whether a callback takes ``(data)`` or ``(data, ctx)``.

    Called as it is declared: a wrapper adapting one form to the other would cost a frame
    per callback per call.
    """
    if not callable(fn):
        raise DefinitionError(f"a Presenter callback must be callable; got {fn!r}")
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature take one argument
        return fn, False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    required = [p for p in params if p.default is p.empty and p.kind not in variadic]
    if len(required) > 2 or any(p.kind is p.KEYWORD_ONLY for p in required):
        # Fail where the callback is registered, not on the first call that reaches it.
        raise DefinitionError(f"a Presenter callback takes (data) or (data, ctx): {fn!r}")
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        return fn, True
    if len(positional) == 1:
        return fn, False
    raise DefinitionError(f"a Presenter callback takes (data) or (data, ctx): {fn!r}")


def _collect(hooks: list[_Hook], data: Any, ctx: Any, kind: type | tuple[type, ...]) -> list[Any]:
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


def suggest(tool: str, reason: str) -> Suggestion:
    """A next action for the agent, for suggestion callbacks: ``suggest("billing.remind", ...)``."""
    return Suggestion(tool, reason)


@dataclass(slots=True)
class _Hooks:
    """The callbacks of one kind: those for a single object and those for a whole list."""

    one: list[_Hook] = field(default_factory=list)
    many: list[_Hook] = field(default_factory=list)

    def of(self, collection: bool) -> list[_Hook]:
        return self.many if collection else self.one


CHUNK_ROWS = 2_000
"""Rows masked per validation call: each call holds the GIL, so a long list is masked in
chunks and a presentation running in a worker thread lets the event loop in between."""


class Presenter:
    """The view of one domain entity, shared by every action that returns it.

    The schema is the egress whitelist: fields it does not declare never leave the process.
    Static parts go in the constructor; callbacks are registered with decorators::

        invoice_view = Presenter("Invoice", InvoiceModel, rules=["amount_cents is in CENTS."])

        @invoice_view.ui
        def chart(invoice):
            return ui.echarts({...}, title="Revenue by month")

    Callbacks take ``(data)`` or ``(data, ctx)``; ``data`` is the masked data. Item
    callbacks (``rules``, ``ui``, ``suggest``) run for a single object; collection
    callbacks run once for a list. A callback may return one value, several, or ``None``.

    Args:
        name: the entity's name, used in error messages.
        schema: the pydantic model whose declared fields may be sent.
        limit: the agent limit: a list is cut to its first ``limit`` items.
        rules: static domain rules, sent with every response.
        directives: static ``<llm_directives>`` entries.
        suggestions: static next actions, sent with every response; an app checks their
            targets when it builds its catalog.
        data_format: ``"toon"``, ``"compact"`` or ``"json"`` (indented); the app's choice
            (TOON unless it says) when not given; indented JSON presenting outside an app.
        delimiter: the TOON delimiter, ``"|"``, ``","`` or ``"\t"``; the app's when not given.
        ui_audience: ``"user"`` sends UI blocks and embeds for the user's eyes only (MCP's
            ``audience: ["user"]``), ``"all"`` for the model too; the app's when not given
            (``"user"`` unless it says); for everyone presenting outside an app.
        omit_none: leave out ``None`` values of fields declared optional with a ``None``
            default (``_omission``).
        redact: paths of fields to redact (SPEC §16): ``"ssn"``, ``"*.email"``,
            ``"lines[*].cost"``.
        censor: what a redacted value becomes: a text (``"[REDACTED]"``) or a function of
            the value.
        truncation_notice: ``(hidden) -> UIBlock``, replacing the default notice (a paging
            action's page sends the paging notice, which carries the cursor: SPEC §5.4).
    """

    def __init__(
        self,
        name: str,
        schema: type[BaseModel],
        *,
        limit: int | None = None,
        rules: Sequence[str] = (),
        directives: Sequence[str] = (),
        suggestions: Sequence[Suggestion] = (),
        data_format: DataFormat | None = None,
        delimiter: Delimiter | None = None,
        ui_audience: Audience | None = None,
        omit_none: bool = False,
        redact: Sequence[str] = (),
        censor: Censor = DEFAULT_CENSOR,
        truncation_notice: Callable[[int], UIBlock] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise DefinitionError("a Presenter needs a non-empty name")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise DefinitionError(f"Presenter '{name}': schema must be a pydantic model class")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise DefinitionError(f"Presenter '{name}': limit must be an int; got {limit!r}")
        if limit is not None and limit < 0:
            raise DefinitionError(f"Presenter '{name}': limit cannot be negative; got {limit}")
        try:
            self.style = Style(data_format, delimiter, ui_audience)
        except DefinitionError as exc:
            raise DefinitionError(f"Presenter '{name}': {exc}") from None
        # A bare str is iterable too: it would become one bullet per character.
        if isinstance(rules, str) or isinstance(directives, str):
            raise DefinitionError(f"Presenter '{name}': rules and directives take a list of str")
        rules, directives = tuple(rules), tuple(directives)  # a generator is read once
        for text in (*rules, *directives):
            if not isinstance(text, str):
                raise DefinitionError(f"Presenter '{name}': static rules are strings")
        suggestions = tuple(suggestions)
        if not all(isinstance(s, Suggestion) for s in suggestions):
            raise DefinitionError(f"Presenter '{name}': suggestions take Suggestion values")
        if not isinstance(omit_none, bool):
            raise DefinitionError(f"Presenter '{name}': omit_none must be True or False")
        self.name = name
        self.schema = schema
        self.limit = limit
        self.data_format: DataFormat | None = data_format
        try:
            self._mask = Mask(schema)
        except DefinitionError as exc:
            raise DefinitionError(f"Presenter '{name}': {exc}") from None
        self._static_rules = tuple(rules)
        self._static_directives = tuple(directives)
        self._static_suggestions = suggestions
        self._omit = plan_of(schema) if omit_none else None
        self._redaction = (
            Redaction(f"Presenter '{name}'", redact, censor, schema) if redact else None
        )
        # Read only when masking makes plain dicts of exactly the schema's fields.
        plain = self._redaction is not None and self._mask.plain
        self._text_fields = text_fields(schema) if plain else None
        self._notice = truncation_notice
        self._embeds: dict[str, Presenter] = {}
        self._select_keys: tuple[str, ...] = self._mask.keys
        self._ui = _Hooks()
        self._rules = _Hooks()
        self._suggest = _Hooks()
        self._directives: list[_Hook] = []
        self._reads_context = False
        self.tenant_column: str | None = None
        """The model's tenant column, for scoping queries (``from_model``); never sent."""

    @classmethod
    def from_model(
        cls,
        model: Any,
        *,
        name: str | None = None,
        exclude: Collection[str] = (),
        tenant: str | None = None,
        **options: Any,
    ) -> Presenter:
        """A Presenter whose whitelist is a model's fields, minus ``exclude`` and the tenant.

        ``model`` is a pydantic model or a SQLAlchemy declarative class (columns become
        fields, comments descriptions). The tenant column (see ``_present.models``) is
        left out and named in ``tenant_column``; ``name`` defaults to the class name and
        ``options`` are the constructor's (``limit``, ``rules``, ...).

        Raises:
            DefinitionError: on another kind of model, or names it does not have.
        """
        title: str = name or str(getattr(model, "__name__", ""))
        schema, tenant_column = schema_from_model(title or "?", model, exclude, tenant)
        presenter = cls(title, schema, **options)
        presenter.tenant_column = tenant_column
        return presenter

    def __repr__(self) -> str:
        return f"Presenter({self.name!r}, {self.schema.__name__})"

    def _register(self, hooks: list[_Hook], fn: Callable[..., Any]) -> None:
        hook = _hook(fn)
        hooks.append(hook)
        if hook[1]:
            self._reads_context = True

    # -- registration --------------------------------------------------------------------

    def rules(self, fn: F) -> F:
        """Registers dynamic rules for a single object: ``fn(data[, ctx]) -> str | [str]``."""
        self._register(self._rules.one, fn)
        return fn

    def collection_rules(self, fn: F) -> F:
        """Registers dynamic rules computed once for a whole list."""
        self._register(self._rules.many, fn)
        return fn

    def ui(self, fn: F) -> F:
        """Registers UI blocks for a single object: ``fn(data[, ctx]) -> UIBlock | [UIBlock]``."""
        self._register(self._ui.one, fn)
        return fn

    def collection_ui(self, fn: F) -> F:
        """Registers UI blocks computed once for a whole list."""
        self._register(self._ui.many, fn)
        return fn

    def suggest(self, fn: F) -> F:
        """Registers next actions for a single object: ``fn(...) -> Suggestion | [...]``."""
        self._register(self._suggest.one, fn)
        return fn

    def collection_suggest(self, fn: F) -> F:
        """Registers next actions computed once for a whole list."""
        self._register(self._suggest.many, fn)
        return fn

    def directives(self, fn: F) -> F:
        """Registers dynamic ``<llm_directives>`` entries, for objects and lists alike."""
        self._register(self._directives, fn)
        return fn

    def truncation_notice(self, fn: Callable[[int], UIBlock]) -> Callable[[int], UIBlock]:
        """Replaces the default truncation notice with ``fn(hidden) -> UIBlock``."""
        self._notice = fn
        return fn

    def embed(self, key: str, child: Presenter) -> Presenter:
        """Makes ``child`` own the value at ``key`` (SPEC §6); returns ``self`` for chaining.

        Raises:
            DefinitionError: on a bad key, a key embedded twice, or a cycle.
        """
        if not isinstance(key, str) or not key:
            raise DefinitionError(f"Presenter '{self.name}': embed key must be a non-empty str")
        if not isinstance(child, Presenter):
            raise DefinitionError(f"Presenter '{self.name}': embed '{key}' needs a Presenter")
        if key in self._embeds:
            raise DefinitionError(f"Presenter '{self.name}': '{key}' is already embedded")
        if child is self or child._reaches(self):
            raise DefinitionError(
                f"Presenter '{self.name}': embedding '{child.name}' at '{key}' makes a cycle"
            )
        self._embeds[key] = child
        if key not in self._select_keys:
            self._select_keys += (key,)
        return self

    def _reaches(self, target: Presenter) -> bool:
        return any(c is target or c._reaches(target) for c in self._embeds.values())

    @property
    def select_keys(self) -> tuple[str, ...]:
        """The top-level keys of the data block: schema fields, then embed-only keys."""
        return self._select_keys

    @property
    def uses_context(self) -> bool:
        """Whether a callback, its own or a child's, takes the context (``(data, ctx)``)."""
        embeds = self._embeds  # tested first: an empty generator costs 0.2 µs a call
        return self._reads_context or (
            bool(embeds) and any(c.uses_context for c in embeds.values())
        )

    @property
    def has_ui_callbacks(self) -> bool:
        """Whether UI callbacks are registered (for single objects or lists)."""
        return bool(self._ui.one or self._ui.many)

    @property
    def static_suggestions(self) -> tuple[Suggestion, ...]:
        """The suggestions sent with every response (``suggestions=``)."""
        return self._static_suggestions

    @property
    def embeds(self) -> Mapping[str, Presenter]:
        """The embedded child Presenters, by key."""
        return MappingProxyType(self._embeds)

    def unknown_redactions(self) -> list[str]:
        """The ``redact`` paths that start with no key the data holds (checked by the app,
        once every embed is declared)."""
        return self._redaction.unknown(self.select_keys) if self._redaction else []

    # -- rendering -----------------------------------------------------------------------

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
            built, cut = self._builder(data, ctx, select, style, page)
            response = built.build()
        return response if cut is None else paged(response, built.data, *cut)

    def compile(self, style: Style) -> Plan:
        """The plan of this Presenter presenting one object for an app styled ``style``.

        An app makes one per action when its catalog freezes (``Action.freeze``).
        """
        return Plan.of(
            self.style,
            style,
            self._static_directives,
            self._static_rules,
            self._static_suggestions,
        )

    def planned(
        self, plan: Plan, data: Any, ctx: Any, select: Sequence[str] | None
    ) -> ToolResponse:
        """``present(data, ctx, select, style=plan.style)`` for one object, through ``plan``.

        Without an intermediate builder: the callbacks' values are checked as a builder
        checks them and rendered after the plan's fixed blocks. Children are presented as
        ``present`` presents them (``_embedded``) and their parts follow the Presenter's
        own. A list, or a Presenter that redacts or omits (itself or a child), takes
        ``present``.

        Raises:
            PresenterError: if the data does not fit the schema or a callback fails.
        """
        if self._redaction is not None or self._omit is not None:
            return self.present(data, ctx, select, style=plan.style)
        if data is None or isinstance(data, list | tuple):
            return self.present(data, ctx, select, style=plan.style)
        if type(data) is not dict and isinstance(data, Iterator | ValuesView):
            return self.present(data, ctx, select, style=plan.style)
        embeds = self._embeds
        if embeds and self._finishes():  # redaction searches every part: present's path
            return self.present(data, ctx, select, style=plan.style)
        try:  # ``_masked_one``, without its frame
            masked = self._mask.one(data)
        except ValidationError as exc:
            raise self._error(exc, collection=False) from exc
        # Before this Presenter's callbacks, which read the children's data (as ``_render``).
        children = self._embedded(data, masked, ctx, True) if embeds else ()
        ui_blocks: list[UIBlock] = []
        attachments: list[Attachment] = []
        directives: list[str] = []
        rules: list[str] = []
        suggestions: list[Suggestion] = []
        try:  # in _run_callbacks' order, each kind checked before the next one runs
            if hooks := self._ui.one:
                add_ui(ui_blocks, attachments, _collect(hooks, masked, ctx, _UI_VALUES))
            if hooks := self._directives:
                add_checked(directives, _collect(hooks, masked, ctx, str), str, "directive")
            if hooks := self._rules.one:
                add_checked(rules, _collect(hooks, masked, ctx, str), str, "rule")
            if hooks := self._suggest.one:
                found = _collect(hooks, masked, ctx, Suggestion)
                add_checked(suggestions, found, Suggestion, "suggestion")
        except Exception as exc:
            raise PresenterError.callback_failed(self.name, exc) from exc
        shown: list[UIBlock] = []
        for view in children:  # as ``ResponseBuilder.merge`` adds them, after the own parts
            shown += view.ui_blocks
            shown += view.embeds
            directives += view.directives
            rules += view.system_rules
            suggestions += view.suggestions
        if select is not None:
            masked = select_fields(masked, self.select_keys, select)
        return plan.render(
            masked,
            tuple(ui_blocks),
            tuple(shown),
            directives,
            rules,
            suggestions,
            tuple(attachments),
        )

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
    ) -> tuple[ResponseBuilder, tuple[PageCut, str | None] | None]:
        """``builder``'s work, and for a page what was cut and the next cursor."""
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
        if traces:
            built.finishing(self._scrubber(traces).view)
        built.data = select_fields(built.data, self.select_keys, select)
        app = style_of(ctx) if style is None else style
        own = self.style  # the Presenter's choices first, then the app's, then the defaults
        built.data_format = own.data_format or app.data_format or "json"
        built.delimiter = own.delimiter or app.delimiter or "|"
        built.user_ui = (own.ui_audience or app.ui_audience) == "user"
        return built, cut

    def _scrubber(self, traces: Traces) -> Scrubber:
        """The search for ``traces``, reading only the fields the schema says hold text;
        an embed's key holds its child's data, which is walked."""
        fields = self._text_fields
        if fields is not None and self._embeds:
            fields = {**fields, **dict.fromkeys(self._embeds, WALK)}
        filled = self._redaction.filled() if self._redaction is not None else ((), "")
        return Scrubber(traces, fields, filled)

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
                built.ui(*_collect(ui_hooks, data, ctx, _UI_VALUES))
            if self._static_directives:
                built.directive(*self._static_directives)
            if self._directives:
                built.directive(*_collect(self._directives, data, ctx, str))
            if self._static_rules:
                built.rule(*self._static_rules)
            if rule_hooks := self._rules.of(collection):
                built.rule(*_collect(rule_hooks, data, ctx, str))
            if self._static_suggestions:
                built.suggestion(*self._static_suggestions)
            if suggest_hooks := self._suggest.of(collection):
                built.suggestion(*_collect(suggest_hooks, data, ctx, Suggestion))
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
