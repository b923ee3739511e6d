"""What an action is, checked where it is declared: its options, parameters and views."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final, Literal, get_args

from mcpfusion._errors import DefinitionError
from mcpfusion._present.plan import Plan
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.statesync import check_freshness, check_patterns
from mcpfusion._present.style import APP_DEFAULT, Style
from mcpfusion._tools.client import Feature
from mcpfusion._tools.client_needs import Confirm, confirm_option, features_option
from mcpfusion._tools.declared import DeclaredSchema
from mcpfusion._tools.pool import Pace
from mcpfusion._tools.signature import (
    STATE,
    Param,
    fits_declared,
    is_async,
    model,
    schema,
    signature,
    takes_null,
)
from mcpfusion._tools.structured import OutputSchema
from mcpfusion._tools.views import Returns, Views

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""Names MCP allows for tools; action names follow the same rule."""

TaskMode = Literal["always", "optional", "never"]
"""Whether an action's calls run as MCP tasks (SEP-2663) for clients that negotiated them."""

TASK_MODES: Final[tuple[TaskMode, ...]] = get_args(TaskMode)

TaskBegins = Literal["call", "handler"]
"""When a task call becomes a task: as it starts, or when its handler says so."""


class ActionDefinition:
    """An action as declared: its checked options, its parameters and what listing reads.

    The base of ``Action``, which adds the call path.
    """

    def __init__(
        self,
        tool: str,
        name: str,
        handler: Callable[..., Any],
        *,
        description: str = "",
        returns: Returns = None,
        output_schema: Any = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        context_type: type | None = None,
        reserved: Collection[str] = (),
        requires: Collection[str] = (),
        timeout: float | None = None,
        concurrency: int | None = None,
        loggable: Collection[str] = (),
        state_type: type | None = None,
        style: Style = APP_DEFAULT,
        stale: bool = False,
        fresh_for: float | None = None,
        invalidates: Collection[str] = (),
        confirm: bool | str | Confirm | None = None,
        requires_client: Collection[Feature] = (),
        input_schema: Mapping[str, Any] | None = None,
        open_world: bool | None = None,
        max_bytes: int | None = None,
        paging: bool = False,
        task: TaskMode = "never",
        task_begins: TaskBegins = "call",
    ) -> None:
        owner = f"{tool}/{name}"
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise DefinitionError(
                f"action name {name!r} of tool '{tool}' must be 1-64 letters, digits or _.-"
            )
        if not callable(handler):
            raise DefinitionError(f"{owner}: the handler must be callable; got {handler!r}")
        if not isinstance(description, str):
            raise DefinitionError(f"{owner}: description must be a str")
        if returns is not None and output_schema is not None:
            raise DefinitionError(
                f"{owner}: pass either returns= (a Presenter) or output_schema= (structured "
                "output), not both; Presenters never produce structuredContent."
            )
        views = None
        # Every Presenter it is known to render with (a selector's are known per call).
        self.presenters: tuple[Presenter, ...] = ()
        if isinstance(returns, Presenter):
            self.presenters = (returns,)
        elif returns is not None:
            views = Views(owner, returns)
            self.presenters = views.presenters
        self.views = views
        """The Presenter per caller (``returns=`` a mapping or a selector), if any."""
        for flag, value in (
            ("read_only", read_only),
            ("destructive", destructive),
            ("idempotent", idempotent),
        ):
            if not isinstance(value, bool):
                raise DefinitionError(f"{owner}: {flag} must be True or False; got {value!r}")
        if read_only and destructive:
            raise DefinitionError(f"{owner}: an action cannot be both read_only and destructive")
        if not isinstance(paging, bool):
            raise DefinitionError(f"{owner}: paging must be True or False; got {paging!r}")
        if paging and not (isinstance(returns, Presenter) and returns.limit):
            # One Presenter: a view per caller could page by another limit than the cursor's.
            raise DefinitionError(
                f"{owner}: paging needs returns= one Presenter with a limit (the rows of one "
                "page), e.g. Presenter(..., limit=50), not a view per caller"
            )
        self.pages = paging
        """Whether it pages its Presenter's list, so accepts ``_cursor`` (SPEC §5.4)."""
        if open_world is not None and not isinstance(open_world, bool):
            raise DefinitionError(f"{owner}: open_world must be True, False or None")
        self.open_world = open_world
        if task not in TASK_MODES:
            raise DefinitionError(
                f"{owner}: task must be 'always', 'optional' or 'never'; got {task!r}"
            )
        self.task: TaskMode = task
        """Whether its calls run as MCP tasks for clients that negotiated the extension."""
        if task_begins not in ("call", "handler"):
            raise DefinitionError(
                f"{owner}: task_begins must be 'call' or 'handler'; got {task_begins!r}"
            )
        if task_begins == "handler" and task == "never":
            raise DefinitionError(
                f"{owner}: task_begins='handler' needs task='always' or 'optional'"
            )
        self.task_begins: TaskBegins = task_begins
        """When a task call becomes a task: as it starts, or at ``ctx.continue_as_task()``."""
        """Whether it reaches beyond the server (the web, other services): ``openWorldHint``;
        ``None`` leaves the hint unsent."""
        self.tool = tool
        self.name = name
        self.handler = handler
        self.description = description
        self.presenter = returns if isinstance(returns, Presenter) else None
        """The one Presenter of every caller; ``None`` without one or with ``views``."""
        self.output = OutputSchema(output_schema, owner) if output_schema is not None else None
        self.read_only = read_only
        self.destructive = destructive
        # A read-only action changes nothing, so repeating it changes nothing either.
        self.idempotent = idempotent or read_only
        self.requires = _scopes(owner, requires)
        """The scopes a caller needs to see and call this action."""
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise DefinitionError(
                f"{owner}: timeout is a positive number of seconds; got {timeout!r}"
            )
        self.timeout: float | None = timeout
        if concurrency is not None and (
            isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
        ):
            raise DefinitionError(
                f"{owner}: concurrency is a whole number of calls, at least 1; got {concurrency!r}"
            )
        self.concurrency = concurrency
        """How many calls of it may run at once in this process (``None``: no limit)."""
        if max_bytes is not None and (type(max_bytes) is not int or max_bytes < 1):
            raise DefinitionError(
                f"{owner}: max_bytes is a positive int or None; got {max_bytes!r}"
            )
        self.max_bytes = max_bytes
        """The byte cap of its answers (SPEC §17); ``None``: the app's."""
        self.style = style
        """The app's style: how a Presenter or a plain value is written unless it says."""
        # A plain value's format and delimiter, read once: two property calls less per call.
        self._plain_style = (style.format, style.toon_delimiter)
        self.is_async = is_async(handler)
        self._pace = Pace()  # a sync handler's: whether its calls are waited for awake
        fields, names, injected = signature(owner, handler, context_type, reserved, state_type)
        self.injected: tuple[tuple[str, type], ...] = tuple(
            i for i in injected if i[1] is not STATE
        )
        self.state_params = tuple(name for name, kind in injected if kind is STATE)
        """The parameters that receive the app's state (annotated with its type)."""
        self.params_model = model(owner, fields)
        self.params_schema = schema(owner, self.params_model)
        """The parameters' JSON Schema, made once: a type agents cannot see fails here."""
        # The validator itself: `model_validate` only adds a Python-level call around it.
        self._validate = self.params_model.__pydantic_validator__.validate_python
        self.params = tuple(
            Param(
                name=names[field],
                field=field,
                wire=info.alias or field,
                required=info.is_required(),
            )
            for field, info in self.params_model.model_fields.items()
        )
        self.wires = frozenset(p.wire for p in self.params)
        """The argument names agents send."""
        properties = self.params_schema.get("properties", {})
        self.null_absent = frozenset(
            p.wire for p in self.params if not p.required and not takes_null(properties, p.wire)
        )
        """The optional parameters whose type takes no ``null``: there it means absent."""
        # Each field is named after its parameter: the validated model's dict is the kwargs.
        self._fields_are_names = all(p.name == p.field for p in self.params)
        self.declared = None if input_schema is None else DeclaredSchema(owner, input_schema)
        """The input schema declared as JSON Schema (``input_schema=``), if any: then it is
        the advertised ``params_schema`` and what ``parse`` enforces."""
        if self.declared is not None:
            fits_declared(owner, self.declared, self.params)
            self.params_schema = self.declared.schema
        self.takes_nothing = self.declared is None and not self.params
        """Whether it has no parameters to validate: a call sending none skips ``parse``."""
        self.loggable = _loggable(owner, loggable, self.params)
        """The parameter names whose values an audit log may record."""
        # State sync (SPEC §15) and what the action needs of the client (_client).
        self.fresh_for = check_freshness(owner, stale, fresh_for)
        self.stale = stale
        self.invalidates = check_patterns(owner, invalidates)
        """The state-name patterns a successful call makes stale."""
        if self.invalidates and read_only:
            raise DefinitionError(f"{owner}: a read-only action changes nothing to invalidate")
        self.confirm = confirm_option(owner, confirm)
        self.requires_client = features_option(owner, requires_client)
        # One flag for the call path: an action without these options pays one test.
        self.talks = bool(self.invalidates or self.confirm or self.requires_client)
        # Nothing of the call's request reaches the handler (no context, no state), and
        # no step of the call path reads it (a timeout cancels through it, talking uses it).
        # A Presenter per caller reads the caller's identity off the request.
        self.without_request = not (
            self.injected or self.state_params or self.talks or timeout or views
        )
        self.plans: dict[Presenter, Plan] = {}
        """How each of its Presenters (its own, or one per caller's scopes) presents one
        object, made when the app's catalog freezes; a selector's are not known."""

    def freeze(self) -> None:
        """Compiles its Presenters' plans (``_present.plan``) for the app's style."""
        self.plans = {presenter: presenter.compile(self.style) for presenter in self.presenters}

    def __repr__(self) -> str:
        return f"Action({self.tool!r}, {self.name!r})"

    @property
    def state_name(self) -> str:
        """The action's state name (SPEC §15): ``{tool}.{action}``."""
        return f"{self.tool}.{self.name}"

    @property
    def required(self) -> tuple[str, ...]:
        """The argument names an agent must send, in signature order."""
        return tuple(p.wire for p in self.params if p.required)

    @property
    def select_keys(self) -> tuple[str, ...]:
        """The top-level keys of this action's response schema; empty without one."""
        if self.presenter is not None:
            return self.presenter.select_keys
        if self.views is not None:
            return tuple(dict.fromkeys(k for p in self.presenters for k in p.select_keys))
        if self.output is not None:
            return self.output.keys
        return ()

    def select_keys_for(self, scopes: frozenset[str]) -> tuple[str, ...]:
        """The top-level keys of the response schema a caller holding ``scopes`` gets."""
        if self.views is None or self.views.selector is not None:
            return self.select_keys
        view = self.views.view_for(scopes)
        return view.select_keys if view is not None else ()

    def shown_to(self, scopes: frozenset[str]) -> bool:
        """Whether a caller holding ``scopes`` may call it, so sees it listed."""
        return self.requires <= scopes and (self.views is None or self.views.shown_to(scopes))


def _scopes(owner: str, requires: Collection[str]) -> frozenset[str]:
    if isinstance(requires, str) or not isinstance(requires, Collection):
        raise DefinitionError(
            f"{owner}: requires is a set of scope names, e.g. {{'billing:write'}}"
        )
    if not all(isinstance(scope, str) and scope and not scope.isspace() for scope in requires):
        raise DefinitionError(f"{owner}: every scope in requires is a non-empty str")
    return frozenset(requires)


def _loggable(owner: str, loggable: Collection[str], params: Sequence[Param]) -> tuple[str, ...]:
    if isinstance(loggable, str) or not isinstance(loggable, Collection):
        raise DefinitionError(f"{owner}: loggable is a collection of parameter names")
    known = {p.name for p in params}
    unknown = [name for name in loggable if name not in known]
    if unknown:
        raise DefinitionError(
            f"{owner}: loggable names {', '.join(map(repr, unknown))}, which is not a parameter; "
            f"parameters: {', '.join(sorted(known)) or '(none)'}"
        )
    return tuple(p.name for p in params if p.name in set(loggable))
