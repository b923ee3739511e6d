"""The client channel on the MCP SDK: logs, questions, sampling, roots and change notices.

Protocol 2025-11-25 asks mid-call: a server-to-client request on the call's own stream,
answered before the handler goes on. Protocol 2026-07-28 has no back-channel: a question
ends the call with an ``input_required`` result, the client answers and calls again with
the answers and the ``requestState`` it was given (sealed by the SDK's
``RequestStateBoundary``, so only this server can read it back), and the handler runs
again from the start, finding its earlier questions answered.

``ClientHub`` is the server-wide part: each connection's log level (``logging/setLevel``),
resource subscriptions (``resources/subscribe`` on 2025-11-25, ``subscriptions/listen``
on 2026-07-28) and who to tell when the tool or prompt list or a resource changes.
"""

from __future__ import annotations

import logging
import secrets
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import CallNext, HandlerResult
from mcp.server.subscriptions import (
    ListenHandler,
    PromptsListChanged,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpfusion._identity import Identity
from mcpfusion._present.statesync import matching, state_name
from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.rounds import Rounds
from mcpfusion._serve.sdk_private import connection_of
from mcpfusion._tools.client import (
    LOG_LEVELS,
    Feature,
    LogLevel,
)

logger = logging.getLogger("mcpfusion")

_LEVEL_KEY: Final = "mcpfusion/log_level"
"""Where a connection keeps the level its client set (``Connection.state``)."""


def _connection(ctx: ServerRequestContext[Any]) -> Connection | None:
    return connection_of(ctx.session)


def _tenant(identity: Identity | None) -> str | None:
    return identity.tenant if identity is not None else None


@dataclass(frozen=True)
class TenantResourceUpdated(ResourceUpdated):
    """``ResourceUpdated`` for the subscribers of one tenant (``None``: everyone).

    A bus that carries only the SDK's own fields delivers it as a plain
    ``ResourceUpdated``: every subscriber of the URI is told, which costs a refetch, never
    data.
    """

    tenant: str | None = None


@dataclass(frozen=True)
class TenantToolsListChanged(ToolsListChanged):
    """``ToolsListChanged`` for the callers of one tenant (``None``: everyone)."""

    tenant: str | None = None


@dataclass(frozen=True)
class TenantPromptsListChanged(PromptsListChanged):
    """``PromptsListChanged`` for the callers of one tenant (``None``: everyone)."""

    tenant: str | None = None


class ConnectionTracker:
    """Server middleware noting every 2025-11-25 connection (``ClientHub.seen``)."""

    def __init__(self, hub: ClientHub) -> None:
        self._hub = hub

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        self._hub.seen(ctx)
        return await call_next(ctx)


@dataclass(frozen=True)
class StateChanged(ResourceUpdated):
    """A mutation's patterns (SPEC §15), for the other server processes sharing the bus.

    Each process tells its own listen streams whose URIs match; the process that made
    the change has told its own already. Its ``uri`` names no resource, so a bus that
    carries only ``ResourceUpdated``'s fields delivers it to nobody.
    """

    patterns: tuple[str, ...] = ()
    tenant: str | None = None
    origin: int = 0


class _TenantView:
    """The bus as one tenant's listen streams see it: other tenants' updates left out,
    other processes' state changes turned into updates of the URIs listened to here."""

    def __init__(self, hub: ClientHub, tenant: str | None) -> None:
        self._hub = hub
        self._tenant = tenant

    async def publish(self, event: ServerEvent) -> None:
        await self._hub.bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        tenant, hub = self._tenant, self._hub

        def filtered(event: ServerEvent) -> None:
            owner = getattr(event, "tenant", None)
            if not (owner is None or tenant is None or owner == tenant):
                return
            if isinstance(event, StateChanged):
                if event.origin != hub.origin:
                    for uri in hub.listened(event.patterns, owner):
                        listener(ResourceUpdated(uri=uri))
                return
            listener(event)

        return self._hub.bus.subscribe(filtered)


@dataclass
class _Subscriber:
    """A 2025-11-25 connection's subscriptions and the tenant it acts for."""

    uris: set[str]
    tenant: str | None


class ClientHub:
    """Everything about clients that outlives one call: levels, subscriptions, notices.

    Args:
        bus: where change events go on 2026-07-28 (``subscriptions/listen`` streams).
        identify: who sent a request (the adapter's ``caller``).
    """

    def __init__(
        self,
        bus: SubscriptionBus,
        identify: Callable[[ServerRequestContext[Any]], Identity | None],
    ) -> None:
        self.bus = bus
        self._identify = identify
        # Tells this hub's state changes from other processes' on a shared bus (an id()
        # could repeat across processes started alike).
        self.origin = secrets.randbits(62)
        self._listeners: dict[str | None, ListenHandler] = {}
        # 2026-07-28: the URIs of the open listen streams, by tenant, counted.
        self._listening: dict[tuple[str, str | None], int] = {}
        # 2025-11-25: each connection's subscriptions; every connection that asked for
        # its tool list (the ones told when it changes).
        self._subscribers: weakref.WeakKeyDictionary[Connection, _Subscriber] = (
            weakref.WeakKeyDictionary()
        )
        self._connections: weakref.WeakKeyDictionary[Connection, str | None] = (
            weakref.WeakKeyDictionary()
        )

    # -- logging/setLevel (2025-11-25) ------------------------------------------------------

    async def on_set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """Keeps the level the client asked for, for its connection."""
        connection = _connection(ctx)
        if connection is not None:
            connection.state[_LEVEL_KEY] = params.level
        return types.EmptyResult()

    # -- subscriptions ----------------------------------------------------------------------

    async def on_subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/subscribe`` (2025-11-25): remembered for the connection."""
        connection = _connection(ctx)
        if connection is not None:
            found = self._subscribers.get(connection)
            if found is None:
                found = _Subscriber(set(), _tenant(self._identify(ctx)))
                self._subscribers[connection] = found
            found.uris.add(str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/unsubscribe`` (2025-11-25)."""
        connection = _connection(ctx)
        found = self._subscribers.get(connection) if connection is not None else None
        if found is not None:
            found.uris.discard(str(params.uri))
        return types.EmptyResult()

    async def on_listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """``subscriptions/listen`` (2026-07-28): the SDK's handler, over this tenant's view
        of the bus; its resource URIs are known while the stream is open."""
        tenant = _tenant(self._identify(ctx))
        handler = self._listeners.get(tenant)
        if handler is None:
            handler = self._listeners[tenant] = ListenHandler(_TenantView(self, tenant))
        keys = [(uri, tenant) for uri in params.notifications.resource_subscriptions or ()]
        for key in keys:
            self._listening[key] = self._listening.get(key, 0) + 1
        try:
            return await handler(ctx, params)
        finally:
            for key in keys:
                left = self._listening.get(key, 1) - 1
                if left:
                    self._listening[key] = left
                else:
                    self._listening.pop(key, None)

    def close_streams(self) -> None:
        """Starts closing every open listen stream gracefully (serving is stopping: each
        client gets its final result, and no stream holds the shutdown open)."""
        for handler in list(self._listeners.values()):
            handler.close()

    def seen(self, ctx: ServerRequestContext[Any]) -> None:
        """Notes a 2025-11-25 connection and the tenant its caller acts for: it hears when
        its tool list changes."""
        connection = _connection(ctx)
        if connection is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        if connection not in self._connections:
            self._connections[connection] = _tenant(self._identify(ctx))

    # -- telling clients --------------------------------------------------------------------

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """``notifications/resources/updated`` for every subscribed URI a pattern matches
        (SPEC §15), to subscribers of the caller's tenant (or of none)."""
        tenant = _tenant(identity)

        def allowed(other: str | None) -> bool:
            return tenant is None or other is None or other == tenant

        for connection, subscriber in list(self._subscribers.items()):
            if not allowed(subscriber.tenant):
                continue
            for uri in _covered(patterns, subscriber.uris):
                try:
                    await connection.send_resource_updated(uri)
                except Exception:
                    logger.debug("a subscriber left before %s was sent", uri, exc_info=True)
        for uri in self.listened(patterns, tenant):
            await self.bus.publish(TenantResourceUpdated(uri=uri, tenant=tenant))
        mark = "mcpfusion-state:" + ",".join(patterns)
        await self.bus.publish(StateChanged(mark, tuple(patterns), tenant, self.origin))

    def listened(self, patterns: Sequence[str], tenant: str | None) -> list[str]:
        """The URIs this process's listen streams follow that ``patterns`` cover, for
        ``tenant``'s callers (``None``: everyone's)."""
        uris = {u for u, other in self._listening if tenant is None or other in (None, tenant)}
        return _covered(patterns, uris)

    async def tools_changed(self, tenant: str | None = None) -> None:
        """``notifications/tools/list_changed`` for the callers of ``tenant`` (``None``:
        everyone): on the bus, and to each 2025-11-25 connection."""
        await self.bus.publish(TenantToolsListChanged(tenant=tenant))
        for connection, other in list(self._connections.items()):
            if tenant is not None and other is not None and other != tenant:
                continue
            try:
                await connection.send_tool_list_changed()
            except Exception:
                logger.debug("a connection left before the list change was sent", exc_info=True)

    async def prompts_changed(self, tenant: str | None = None) -> None:
        """``notifications/prompts/list_changed`` for the callers of ``tenant`` (``None``:
        everyone): on the bus, and to each 2025-11-25 connection."""
        await self.bus.publish(TenantPromptsListChanged(tenant=tenant))
        for connection, other in list(self._connections.items()):
            if tenant is not None and other is not None and other != tenant:
                continue
            try:
                await connection.send_prompt_list_changed()
            except Exception:
                logger.debug("a connection left before the list change was sent", exc_info=True)


def _covered(patterns: Sequence[str], uris: Collection[str]) -> list[str]:
    """The URIs whose state name a pattern matches."""
    named = {uri: state_name(uri) for uri in uris}
    hit = set(matching(patterns, [n for n in named.values() if n is not None]))
    return sorted(uri for uri, name in named.items() if name in hit)


def declares(capabilities: types.ClientCapabilities | None, feature: Feature) -> bool:
    """Whether a client's capabilities declare ``feature`` (elicitation in form mode,
    sampling or roots; ``logging`` is the server's to offer, not the client's)."""
    if feature == "logging":
        return True
    if capabilities is None:
        return False
    if feature == "elicitation":
        found = capabilities.elicitation
        return found is not None and (found.form is not None or found.url is None)
    if feature == "sampling":
        return capabilities.sampling is not None
    return capabilities.roots is not None


class SdkClient(Channel):
    """The ``ClientChannel`` of one ``tools/call``, ``prompts/get`` or ``resources/read``
    (the requests that may answer ``input_required``), over the SDK request context."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any],
        params: types.InputResponseRequestParams,
        hub: ClientHub,
    ) -> None:
        super().__init__(hub)
        self._ctx = ctx
        self._modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        self._params = params
        self._started: Rounds | None = None  # read from the params when first needed
        # 2026-07-28 refuses a call needing an undeclared capability with -32021.
        self.protocol_refusals = self._modern

    def _rounds(self) -> Rounds | None:
        """The call's rounds on 2026-07-28 (``None`` before): made when the handler first
        logs or asks, so a call that does neither never decodes its request state."""
        if self._started is None and self._modern:
            self._started = Rounds(self._params)
        return self._started

    # -- what the client offers ---------------------------------------------------------

    def supports(self, feature: Feature) -> bool:
        """Whether the client declared ``feature`` and this connection can carry it."""
        ctx = self._ctx
        if feature == "logging":
            if self._modern:
                return bool(allowed_log_levels(ctx.protocol_version, ctx.meta))
            return True
        declared = declares(ctx.session.client_capabilities, feature)
        # 2025-11-25 asks on the call's stream, which stateless HTTP does not keep open.
        return declared and (self._modern or ctx.session.can_send_request)

    async def close_sse_stream(self) -> bool:
        """Closes the call's SSE stream, when the transport can resume it."""
        close = self._ctx.close_sse_stream
        if close is None:
            return False
        await close()
        return True

    # -- logging --------------------------------------------------------------------------

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Sends ``notifications/message`` on the call's stream, at the client's level."""
        ctx = self._ctx
        rounds = self._rounds()
        if rounds is not None:
            if not rounds.first_time_logged():
                return  # an earlier round of this call sent it already
            if level not in allowed_log_levels(ctx.protocol_version, ctx.meta):
                return
        else:
            connection = _connection(ctx)
            wanted = connection.state.get(_LEVEL_KEY, "debug") if connection else "debug"
            if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
                return
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        )
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

    # -- questions (asked as Channel says) ------------------------------------------------

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        rounds = self._rounds()
        if rounds is not None:
            return rounds.ask(request, kind, key)
        ctx = self._ctx
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
        return await ctx.session.send_request(request, kind, metadata=metadata)
