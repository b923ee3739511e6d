"""Presenters: masked, limited, rule-carrying views of one domain entity (SPEC §5, §6, §11)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel

from mcpfusion._errors import DefinitionError
from mcpfusion._present.masking import Mask
from mcpfusion._present.models import schema_from_model
from mcpfusion._present.omission import plan_of
from mcpfusion._present.planning import Planning
from mcpfusion._present.presenting import Hook, Hooks
from mcpfusion._present.redaction import DEFAULT_CENSOR, Censor, Redaction
from mcpfusion._present.style import Audience, Style
from mcpfusion._present.text_fields import text_fields
from mcpfusion._wire.datablock import DataFormat, Delimiter
from mcpfusion._wire.parts import Suggestion, UIBlock

F = TypeVar("F", bound=Callable[..., Any])


def _hook(fn: Callable[..., Any]) -> Hook:
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


def suggest(tool: str, reason: str) -> Suggestion:
    """A next action for the agent, for suggestion callbacks: ``suggest("billing.remind", ...)``."""
    return Suggestion(tool, reason)


class Presenter(Planning):
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
        self._ui = Hooks()
        self._rules = Hooks()
        self._suggest = Hooks()
        self._directives: list[Hook] = []
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

    def _register(self, hooks: list[Hook], fn: Callable[..., Any]) -> None:
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
