"""The call pipeline's last steps: the chain's endpoint, and the handler run and answered."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

import anyio

from mcpfusion._app.middleware import Call
from mcpfusion._present.failures import from_exception, timed_out
from mcpfusion._present.paging import Pager
from mcpfusion._present.response import ToolResponse, view_of
from mcpfusion._present.statesync import with_invalidation
from mcpfusion._surface.outcome import Outcome
from mcpfusion._tools.action import Action
from mcpfusion._tools.catalog import Catalog, Route
from mcpfusion._tools.client import ClientLacks, InputNeeded
from mcpfusion._tools.client_needs import before_running
from mcpfusion._tools.context import Context, ContextFactory, Request

logger = logging.getLogger("mcpfusion")

_TIMED_OUT: Any = object()  # the value of a handler its timeout cancelled


class Capped(Protocol):
    """What answering reads of its app: the byte cap of an action that sets none."""

    max_bytes: int | None


class Answering:
    """The pipeline's steps 4 and 5: ``endpoint`` (the middleware chain's innermost step)
    and ``answer`` (the handler run within its timeout, its value made the response).

    A base class of ``Pipeline`` only: it reads the catalog (the targets a response is
    checked against) and the app's byte cap, which ``Pipeline`` sets up.
    """

    __slots__ = ()

    catalog: Catalog
    _app: Capped

    def endpoint(self, call: Call) -> Awaitable[ToolResponse]:
        """Step 4, the innermost step of the middleware chain: the handler and its response.

        A plain function handing back ``answer``'s coroutine: one frame less per call
        than awaiting it here (0.3 µs of ``benchmarks/call.py``'s ``secured`` case).
        """
        if call._rejection is not None:
            return given(call._rejection)
        action, kwargs, factory = call._definition, call._kwargs, call._factory
        if action is None or kwargs is None or factory is None:
            raise TypeError(f"{call!r} names no action to run: only dispatch() makes one that does")
        request = call.request if _reads_request(action, factory) else None
        return self.answer(
            action, kwargs, call._select, request, factory, call.around_render, call._outcome,
            None, call._page,
        )  # fmt: skip

    async def answer(
        self,
        action: Action,
        kwargs: dict[str, Any],
        select: list[str] | None,
        request: Request | None,
        factory: ContextFactory,
        around_render: Callable[[], AbstractContextManager[Any]] | None = None,
        outcome: Outcome[Any] | None = None,
        route: Route | None = None,
        page: Pager | None = None,
    ) -> ToolResponse:
        """Step 5: builds the context, runs the handler (within its timeout) and sends its
        value, or, for a resource, prompt or completion, makes its result (``outcome``).

        Without a request (nothing reads it: ``call_tool``), there is no context either.
        With ``route`` (a tool call nothing else follows), the response's targets are
        checked here, as ``call_tool`` would after awaiting it.
        """
        try:
            context = None
            identity = None
            if request is not None:
                identity = request.identity
                context = factory(request)
                # A class (the default, Context) never returns an awaitable: skip the check.
                if not isinstance(factory, type) and inspect.isawaitable(context):
                    context = await context
                if action.talks:
                    await before_running(request, kwargs, action.confirm, action.requires_client)
            if request is None and action.is_async:
                # Nothing to inject or cancel (``Action.invoke``'s work): the handler's
                # coroutine is awaited here, one frame less (``benchmarks/call.py``).
                value = await action.handler(**kwargs)
            elif action.timeout is None or request is None:  # no request: no timeout either
                value = await action.invoke(kwargs, request, context)
            else:
                with anyio.move_on_after(action.timeout) as scope:
                    value = await action.invoke(kwargs, request, context)
                if scope.cancelled_caught:
                    request.cancel()
                    if outcome is not None:
                        return outcome.timed_out(action.timeout)
                    value = _TIMED_OUT
            if outcome is not None:
                return await outcome.finished(value, context)
            cap = self._app.max_bytes if action.max_bytes is None else action.max_bytes
            if value is _TIMED_OUT and request is not None and action.timeout is not None:
                response = timed_out(request.tool, request.action, action.timeout)
            elif around_render is None:
                made = action.response(value, context, select, page, identity)  # a frame less
                if made is None:  # a long list, presented off the loop
                    made = await action.respond(value, context, select, page, identity)
                response = made
                if cap is not None:  # a test, not a frame more for every uncapped call
                    response = await action.fit(
                        response, value, context, select, cap, page, identity
                    )
            else:
                with around_render():
                    response = await action.respond(value, context, select, page, identity)
                    if cap is not None:
                        response = await action.fit(
                            response, value, context, select, cap, page, identity
                        )
            if action.invalidates and not response.is_error and request is not None:
                response = await _invalidated(action, request, response)
        except (InputNeeded, ClientLacks):
            raise  # a question for a later round, or a protocol-level refusal (_client)
        except Exception as exc:
            if outcome is not None:
                return outcome.failed(exc)
            response = action.failed(from_exception(exc, action.tool, action.name))
        except BaseException as exc:
            # Cancellation propagates; anything else a handler or a library in it raises
            # (SystemExit from sys.exit(), KeyboardInterrupt, GeneratorExit) fails this
            # call, not the server.
            if _is_cancellation(exc):
                raise
            if outcome is not None:
                return outcome.failed(exc)
            response = action.failed(from_exception(exc, action.tool, action.name))
        return response if route is None else self.catalog.targets.checked(response, route)


async def _invalidated(action: Action, request: Request, response: ToolResponse) -> ToolResponse:
    """A successful mutation's response, ending with its invalidation block (SPEC §15);
    the client's resource subscribers are told what changed."""
    response = with_invalidation(response, action.state_name, action.invalidates)
    if request.client is not None:
        sent = view_of(response)  # the block's entries: the handler's own, then the action's
        patterns = sent.invalidations if sent is not None else action.invalidates
        try:
            await request.client.invalidated(patterns, request.identity)
        except Exception:
            logger.warning("%s: telling subscribers failed", action.state_name, exc_info=True)
    return response


def _is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is, or a task group's exception holds, a cancellation."""
    cancelled = anyio.get_cancelled_exc_class()
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(cancelled) is not None
    return isinstance(exc, cancelled)


async def given(response: ToolResponse) -> ToolResponse:
    """``response``, as the awaitable a step hands back (``Pipeline``'s refusals too)."""
    return response


def _reads_request(action: Action, factory: ContextFactory) -> bool:
    """Whether anything of a call reads its ``Request``: the handler's context or state, a
    timeout or a question to the client, an app's own context factory, or a Presenter
    callback taking the context. A call nothing reads it from makes neither it nor a
    context (1.5 µs of ``benchmarks/call.py``'s ``trivial`` case, a fifth of it).
    """
    return (
        not action.without_request
        or factory is not Context
        or (action.presenter is not None and action.presenter.uses_context)
    )
