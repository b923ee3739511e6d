"""An action's call path: its arguments parsed, its handler run, its value made the response."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

import anyio

from mcpfusion._identity import Identity
from mcpfusion._present.builder import ResponseBuilder, as_response
from mcpfusion._present.failures import no_view
from mcpfusion._present.paging import Pager
from mcpfusion._present.response import ToolResponse, render_value
from mcpfusion._tools.capping import capped
from mcpfusion._tools.context import Context, Request
from mcpfusion._tools.definition import ActionDefinition
from mcpfusion._tools.structured import failed
from mcpfusion._tools.threads import run_in_thread
from mcpfusion._tools.wrapping import OFF_LOOP_ROWS, PLAIN, present_off_loop, wrap


class Action(ActionDefinition):
    """One operation of a tool. Created by ``Tool.action``; not usually built by hand.

    Raises:
        DefinitionError: on a bad name, contradictory options, or a handler signature that
            cannot be described to an agent.
    """

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
            if type(value) in PLAIN:  # ``wrap``'s first case, without its frame
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


def _unread() -> None:
    """The cancellation of a call whose request nobody reads: nothing to mark."""


def _needs_base(context: Any, kind: type) -> bool:
    """Whether a ``Context`` parameter needs the framework's own, not the app's object."""
    return kind is Context and not isinstance(context, Context)
