"""The per-call request and the context object handlers and Presenter callbacks receive."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

from mcpfusion._identity import Identity
from mcpfusion._present.paging import Pager
from mcpfusion._present.style import APP_DEFAULT, Style
from mcpfusion._tools import client as _client
from mcpfusion._tools import downstream as _downstream
from mcpfusion._tools.caller_state import CallerState, caller_state_of
from mcpfusion._wire.format import fold_lines, neutralize

if TYPE_CHECKING:
    from pydantic import BaseModel

    from mcpfusion._tools.client import ClientChannel, Elicitation, LogLevel, Message, Root, Sampled

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
"""Receives ``(done, total, message)`` progress reports; the adapter forwards them to MCP."""

ContextFactory = Callable[["Request"], Any]
"""Builds the context of one call from its ``Request``; may return an awaitable."""

logger = logging.getLogger("mcpfusion")

RequestKind = Literal["tools/call", "resources/read", "prompts/get", "completion/complete"]
"""The kinds of request whose handlers run through the app's one pipeline."""

TOOL_CALL: Final = "tools/call"

NO_META: Mapping[str, Any] = MappingProxyType({})
"""The metadata of a request that carries none: empty and read-only, shared."""


class _NotStarted:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_STARTED"


NOT_STARTED: Final[Any] = _NotStarted()
"""The state of an app whose lifespan is not running (``ctx.state`` raises then)."""

PROGRESS_MESSAGE_LIMIT: Final = 500
"""A progress message is cut to this many characters."""


class _Cancellation:
    """Whether a call was cancelled; set on the event loop, read from any thread."""

    __slots__ = ("is_set",)

    def __init__(self) -> None:
        self.is_set = False


@dataclass(frozen=True, slots=True)
class Request:
    """One tool call as the framework sees it, after routing and input validation.

    Attributes:
        tool: the tool's name (for a flat tool, the name it was defined with).
        action: the action's name.
        meta: the request's metadata as the transport delivered it (may be empty).
        on_progress: where progress reports go, or ``None`` when the caller of
            ``Fusion.call_tool`` passed no receiver. The MCP adapter and ``FusionTester``
            always pass one; the adapter's sends nothing unless the client sent a progress
            token, so a handler cannot tell whether anyone is listening.
        identity: the caller, or ``None`` when anonymous.
        state: what the app's lifespan yielded (``None`` without a lifespan).
        values: what middleware added for the handler (``Call.values``).
        client: the client on the other end (logging, questions, sampling, roots), as
            the server adapter provides it; ``None`` in-process.
        page: the page a call of a paging action asks for (SPEC §5.4), else ``None``.
        style: the app's style, which a handler's own ``view.present(data, ctx)`` honours.
    """

    tool: str
    action: str
    meta: Mapping[str, Any] = field(default_factory=lambda: NO_META)
    on_progress: Progress | None = None
    identity: Identity | None = None
    state: Any = None
    values: Mapping[str, Any] = field(default_factory=lambda: NO_META)
    client: ClientChannel | None = field(default=None, repr=False, compare=False)
    page: Pager | None = field(default=None, repr=False, compare=False)
    style: Style = field(default=APP_DEFAULT, repr=False, compare=False)
    _cancellation: _Cancellation = field(default_factory=_Cancellation, repr=False, compare=False)

    def derived(self, identity: Identity | None, values: Mapping[str, Any]) -> Request:
        """The same request (and cancellation) for another identity, with ``values`` added."""
        return dataclasses.replace(self, identity=identity, values=MappingProxyType(dict(values)))

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled (its client left or cancelled it, a timeout)."""
        return self._cancellation.is_set

    def cancel(self) -> None:
        """Marks the call cancelled (the framework does, when it cancels the handler)."""
        self._cancellation.is_set = True

    async def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Reports progress to ``on_progress``; a no-op without one.

        The message follows the text rules of every block (SPEC §7: neutralized, lone
        surrogates as U+FFFD, line breaks folded) and is cut to ``PROGRESS_MESSAGE_LIMIT``
        characters. Progress is best-effort: a report that cannot be delivered is logged,
        and the handler carries on (its result is what the client is waiting for).

        Raises:
            TypeError: if ``done`` or ``total`` is not a number, or ``message`` not a str.
            ValueError: if ``done`` or ``total`` is NaN or infinite (JSON cannot carry it).
        """
        _check_number("done", done)
        if total is not None:
            _check_number("total", total)
        if message is not None:
            if not isinstance(message, str):
                raise TypeError(f"a progress message is a str; got {type(message).__name__}")
            message = neutralize(fold_lines(message[: PROGRESS_MESSAGE_LIMIT + 1]))
            if len(message) > PROGRESS_MESSAGE_LIMIT:
                message = message[: PROGRESS_MESSAGE_LIMIT - 1] + "…"
        if self.on_progress is None:
            return
        try:
            await self.on_progress(float(done), None if total is None else float(total), message)
        except Exception:
            logger.warning("%s/%s: a progress report failed", self.tool, self.action, exc_info=True)


def _check_number(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"progress {name} is a number; got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"progress {name} must be finite; got {value!r}")


class Context:
    """The default request context: which call this is, and progress reporting.

    A handler receives it by declaring a parameter annotated ``Context``. Apps that need
    more (a database session, the caller's identity) subclass it and pass the subclass as
    the app's context factory, which is called with the ``Request``::

        class BillingContext(Context):
            def __init__(self, request: Request) -> None:
                super().__init__(request)
                self.db = connect()

        app = Fusion("billing", context=BillingContext)

    A factory may also return an object of its own type; handlers then receive it by
    annotating a parameter with that type (declare the factory's return type).
    """

    def __init__(self, request: Request) -> None:
        self.request = request

    @property
    def tool(self) -> str:
        """The name of the tool being called."""
        return self.request.tool

    @property
    def action(self) -> str:
        """The name of the action being called."""
        return self.request.action

    @property
    def meta(self) -> Mapping[str, Any]:
        """The request's metadata."""
        return self.request.meta

    @property
    def identity(self) -> Identity | None:
        """The caller (``mcpfusion.Identity``), or ``None`` for an anonymous one."""
        return self.request.identity

    @property
    def state(self) -> Any:
        """What the app's lifespan yielded: its connection pool, clients, configuration.

        ``None`` for an app without a lifespan.

        Raises:
            RuntimeError: if the app has a lifespan that is not running (serve the app, or
                test it with ``async with FusionTester(app) as tester``).
        """
        state = self.request.state
        if state is NOT_STARTED:
            raise RuntimeError(
                "the app's lifespan is not running: serve the app, or enter it with "
                "'async with FusionTester(app)' (or 'async with app.running()')"
            )
        return state

    @property
    def caller_state(self) -> CallerState:
        """The state of this caller, kept between its calls: ``await
        ctx.caller_state.set("cart", items)``, then ``await ctx.caller_state.get("cart")``.

        Keyed by the caller's identity and tenant (and conversation, when the client names
        one), not by a session; in memory, or in Redis across workers (``--redis-url``).

        Raises:
            RuntimeError: outside a tool call of an app.
        """
        return caller_state_of(self.request.identity, self.request.meta)

    @property
    def values(self) -> Mapping[str, Any]:
        """What middleware added for this call (``call.values``), read-only."""
        return self.request.values

    @property
    def page(self) -> Pager | None:
        """The page a call of a paging action asks for: ``offset`` and ``limit`` rows.

        A handler reading its rows from a database fetches only those (one more says a
        next page exists) and returns them as ``Page(rows)``; ``None`` when the action
        does not page (``paging=True``, SPEC §5.4).
        """
        return self.request.page

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled.

        An async handler is cancelled where it awaits. A sync handler runs in a thread
        that cannot be interrupted: it runs to its end and its result is dropped, so a
        handler that changes something should check ``ctx.cancelled`` before committing.
        """
        return self.request.cancelled

    async def token_for(self, audience: str, *, scopes: Sequence[str] = ()) -> str:
        """A token for the downstream API ``audience``, acting as the signed-in caller::

            token = await ctx.token_for("https://ledger.example.com", scopes=["read"])

        Obtained by token exchange (RFC 8693) at the identity provider of the server's
        sign-in (``HttpOptions(signin=...)``), cached until shortly before it expires; the
        caller's own token never leaves the server. The provider's token of the sign-in is
        refreshed at the provider when it has expired.

        Raises:
            ToolError: ``AUTH_REQUIRED`` when the caller did not sign in through this
                server, the sign-in has ended, the provider refuses, or the server does not
                sign users in: the agent can ask the user to sign in again.
        """
        return await _downstream.token_for(self.identity, audience, scopes)

    async def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Reports progress to the client, e.g. ``await ctx.progress(3, 10, "Fetching")``.

        Always safe to call: reports nobody receives are dropped, and a report that cannot
        be delivered is logged, not raised.
        """
        await self.request.progress(done, total, message)

    # -- talking to the client (_client) -----------------------------------------------

    def supports(self, feature: str) -> bool:
        """Whether the client supports ``"elicitation"``, ``"sampling"``, ``"roots"`` or
        ``"logging"`` over this connection."""
        return _client.supports(self.request, feature)

    async def log(self, level: LogLevel, message: str, data: Any = None) -> None:
        """Sends a log message to the client (``notifications/message``).

        Sent only at the level the client asked for (``logging/setLevel``, or the
        request's log level on MCP 2026-07-28); never raises for delivery. The message
        follows the text rules of every block (neutralized, line breaks folded, cut to
        ``LOG_MESSAGE_LIMIT`` characters); ``data`` is sent as JSON beside it, its strings
        neutralized as structured content's are, so never put in it what a Presenter would
        hide.
        """
        await _client.log(self.request, level, message, data)

    async def close_sse_stream(self) -> bool:
        """Closes this call's SSE stream, asking the client to reconnect, and returns
        whether it did; the handler goes on running.

        Only a resumable stream can be closed (``HttpOptions(resumable=True)`` or an
        ``event_store``, a stateful server, a client on MCP 2025-11-25): the client waits
        the ``sse_retry`` interval, reconnects with ``Last-Event-ID`` and receives what
        the call sent meanwhile, then the rest of it. A long call can so free its
        connection (polling, SEP-1699). Anywhere else it is a no-op returning ``False``.
        """
        return await _client.close_sse_stream(self.request)

    async def elicit(
        self,
        message: str,
        schema: type[BaseModel] | Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Elicitation:
        """Asks the user a question through the client (MCP elicitation).

        ``schema`` is a pydantic model of flat, primitive fields (or a JSON Schema).
        Returns the answer: ``accepted`` with ``data`` (an instance of the model), or
        declined or cancelled. The message is neutralized like every text a client shows
        (SPEC §7), as a sampling prompt is. On MCP 2026-07-28 the call runs again from the
        start once the client answers, so ask before changing anything; ``key`` names the
        question across those rounds (by default its place: the first question, the
        second...).

        Raises:
            ToolError: ``UNSUPPORTED_BY_CLIENT`` when the client cannot be asked;
                ``INVALID_ANSWER`` when its answer does not fit ``schema``.
        """
        return await _client.elicit(self.request, message, schema, key)

    async def sample(
        self,
        messages: str | Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float | None = None,
        key: str | None = None,
    ) -> Sampled:
        """Asks the client's model (MCP sampling): a prompt, or ``(role, text)`` pairs
        (``key`` as for ``elicit``).

        Raises:
            ToolError: ``UNSUPPORTED_BY_CLIENT`` when the client does not offer sampling.
        """
        return await _client.sample(
            self.request,
            messages,
            system=system,
            max_tokens=max_tokens,
            temperature=temperature,
            key=key,
        )

    async def gather(self, *questions: Awaitable[Any]) -> tuple[Any, ...]:
        """Asks several questions at once and returns their answers, in order::

            name, roots = await ctx.gather(ctx.elicit("Name?", Name), ctx.list_roots())

        On MCP 2026-07-28 the unanswered ones go to the client in one round (rather than
        one round each); on 2025-11-25 they are asked one after the other.
        """
        return await _client.gather(self.request, *questions)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (the directories it lets the server see; ``key`` as for
        ``elicit``).

        Raises:
            ToolError: ``UNSUPPORTED_BY_CLIENT`` when the client declares no roots.
        """
        return await _client.list_roots(self.request, key)

    async def continue_as_task(self) -> None:
        """Continues the call as an MCP task from here (SEP-2663), for an action declared
        with ``task_begins="handler"``: the questions asked before it were the call's own
        rounds; now the client gets the task and polls it while the handler goes on.

        Does nothing where the call cannot become a task (a client without the tasks
        extension, an action without ``task_begins="handler"``, a call already a task).
        """
        await _client.continue_as_task(self.request)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tool={self.tool!r}, action={self.action!r})"
