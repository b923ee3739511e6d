"""The mapping onto the official MCP SDK: a low-level ``Server`` answering from an app."""

from __future__ import annotations

import json
import logging
import os
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, SubscriptionBus

from mcpfusion._identity import Identity
from mcpfusion._serve.http.bearer import identity_of
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import call_result, respond, to_call_tool_result
from mcpfusion._serve.rounds import input_required, missing_capability
from mcpfusion._serve.sdk_client import ClientHub, ConnectionTracker, SdkClient
from mcpfusion._serve.sdk_private import check
from mcpfusion._serve.sdk_surface import (
    advertise_extensions,
    listen_handler,
    surface_handlers,
)
from mcpfusion._serve.tasks import TaskService
from mcpfusion._serve.tool_lists import ToolLists, paged
from mcpfusion._tasks.runner import TaskRunner
from mcpfusion._tasks.store import TaskStore
from mcpfusion._tools.client import ClientLacks, InputNeeded
from mcpfusion._tools.context import Progress

__all__ = [
    "ServableApp",
    "build_server",
    "caller",
    "hub_of",
    "lists_of",
    "principal",
    "tasks_of",
    "to_call_tool_result",
]

logger = logging.getLogger("mcpfusion")


def caller(app: ServableApp, ctx: ServerRequestContext[Any]) -> Identity | None:
    """Who sent a request: the verified bearer over HTTP, the app's local identity otherwise.

    A request without an HTTP request under it came over stdio (or in memory): from the
    process owner, whom the app may have declared as ``local_identity``.
    """
    if ctx.request is None:
        return app.local_identity
    return identity_of(ctx.request.scope)


def principal(app: ServableApp, ctx: ServerRequestContext[Any]) -> str | None:
    """Whom a sealed ``requestState`` belongs to: the caller's subject, OAuth client, issuer
    and tenant (``None`` for an anonymous caller, whose state is bound to no one)."""
    identity = caller(app, ctx)
    if identity is None:
        return None
    issuer = identity.claims.get("iss")
    # JSON keeps the parts apart (no separator a subject could contain) and is total here.
    parts = [identity.subject, identity.client_id, None if issuer is None else str(issuer)]
    return json.dumps([*parts, identity.tenant])


def build_server(
    app: ServableApp,
    *,
    subscription_bus: SubscriptionBus | None = None,
    request_state_keys: Sequence[str] = (),
    task_store: TaskStore | None = None,
    task_runner: TaskRunner | None = None,
) -> Server[Any]:
    """A low-level SDK ``Server`` answering ``tools/list`` and ``tools/call`` from ``app``.

    With a ``subscription_bus``, it also serves ``subscriptions/listen`` (protocol
    2026-07-28): each listen stream gets the events published on the bus, on any replica
    when the bus is shared (``mcpfusion.redis.RedisSubscriptionBus``).

    The ``requestState`` of 2026-07-28 ``input_required`` rounds is sealed under
    ``request_state_keys`` (``HttpOptions.request_state_keys``: the first seals, each
    unseals), or under a key of this process without them, and bound to the caller who
    started the call: another caller's next round is refused.

    The tool list is read once, here (and once for each set of scopes that hides actions,
    when a caller holding it first lists): a definition mistake only the complete list shows
    (a tool without actions) raises ``DefinitionError`` before the server accepts a
    client, and the list is fixed for the life of the server, so define every tool first.

    Everything the model should read, including an exception the app failed to contain,
    is an ``isError`` result; a cancelled call propagates so the SDK drops its response.

    An app with actions declaring ``task=`` serves MCP tasks (SEP-2663, 2026-07-28): it
    advertises the extension and serves ``tasks/get``, ``tasks/update`` and
    ``tasks/cancel``; task state lives in ``task_store`` (this server's memory by
    default) and calls run in this process while ``tasks_of(server).running()`` is open
    (each transport holds it open while it serves), or where ``task_runner`` runs them.

    Handlers talk to the client through ``_sdk_client`` (logs, questions, sampling,
    roots); change notices go to ``subscription_bus`` (the SDK's in-memory bus by
    default; a shared one fans them out across server processes) on 2026-07-28, and to
    each connection on 2025-11-25.
    """
    check()  # the SDK privates the hot paths and the client channel read, once
    hub = ClientHub(subscription_bus or InMemorySubscriptionBus(), lambda ctx: caller(app, ctx))
    lists = ToolLists(app)
    schemas = {tool.name: tool.input_schema for tool in lists.everything}
    tasked = getattr(app, "tasked_tools", None)
    tasks = None
    if callable(tasked) and tasked():
        tasks = TaskService(
            app, lambda ctx: principal(app, ctx), store=task_store, runner=task_runner
        )

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        identity = caller(app, ctx)
        cursor = params.cursor if params is not None else None
        setup = ctx.session.client_params
        client = setup.client_info.name if setup is not None else None
        per_caller = getattr(app, "list_tools_for", None)
        if getattr(app, "per_caller", False) and per_caller is not None:
            # A workflow or progressive exposure lists by each caller's state: nothing shared.
            found = await per_caller(identity, ctx.meta or {}, client)
            shown = [types.Tool.model_validate(t) for t in found]
            return paged(shown, cursor, lists.page_size)
        return lists.result(identity, client, cursor)

    async def changed(tenant: str | None, listed: str = "tools") -> None:
        if listed == "prompts":
            await hub.prompts_changed(tenant)
            return
        lists.clear()
        await hub.tools_changed(tenant)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> dict[str, Any] | types.InputRequiredResult:
        # Always handed over: the SDK sends nothing unless the client sent a progress token,
        # and the in-process client's callback has no token to look for. A report that
        # cannot be delivered is the app's to contain (Fusion's Request.progress logs it).
        begins = None if tasks is None else tasks.wanted(ctx, params)
        if tasks is not None and begins == "call":
            return await tasks.create(ctx, params, caller(app, ctx), principal(app, ctx))
        progress: Progress = ctx.session.report_progress
        client = SdkClient(ctx, params, hub)
        if tasks is not None and begins == "handler":
            identity = caller(app, ctx)
            return await tasks.begin_in_handler(ctx, params, identity, principal(app, ctx), client)
        setup = ctx.session.client_params
        name = setup.client_info.name if setup is not None else None
        try:
            response = await respond(
                app,
                params.name,
                params.arguments,
                ctx.meta,
                progress,
                caller(app, ctx),
                client,
                name,
            )
        except InputNeeded as need:  # a question, asked by ending this round (2026-07-28)
            return input_required(need)
        except ClientLacks as lack:  # a declared requirement, refused as 2026-07-28 says
            raise missing_capability(lack) from None
        # The wire dict, not the SDK's models: the SDK validates and shapes a handler's
        # result by its protocol version either way, and building the models first cost
        # 7 µs of a call (``benchmarks/server.py``).
        return call_result(response)

    announce = getattr(app, "announce_changes", None)
    server: Server[Any] = _Server(
        # What the app can announce is what its handshake advertises: a client that reads
        # listChanged false (the TypeScript SDK's) never refreshes on the notices it gets.
        # No resource list notice is ever sent (resources/updated is subscriptions').
        NotificationOptions(prompts_changed=callable(announce), tools_changed=callable(announce)),
        app.name,
        version=app.version,
        instructions=app.instructions,
        **_server_info(app),
        # Answers the 2026 HTTP path's Mcp-Param header check without a tools/list per call.
        get_tool_input_schema=schemas.get,
        on_list_tools=on_list_tools,
        **surface_handlers(app, hub),
    )
    # Registered directly: the constructor's keyword types the handler by the SDK's result
    # models, while the runner takes any handler result, the wire dict it answers with too.
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)
    advertise_extensions(server, app)
    if tasks is not None:
        tasks.register(server)
    _talk_to_clients(server, app, hub, request_state_keys)
    if request_state_keys:
        # Every worker (and a replica given the same keys) holds them: an app without a
        # cursor secret of its own seals page cursors under the first, so any of them
        # opens another's (SPEC §5.4).
        shared = getattr(app, "_cursor_secret_default", None)
        if callable(shared):
            shared(request_state_keys[0])
    if callable(announce):
        announce(changed)
    _PARTS[server] = _Parts(hub, lists, tasks)
    return server


def _server_info(app: ServableApp) -> dict[str, Any]:
    """The ``serverInfo`` fields beyond name and version that ``app`` sets, for people.

    Read with ``getattr``: an app of another kind than ``Fusion`` may have none of them.
    """
    found: dict[str, Any] = {}
    for name in ("title", "description", "website_url"):
        value = getattr(app, name, None)
        if value is not None:
            found[name] = value
    icons = getattr(app, "icons", ())
    if icons:
        found["icons"] = [types.Icon.model_validate(icon.to_mcp()) for icon in icons]
    return found


class _Server(Server[Any]):
    """The SDK's ``Server``, advertising the list-change notices its app sends.

    The SDK derives every other capability from the handlers, but ``listChanged`` (on
    2025-11-25) from options each transport would pass to ``create_initialization_options``;
    held here, every transport (stdio, HTTP, in memory) advertises the same.
    """

    def __init__(self, notices: NotificationOptions, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._notices = notices

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self._notices, experimental_capabilities, extensions
        )


@dataclass(frozen=True)
class _Parts:
    """What the hot paths share with a server ``build_server`` made."""

    hub: ClientHub
    lists: ToolLists
    tasks: TaskService | None


_PARTS: weakref.WeakKeyDictionary[Server[Any], _Parts] = weakref.WeakKeyDictionary()


def tasks_of(server: Server[Any]) -> TaskService | None:
    """The tasks of a server ``build_server`` made, when its app has task actions."""
    parts = _PARTS.get(server)
    return None if parts is None else parts.tasks


def hub_of(server: Server[Any]) -> ClientHub | None:
    """The client hub of a server ``build_server`` made (the hot paths share it)."""
    parts = _PARTS.get(server)
    return None if parts is None else parts.hub


def lists_of(server: Server[Any]) -> ToolLists | None:
    """The ``tools/list`` cache of a server ``build_server`` made (the hot paths share it)."""
    parts = _PARTS.get(server)
    return None if parts is None else parts.lists


def _talk_to_clients(
    server: Server[Any], app: ServableApp, hub: ClientHub, keys: Sequence[str]
) -> None:
    """Logging levels, listen streams and sealed request state (resource subscriptions are
    the hub's too, registered with the resources: ``surface_handlers``)."""
    # Registered directly: the constructor's keyword warns that logging is deprecated on
    # 2026-07-28, which it is; 2025-11-25 clients still set their level with it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, hub.on_set_level)
    server.add_request_handler(
        "subscriptions/listen", types.SubscriptionsListenRequestParams, listen_handler(app, hub)
    )
    # The answers of earlier rounds travel in requestState: sealed under the shared keys
    # (every replica reads them back) or a key of this process. The SDK's default binding
    # reads an auth context mcpfusion never sets, so it bound nothing: ours names the caller.
    security = RequestStateSecurity(
        keys=list(keys) or [os.urandom(32)], bind_principal=lambda ctx: principal(app, ctx)
    )
    server.middleware.append(RequestStateBoundary(security, default_audience=app.name))
    # Knows each 2025-11-25 connection, to tell it when its tool list changes.
    server.middleware.append(ConnectionTracker(hub))
