"""Unit tests of mcpfusion._tools.action: handler signatures, context injection, invocation."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from mcpfusion import DefinitionError
from mcpfusion._present.presenter import Presenter
from mcpfusion._tools.action import Action
from mcpfusion._tools.context import Context, Request

pytestmark = pytest.mark.anyio


class Color(Enum):
    """An enum parameter."""

    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    """A nested model parameter."""

    city: str


class Session:
    """A context object of the app's own type, not a Context subclass."""

    def __init__(self, user: str) -> None:
        self.user = user


class AppContext(Context):
    """A Context subclass."""


def _action(handler: Any, **options: Any) -> Action:
    return Action("t", options.pop("name", "a"), handler, **options)


def test_params_from_the_signature() -> None:
    """Defaults, Annotated fields, Literal, enums and nested models become the model."""

    # ``untyped`` lacks an annotation on purpose: such a parameter is still accepted.
    def handler(  # type: ignore[no-untyped-def]
        name: Annotated[str, Field(description="Who", min_length=1)],
        kind: Literal["x", "y"] = "x",
        color: Color = Color.RED,
        where: Address | None = None,
        untyped=3,
    ) -> None: ...

    action = _action(handler)
    assert [(p.name, p.wire, p.required) for p in action.params] == [
        ("name", "name", True),
        ("kind", "kind", False),
        ("color", "color", False),
        ("where", "where", False),
        ("untyped", "untyped", False),
    ]
    assert action.required == ("name",)
    kwargs = action.parse({"name": "Ada", "color": "blue", "where": {"city": "Porto"}})
    assert kwargs == {
        "name": "Ada",
        "kind": "x",
        "color": Color.BLUE,
        "where": Address(city="Porto"),
        "untyped": 3,
    }


def test_extra_fields_are_forbidden() -> None:
    """Unknown arguments fail validation."""
    with pytest.raises(ValidationError, match="Extra inputs"):
        _action(lambda x: None).parse({"x": 1, "y": 2})


def test_names_that_shadow_basemodel_attributes() -> None:
    """A parameter called `json` or `copy` keeps its name on the wire and in the call."""

    def handler(json: int, copy: str = "c", json_: int = 0) -> None: ...

    action = _action(handler)
    assert [(p.name, p.wire) for p in action.params] == [
        ("json", "json"),
        ("copy", "copy"),
        ("json_", "json_"),
    ]
    assert action.parse({"json": 1, "json_": 2}) == {"json": 1, "copy": "c", "json_": 2}


def test_alias_names_the_wire_argument() -> None:
    """An alias from Field lets a Python-keyword-like argument reach the handler."""

    def handler(from_: Annotated[str, Field(alias="from")]) -> None: ...

    action = _action(handler)
    assert action.required == ("from",)
    assert action.parse({"from": "x"}) == {"from_": "x"}


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (lambda *args: None, r"\*args cannot be described"),
        (lambda **kw: None, r"\*kw cannot be described"),
        (lambda _hidden: None, "starts with '_'"),
        (lambda action: None, "reserved in a grouped tool"),
        (lambda x: None, None),
    ],
    ids=["varargs", "varkw", "underscore", "reserved", "fine"],
)
def test_signature_checks(handler: Any, message: str | None) -> None:
    """Signatures an agent could not call raise at definition time."""
    if message is None:
        _action(handler, reserved=("action",))
        return
    with pytest.raises(DefinitionError, match=message):
        _action(handler, reserved=("action",))


def test_positional_only_is_rejected() -> None:
    """Arguments are passed by name, so positional-only parameters cannot work."""

    def handler(x: int, /) -> None: ...

    with pytest.raises(DefinitionError, match="positional-only"):
        _action(handler)


def test_unresolvable_hints_explain_the_fix() -> None:
    """A string annotation naming an unknown type says where to define it."""

    def handler(x: NotDefinedAnywhere) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(DefinitionError, match="define the types it names at module level"):
        _action(handler)


def test_types_pydantic_cannot_validate() -> None:
    """A parameter of an arbitrary class is rejected with the way to get the context."""

    def handler(lock: threading.Lock) -> None: ...

    with pytest.raises(DefinitionError, match=r"mcpfusion\.Context"):
        _action(handler)


def test_types_without_a_json_schema() -> None:
    """A type pydantic validates but cannot describe to an agent fails when defined."""

    def handler(callback: Callable[[], int]) -> None: ...

    with pytest.raises(DefinitionError, match="cannot be described in JSON Schema"):
        _action(handler)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "has space"}, "1-64 letters"),
        ({"name": "x" * 65}, "1-64 letters"),
        ({"returns": "nope"}, "takes a Presenter"),
        ({"read_only": True, "destructive": True}, "both read_only and destructive"),
        ({"read_only": 1}, "read_only must be True or False"),
        ({"description": 3}, "description must be a str"),
        ({"output_schema": object()}, "not a type pydantic can describe"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    """Contradictory or malformed options raise at definition time."""
    with pytest.raises(DefinitionError, match=message):
        _action(lambda: None, **options)


def test_presenter_and_output_schema_exclude_each_other() -> None:
    """Presenters never produce structured content, so both options cannot be set."""
    view = Presenter("A", Address)
    with pytest.raises(DefinitionError, match="not both"):
        _action(lambda: None, returns=view, output_schema=Address)


def test_read_only_implies_idempotent() -> None:
    """A read-only action is idempotent."""
    assert _action(lambda: None, read_only=True).idempotent is True
    assert _action(lambda: None).idempotent is False


def test_select_keys_come_from_the_response_schema() -> None:
    """The keys are the Presenter's or the output schema's; none without either."""
    assert _action(lambda: None, returns=Presenter("A", Address)).select_keys == ("city",)
    assert _action(lambda: None, output_schema=Address).select_keys == ("city",)
    assert _action(lambda: None, output_schema=list[int]).select_keys == ()
    assert _action(lambda: None).select_keys == ()


async def test_context_injection_by_annotation() -> None:
    """Parameters annotated Context, a subclass, or the factory's type receive the context."""
    seen: dict[str, Any] = {}

    def handler(x: int, ctx: Context, sub: AppContext, session: Session) -> None:
        seen.update(ctx=ctx, sub=sub, session=session)

    action = _action(handler, context_type=Session)
    assert [p.name for p in action.params] == ["x"]
    request = Request("t", "a")
    session = Session("ada")
    await action.invoke(action.parse({"x": 1}), request, session)
    assert seen["session"] is session
    assert isinstance(seen["ctx"], Context) and seen["ctx"].request is request
    # A parameter asking for a subclass gets the app's object, whatever it is (fakes too).
    assert seen["sub"] is session


async def test_context_subclass_reaches_the_handler() -> None:
    """When the app's context is a Context subclass, `ctx: Context` receives that object."""
    action = _action(_takes_context)
    ctx = AppContext(Request("t", "a"))
    assert await action.invoke({}, ctx.request, ctx) is ctx


def _takes_context(ctx: Context) -> Context:
    return ctx


def test_builtin_context_types_do_not_capture_parameters() -> None:
    """Only classes are injected; an annotation the factory type does not satisfy is a param."""
    action = _action(_takes_dict, context_type=Session)
    assert [p.name for p in action.params] == ["filters"]


def _takes_dict(filters: dict[str, int]) -> None: ...


async def test_sync_handlers_run_in_a_worker_thread() -> None:
    """A sync handler does not block the event loop's thread."""
    loop_thread = threading.get_ident()
    action = _action(lambda: threading.get_ident())
    assert await action.invoke({}, Request("t", "a"), None) != loop_thread


async def test_async_handlers_are_awaited() -> None:
    """An async handler runs on the event loop."""

    async def handler(x: int) -> int:
        return x * 2

    action = _action(handler)
    assert action.is_async
    assert await action.invoke(action.parse({"x": 4}), Request("t", "a"), None) == 8


async def test_async_callable_objects_are_awaited() -> None:
    """An object with an async __call__ counts as async."""

    class Handler:
        async def __call__(self) -> str:
            return "called"

    action = _action(Handler())
    assert action.is_async and action.params == ()
    assert await action.invoke({}, Request("t", "a"), None) == "called"


async def test_partials_are_described_by_their_function() -> None:
    """A functools.partial handler exposes the parameters it still needs."""

    def handler(prefix: str, name: str) -> str:
        return prefix + name

    action = _action(functools.partial(handler, "Dr. "))
    assert action.required == ("name",)
    assert await action.invoke(action.parse({"name": "Ada"}), Request("t", "a"), None) == "Dr. Ada"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task": "sometimes"}, "task must be 'always', 'optional' or 'never'"),
        ({"task": True}, "task must be 'always', 'optional' or 'never'"),
        ({"task": "always", "task_begins": "later"}, "task_begins must be 'call' or 'handler'"),
        ({"task_begins": "handler"}, "task_begins='handler' needs task='always' or 'optional'"),
    ],
    ids=["unknown-mode", "bool", "unknown-begins", "begins-without-task"],
)
def test_task_options_are_checked_at_definition(options: dict[str, Any], message: str) -> None:
    """A task= or task_begins= that means nothing, or contradicts, raises where written."""
    with pytest.raises(DefinitionError, match=message):
        _action(lambda: None, **options)


def test_an_action_is_never_a_task_unless_it_says() -> None:
    """By default calls answer in their own request; task= and task_begins= are kept."""
    assert (_action(lambda: None).task, _action(lambda: None).task_begins) == ("never", "call")
    declared = _action(lambda: None, task="always", task_begins="handler")
    assert (declared.task, declared.task_begins) == ("always", "handler")
