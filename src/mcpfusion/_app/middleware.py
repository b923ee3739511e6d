"""Middleware: functions ``(call, call_next)`` around every request, composed once into a chain."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity
from mcpfusion._present.failures import from_exception
from mcpfusion._present.paging import Pager
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.style import APP_DEFAULT
from mcpfusion._tools.context import (
    NO_META,
    TOOL_CALL,
    ContextFactory,
    Progress,
    Request,
    RequestKind,
)

if TYPE_CHECKING:
    from mcpfusion._surface.outcome import Outcome
    from mcpfusion._tools.action import Action
    from mcpfusion._tools.client import ClientChannel


class Call:
    """One request as middleware sees it: who, what, with which arguments.

    Every request that names an existing action, resource, prompt or completion passes
    through the middleware, also one the framework refuses before its handler runs
    (``rejected``: a missing scope, invalid arguments), so an audit log or a rate limit
    sees it too. ``kind`` tells which kind of request it is.

    Attributes:
        kind: ``"tools/call"``, ``"resources/read"``, ``"prompts/get"`` or
            ``"completion/complete"``.
        tool: the tool's name; a resource's or prompt's name (a completion's is the
            prompt's or the resource template's).
        action: the action's name; ``"read"``, ``"get"`` or ``"complete"``.
        arguments: the validated arguments the handler receives, by parameter name
            (empty when ``rejected``); read them, do not change them.
        identity: the caller, or ``None`` when anonymous. A middleware may replace it,
            e.g. with ``call.identity.with_tenant(...)``; the handler's ``ctx.identity``
            is what it is when the chain reaches the handler.
        meta: the request's metadata.
        state: the app's state (what its lifespan yielded), or ``None``.
        requires: the scopes the action needs.
        timeout: the action's ``timeout=`` in seconds, or ``None``.
        loggable: the argument names the action marks safe to log.
        values: what middleware adds for the handler; it reads them as ``ctx.values``.
        around_render: when set, a function returning the context manager the handler's
            value is rendered in (tracing opens the render's span with it).
    """

    __slots__ = (
        "_client",
        "_definition",
        "_factory",
        "_kwargs",
        "_outcome",
        "_page",
        "_progress",
        "_rejection",
        "_request",
        "_select",
        "action",
        "arguments",
        "around_render",
        "identity",
        "kind",
        "meta",
        "state",
        "tool",
        "values",
    )

    def __init__(
        self,
        tool: str,
        action: str,
        arguments: Mapping[str, Any],
        identity: Identity | None,
        meta: Mapping[str, Any],
        state: Any,
        progress: Progress | None,
        client: ClientChannel | None,
        rejection: ToolResponse | None,
        definition: Action | None = None,
        kwargs: dict[str, Any] | None = None,
        select: list[str] | None = None,
        factory: ContextFactory | None = None,
        outcome: Outcome[Any] | None = None,
        kind: RequestKind = TOOL_CALL,
        page: Pager | None = None,
    ) -> None:
        # Positional, and the action's own options read from it when asked for: the
        # call path makes one per call (0.6 -> 0.3 µs). The private slots are what the
        # pipeline's innermost step needs to run the handler; a Call made elsewhere (a
        # middleware's own test) may leave them out.
        self._request: Request | None = None  # made when first read (``request``)
        self._progress = progress
        self._client = client
        self._rejection = rejection
        self._definition = definition
        self._kwargs = kwargs
        self._select = select
        self._factory = factory
        self._outcome = outcome
        self._page = page
        self.kind: RequestKind = kind
        self.tool = tool
        self.action = action
        self.arguments = arguments
        self.identity = identity
        self.meta = meta
        self.state = state
        self.values: dict[str, Any] = {}
        self.around_render: Callable[[], AbstractContextManager[Any]] | None = None

    @property
    def requires(self) -> frozenset[str]:
        """The scopes the action needs."""
        definition = self._definition
        return definition.requires if definition is not None else frozenset()

    @property
    def timeout(self) -> float | None:
        """The action's ``timeout=`` in seconds, or ``None``."""
        definition = self._definition
        return definition.timeout if definition is not None else None

    @property
    def loggable(self) -> tuple[str, ...]:
        """The argument names the action marks safe to log."""
        definition = self._definition
        return definition.loggable if definition is not None else ()

    @property
    def rejected(self) -> bool:
        """Whether the framework refused the call before its handler (its handler never runs)."""
        return self._rejection is not None

    @property
    def request(self) -> Request:
        """The request the handler's context is built from (with the current identity and
        values). Made when first read: a call whose handler reads nothing of it makes none.
        """
        request = self._request
        if request is None:
            values = MappingProxyType(dict(self.values)) if self.values else NO_META
            request = Request(
                self.tool,
                self.action,
                self.meta,
                self._progress,
                self.identity,
                self.state,
                values,
                client=self._client,
                page=self._page,
                style=APP_DEFAULT if self._definition is None else self._definition.style,
            )
            self._request = request
        elif request.identity is not self.identity or request.values != self.values:
            request = request.derived(self.identity, self.values)
        return request

    def __repr__(self) -> str:
        who = self.identity.subject if self.identity else None
        kind = "" if self.kind == TOOL_CALL else f", kind={self.kind!r}"
        return f"Call({self.tool!r}, {self.action!r}, subject={who!r}{kind})"


Next = Callable[[Call], Awaitable[ToolResponse]]
"""What a middleware calls to run the rest of the chain: ``await call_next(call)``."""

Middleware = Callable[[Call, Next], Awaitable[ToolResponse]]
"""An async function ``(call, call_next) -> ToolResponse`` around every request."""


def check_middleware(middleware: Any) -> Middleware:
    """Checks a middleware where it is registered.

    Raises:
        DefinitionError: if it is not an async function of ``(call, call_next)``.
    """
    call = getattr(middleware, "__call__", None)  # noqa: B004 - objects with an async __call__
    if not (inspect.iscoroutinefunction(middleware) or inspect.iscoroutinefunction(call)):
        raise DefinitionError(
            f"a middleware is an async function (call, call_next); got {middleware!r}"
        )
    try:
        inspect.signature(middleware).bind(None, None)
    except TypeError:
        raise DefinitionError(
            f"a middleware takes two arguments (call, call_next): {middleware!r}"
        ) from None
    except ValueError:  # no signature to read: trust it
        pass
    result: Middleware = middleware
    return result


_CONTAINED: weakref.WeakSet[Any] = weakref.WeakSet()
"""The framework's own middleware, which never raises and always returns a response."""


def contained(middleware: Middleware) -> Middleware:
    """Marks one of the framework's middleware as needing no guard layer (see ``compose``)."""
    _CONTAINED.add(middleware)
    return middleware


def compose(middleware: Sequence[Middleware], endpoint: Next) -> Next:
    """The chain: ``middleware[0]`` runs first and ``endpoint`` last.

    Each layer turns what its middleware raises into the result the model reads (a
    ``ToolError`` short-circuits the call with its envelope), so the layers outside see a
    response, never an exception; cancellation propagates. The framework's own middleware
    (``contained``) keeps to that by itself and is bound without the guard: a coroutine
    frame, a ``try`` and a type check less per layer, about 0.4 µs each
    (``benchmarks/call.py``'s ``secured`` case runs two).
    """
    chain = endpoint
    for layer in reversed(middleware):
        chain = _bound(layer, chain) if layer in _CONTAINED else _layer(layer, chain)
    return chain


def _bound(middleware: Middleware, call_next: Next) -> Next:
    def run(call: Call) -> Awaitable[ToolResponse]:
        return middleware(call, call_next)

    return run


def _layer(middleware: Middleware, call_next: Next) -> Next:
    async def run(call: Call) -> ToolResponse:
        try:
            response = await middleware(call, call_next)
        except Exception as exc:  # cancellation is a BaseException: it propagates
            return from_exception(exc, call.tool, call.action)
        if not isinstance(response, ToolResponse):
            exc = TypeError(f"middleware {middleware!r} returned {type(response).__name__}")
            return from_exception(exc, call.tool, call.action)
        return response

    return run
