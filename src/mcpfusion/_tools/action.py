"""An action: a handler, the pydantic model of its parameters, and how its result is sent."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, create_model

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity
from mcpfusion._present.builder import ResponseBuilder, as_response
from mcpfusion._present.content import attachments_of
from mcpfusion._present.failures import no_view
from mcpfusion._present.paging import Pager
from mcpfusion._present.plan import Plan
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse, attached, render_value, success
from mcpfusion._present.statesync import check_freshness, check_patterns
from mcpfusion._present.style import APP_DEFAULT, Style
from mcpfusion._tools.capping import capped
from mcpfusion._tools.client import Confirm, Feature, confirm_option, features_option
from mcpfusion._tools.context import Context, Request
from mcpfusion._tools.declared import DeclaredSchema
from mcpfusion._tools.jsonschema import QuietJsonSchema
from mcpfusion._tools.pool import Pace
from mcpfusion._tools.structured import OutputSchema, failed
from mcpfusion._tools.threads import run_in_thread
from mcpfusion._tools.views import Returns, Views

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""Names MCP allows for tools; action names follow the same rule."""

TaskMode = Literal["always", "optional", "never"]
"""Whether an action's calls run as MCP tasks (SEP-2663) for clients that negotiated them."""

TASK_MODES: Final[tuple[TaskMode, ...]] = get_args(TaskMode)

TaskBegins = Literal["call", "handler"]
"""When a task call becomes a task: as it starts, or when its handler says so."""

_PARAMS_CONFIG: Final = ConfigDict(extra="forbid", protected_namespaces=())

OFF_LOOP_ROWS: Final = 2_000
"""From this many rows a Presenter renders in a worker thread, off the event loop."""


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a handler as agents see it.

    Attributes:
        name: the handler's parameter name.
        field: the field of the parameters model (differs when ``name`` would shadow a
            ``BaseModel`` attribute such as ``json``).
        wire: the argument name agents send (the field's alias, else ``name``).
        required: whether the agent must send it.
    """

    name: str
    field: str
    wire: str
    required: bool


class Action:
    """One operation of a tool. Created by ``Tool.action``; not usually built by hand.

    Raises:
        DefinitionError: on a bad name, contradictory options, or a handler signature that
            cannot be described to an agent.
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
        self.is_async = _is_async(handler)
        self._pace = Pace()  # a sync handler's: whether its calls are waited for awake
        fields, names, injected = _signature(owner, handler, context_type, reserved, state_type)
        self.injected: tuple[tuple[str, type], ...] = tuple(
            i for i in injected if i[1] is not _STATE
        )
        self.state_params = tuple(name for name, kind in injected if kind is _STATE)
        """The parameters that receive the app's state (annotated with its type)."""
        self.params_model = _model(owner, fields)
        self.params_schema = _schema(owner, self.params_model)
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
            p.wire for p in self.params if not p.required and not _takes_null(properties, p.wire)
        )
        """The optional parameters whose type takes no ``null``: there it means absent."""
        # Each field is named after its parameter: the validated model's dict is the kwargs.
        self._fields_are_names = all(p.name == p.field for p in self.params)
        self.declared = None if input_schema is None else DeclaredSchema(owner, input_schema)
        """The input schema declared as JSON Schema (``input_schema=``), if any: then it is
        the advertised ``params_schema`` and what ``parse`` enforces."""
        if self.declared is not None:
            _fits_declared(owner, self.declared, self.params)
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

    def parse(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validates the arguments and returns the handler's keyword arguments.

        Raises:
            pydantic.ValidationError: if they do not fit the parameters.
            InvalidArguments: if they do not fit a declared input schema (``input_schema=``);
                the handler's parameters then receive the validated values as sent.
        """
        if self.declared is not None:
            self.declared.check(arguments)
            return {p.name: arguments[p.wire] for p in self.params if p.wire in arguments}
        if not arguments and self.takes_nothing:
            return {}  # nothing to validate: the common case of an action without parameters
        model = self._validate(arguments)
        if self._fields_are_names:  # the model's own dict: no attribute read per parameter
            return dict(model.__dict__)
        return {p.name: getattr(model, p.field) for p in self.params}

    async def invoke(self, kwargs: dict[str, Any], request: Request | None, context: Any) -> Any:
        """Runs the handler; a sync handler runs in a worker thread (see ``_threads``).

        A thread cannot be interrupted: when the call is cancelled, the caller stops
        waiting, ``ctx.cancelled`` turns true, and the handler finishes in the background,
        its result dropped. ``request`` is ``None`` for a call nothing reads it from
        (``without_request``).
        """
        if request is not None:  # a call without one has nothing to inject
            for name, kind in self.injected:
                kwargs[name] = Context(request) if _needs_base(context, kind) else context
            if self.state_params:
                state = Context(request).state  # raises when the lifespan is not running
                for name in self.state_params:
                    kwargs[name] = state
        if self.is_async:
            try:
                return await self.handler(**kwargs)
            except anyio.get_cancelled_exc_class():
                if request is not None:
                    request.cancel()
                raise
        cancel = _unread if request is None else request.cancel
        result = await run_in_thread(functools.partial(self.handler, **kwargs), cancel, self._pace)
        return await result if inspect.isawaitable(result) else result

    def failed(self, response: ToolResponse) -> ToolResponse:
        """The envelope a failed call sends: on a structured action, always an error."""
        return failed(response) if self.output is not None else response

    def select_keys_for(self, scopes: frozenset[str]) -> tuple[str, ...]:
        """The top-level keys of the response schema a caller holding ``scopes`` gets."""
        if self.views is None or self.views.selector is not None:
            return self.select_keys
        view = self.views.view_for(scopes)
        return view.select_keys if view is not None else ()

    def shown_to(self, scopes: frozenset[str]) -> bool:
        """Whether a caller holding ``scopes`` may call it, so sees it listed."""
        return self.requires <= scopes and (self.views is None or self.views.shown_to(scopes))

    async def respond(
        self,
        value: Any,
        context: Any,
        select: Sequence[str] | None,
        page: Pager | None = None,
        identity: Identity | None = None,
    ) -> ToolResponse:
        """Turns the handler's value into the response: SPEC §13's one wrapping rule.

        ``page`` is the page a call of a paging action asks for (SPEC §5.4); ``identity``
        picks the Presenter of an action with one per caller (``views``).

        Raises:
            PresenterError, SerializationError, OutputMismatchError: server defects.
            TypeError: a ``returns=`` selector gave something other than a Presenter.
        """
        response = self.response(value, context, select, page, identity)
        if response is None:
            presenter = self.presenter if self.views is None else self.views.pick(identity)
            return await present_off_loop(value, presenter, context, select, self.style)
        return response

    def response(
        self,
        value: Any,
        context: Any,
        select: Sequence[str] | None,
        page: Pager | None = None,
        identity: Identity | None = None,
    ) -> ToolResponse | None:
        """``respond`` without a frame of its own: ``None`` when the value is a list long
        enough to be presented in a worker thread (then ``respond`` does it).

        Raises:
            PresenterError, SerializationError, OutputMismatchError: server defects.
            TypeError: a ``returns=`` selector gave something other than a Presenter.
        """
        output, presenter = self.output, self.presenter
        if self.views is not None:
            presenter = self.views.pick(identity)
            if presenter is None:  # admitted, yet the selector now refuses: send nothing
                return no_view(self.views.scopes)
        if type(value) is ResponseBuilder:
            value.caused_by(self.state_name)  # its invalidation entries are this action's
        if output is not None:
            # Structured output (SPEC §12): whatever the handler returns is checked against
            # the schema before it is sent, even a response it built itself.
            if value is None or isinstance(value, ToolResponse | ResponseBuilder):
                return output.resend(as_response(value), select)
            return output.respond(value, select)
        if presenter is None:  # nothing to present off the loop
            if type(value) in _PLAIN:  # ``wrap``'s first case, without its frame
                return render_value(value, *self._plain_style)
            return wrap(value, None, context, select, self.style)
        if type(value) is dict and (plan := self.plans.get(presenter)) is not None:
            # One row, the common case: none of SPEC §13's other cases is a dict.
            return presenter.planned(plan, value, context, select)
        if page is None and isinstance(value, list | tuple) and len(value) >= OFF_LOOP_ROWS:
            return None
        return wrap(value, presenter, context, select, self.style, page)

    async def fit(
        self,
        response: ToolResponse,
        value: Any,
        context: Any,
        select: Sequence[str] | None,
        cap: int,
        page: Pager | None = None,
        identity: Identity | None = None,
    ) -> ToolResponse:
        """``response`` (what ``respond`` made of ``value``) fitted under ``cap`` bytes:
        rows left out are left out by rendering fewer of them again (SPEC §17).

        A page (SPEC §5.4) keeps its rows: its cursor names the row after them, so only
        its UI blocks can go.

        Raises:
            PresenterError, SerializationError, OutputMismatchError: server defects.
        """

        def render(part: Any) -> Awaitable[ToolResponse]:
            return self.respond(part, context, select, None, identity)

        rows = value if page is None else None
        return await capped(response, rows, render, cap, self.tool, self.name)


async def present_off_loop(
    value: Any,
    presenter: Presenter | None,
    context: Any,
    select: Sequence[str] | None = None,
    style: Style = APP_DEFAULT,
    page: Pager | None = None,
) -> ToolResponse:
    """``wrap``, with a large presentation run in a worker thread.

    One big call then does not stall every other call on the server.
    """
    if (
        presenter is not None
        and isinstance(value, list | tuple)
        and len(value) >= OFF_LOOP_ROWS
        and page is None  # a page masks `limit` rows only
    ):
        present = functools.partial(presenter.present, style=style, page=page)
        return await anyio.to_thread.run_sync(present, value, context, select)
    return wrap(value, presenter, context, select, style, page)


def wrap(
    value: Any,
    presenter: Presenter | None,
    context: Any,
    select: Sequence[str] | None = None,
    style: Style = APP_DEFAULT,
    page: Pager | None = None,
) -> ToolResponse:
    """SPEC §13's one wrapping rule, for an action without an output schema.

    ``style`` is the app's: how a Presenter or a plain value is written unless it says.

    Raises:
        PresenterError, SerializationError: server defects.
    """
    if presenter is None and type(value) in _PLAIN:
        # The common plain values first, each a single type test: none of them is a
        # response, a builder or an attachment (0.25 µs of a call returning a str).
        return render_value(value, style.format, style.toon_delimiter)
    match value:
        case ToolResponse():
            return value
        case ResponseBuilder():
            return value.build()
        case None:
            return success(None)
        case _ if (items := attachments_of(value)) is not None:
            return attached(items)
        case _ if presenter is not None:
            return presenter.present(value, context, select, style=style, page=page)
        case _:
            return render_value(value, style.format, style.toon_delimiter)


_PLAIN: Final = frozenset({str, int, float, bool, dict})


def _takes_null(properties: Mapping[str, Any], name: str) -> bool:
    """Whether the JSON Schema of parameter ``name`` accepts ``null``."""
    prop = properties.get(name)
    if not isinstance(prop, Mapping):
        return True  # described by nothing: leave its null to validation
    kind = prop.get("type")
    branches = prop.get("anyOf") or ()
    return (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or {"type": "null"} in branches
    )


def _unread() -> None:
    """The cancellation of a call whose request nobody reads: nothing to mark."""


class _StateMarker:
    """Marks a parameter that receives the app's state."""


_STATE: Final[type] = _StateMarker


def _fits_declared(owner: str, declared: DeclaredSchema, params: Sequence[Param]) -> None:
    """Checks that a declared schema gives every handler parameter its value."""
    properties, required = declared.properties(), declared.required()
    for param in params:
        if param.wire not in properties:
            raise DefinitionError(
                f"{owner}: parameter '{param.name}' is not a top-level property of "
                "input_schema, so no argument could reach it; add it to the schema's "
                "properties or remove the parameter"
            )
        if param.required and param.wire not in required:
            raise DefinitionError(
                f"{owner}: parameter '{param.name}' has no default but input_schema does not "
                "require it; give it a default or list it in the schema's required"
            )


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


def _is_async(handler: Callable[..., Any]) -> bool:
    call = getattr(handler, "__call__", None)  # noqa: B004 - objects with an async __call__
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


def _needs_base(context: Any, kind: type) -> bool:
    """Whether a ``Context`` parameter needs the framework's own, not the app's object."""
    return kind is Context and not isinstance(context, Context)


_Fields = dict[str, tuple[Any, Any]]


def _signature(
    owner: str,
    handler: Callable[..., Any],
    context_type: type | None,
    reserved: Collection[str],
    state_type: type | None = None,
) -> tuple[_Fields, dict[str, str], tuple[tuple[str, type], ...]]:
    """Reads a handler's parameters: model fields, field-to-parameter names, context ones."""
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as exc:
        raise DefinitionError(f"{owner}: cannot read the handler's signature ({exc})") from exc
    try:
        hints = typing.get_type_hints(_annotated(handler), include_extras=True)
    except Exception as exc:  # NameError and friends from unresolvable string annotations
        raise DefinitionError(
            f"{owner}: cannot resolve the handler's type hints ({exc}); define the types it "
            "names at module level so they can be found."
        ) from exc
    fields: _Fields = {}
    names: dict[str, str] = {}
    injected: list[tuple[str, type]] = []
    for param in signature.parameters.values():
        name = param.name
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise DefinitionError(
                f"{owner}: *{name} cannot be described to an agent; declare each parameter"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise DefinitionError(f"{owner}: parameter '{name}' is positional-only; drop the /")
        annotation = hints.get(name, Any)
        kind = _context_kind(annotation, context_type, state_type)
        if kind is not None:
            injected.append((name, kind))
            continue
        if name.startswith("_"):
            raise DefinitionError(
                f"{owner}: parameter '{name}' starts with '_', which is reserved for the "
                "framework (as in _select); rename it."
            )
        if name in reserved:
            raise DefinitionError(
                f"{owner}: parameter '{name}' is reserved in a grouped tool (it selects the "
                "action); rename it."
            )
        field = name
        while hasattr(BaseModel, field) or field in fields:
            field += "_"  # the wire keeps `name` through the alias
        default = Field(alias=name) if field != name else ...
        if param.default is not param.empty:
            default = Field(param.default, alias=name) if field != name else param.default
        fields[field] = (annotation, default)
        names[field] = name
    return fields, names, tuple(injected)


def _annotated(handler: Callable[..., Any]) -> Any:
    """The object whose annotations describe ``handler``'s parameters."""
    if isinstance(handler, functools.partial):
        return _annotated(handler.func)
    if inspect.isroutine(handler) or inspect.isclass(handler):
        return handler
    return type(handler).__call__  # a callable object: its __call__ has the annotations


def _context_kind(
    annotation: Any, context_type: type | None, state_type: type | None = None
) -> type | None:
    """The class a context parameter asks for (``_STATE`` for the app's state), or ``None``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = annotation.__origin__
    if not isinstance(annotation, type):
        return None
    if annotation is state_type:
        return _STATE
    if issubclass(annotation, Context):
        return annotation
    for product, kind in ((context_type, annotation), (state_type, _STATE)):
        if product is not None and annotation is not object:
            try:
                if issubclass(product, annotation):
                    return kind
            except TypeError:  # protocols that are not runtime-checkable
                return None
    return None


def _model(owner: str, fields: _Fields) -> type[BaseModel]:
    try:
        model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{owner.replace('/', '__')}__params", __config__=_PARAMS_CONFIG, **fields
        )
    except Exception as exc:  # pydantic's schema errors for types it cannot handle
        raise DefinitionError(
            f"{owner}: a parameter type cannot be validated from JSON ({exc}). Use JSON "
            "types, pydantic models, enums or Literal; to receive the request context, "
            "annotate the parameter with mcpfusion.Context or your context factory's "
            "return type."
        ) from exc
    return model


def _schema(owner: str, model: type[BaseModel]) -> dict[str, Any]:
    try:
        return model.model_json_schema(schema_generator=QuietJsonSchema)
    except Exception as exc:  # PydanticInvalidForJsonSchema, and what custom types raise
        raise DefinitionError(
            f"{owner}: a parameter type cannot be described in JSON Schema ({exc}), so no "
            "agent could know what to send. Use JSON types, pydantic models, enums or "
            "Literal."
        ) from exc
