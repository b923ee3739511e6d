"""The SDK handlers of an app's resources, prompts and completions, and its content types."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, Protocol, runtime_checkable

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.apps import EXTENSION_ID
from mcp.shared.exceptions import MCPError

from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.content import Attachment, Audio, EmbeddedResource, Image, ResourceLink
from mcpfusion._serve.http.bearer import identity_of
from mcpfusion._serve.paging import page, page_size_of
from mcpfusion._serve.rounds import input_required
from mcpfusion._serve.sdk_client import ClientHub, SdkClient
from mcpfusion._surface.outcome import SurfaceError
from mcpfusion._surface.surface import Surface
from mcpfusion._tools.client import InputNeeded
from mcpfusion._wire.repair import repaired

logger = logging.getLogger("mcpfusion")

OnListen = Callable[
    [ServerRequestContext[Any], types.SubscriptionsListenRequestParams],
    Awaitable[types.SubscriptionsListenResult],
]
"""A ``subscriptions/listen`` request handler, as the SDK's ``Server`` takes it."""

_CONTENT: dict[type, type[Any]] = {
    Image: types.ImageContent,
    Audio: types.AudioContent,
    EmbeddedResource: types.EmbeddedResource,
    ResourceLink: types.ResourceLink,
}
_TTL: Final = 0
_SCOPE: Final = "public"
"""SEP-2549 hints of the resource and prompt lists: what is listed can change (a tenant's
catalog, a definition enabled at run time) so it is fresh for no time, and it holds no
caller's data, so any cache may share it."""


def sdk_content(item: Attachment) -> types.ContentBlock:
    """The SDK model of an image, a sound, an embedded resource or a resource link."""
    model: types.ContentBlock = _CONTENT[type(item)].model_validate(repaired(item.to_mcp()))
    return model


def advertise_extensions(server: Server[Any], app: object) -> None:
    """Advertises MCP Apps (``io.modelcontextprotocol/ui``) when the app serves its UI.

    The SDK's ``Apps`` extension is made for ``MCPServer``; on the low-level server the
    capability is its ``extensions`` map, which ``initialize`` and ``server/discover``
    read. Like ``Apps``, it advertises no settings.
    """
    uri = getattr(app, "ui_app_uri", None)
    if isinstance(uri, str):
        server.extensions[EXTENSION_ID] = {}


@runtime_checkable
class SurfaceApp(Protocol):
    """What the handlers need from an app; ``mcpfusion.Fusion`` is one."""

    @property
    def surface(self) -> Surface: ...

    @property
    def local_identity(self) -> Identity | None: ...


def _caller(app: SurfaceApp, ctx: ServerRequestContext[Any]) -> Identity | None:
    if ctx.request is None:
        return app.local_identity
    return identity_of(ctx.request.scope)


def _cursor(params: types.PaginatedRequestParams | None) -> str | None:
    return params.cursor if params is not None else None


def _uri(item: dict[str, Any]) -> str:
    return str(item["uri"])


def _uri_template(item: dict[str, Any]) -> str:
    return str(item["uriTemplate"])


def _name(item: dict[str, Any]) -> str:
    return str(item["name"])


def _error(exc: SurfaceError) -> MCPError:
    """The JSON-RPC error a client reads: -32602 for what the request got wrong (an
    unknown URI or name, a bad argument, a caller who may not read it), -32603 when the
    handler failed. A resource's carries its URI as ``data.uri`` (SEP-2164)."""
    code = types.INTERNAL_ERROR if exc.kind == "failed" else types.INVALID_PARAMS
    return MCPError(code, exc.message, None if exc.uri is None else {"uri": exc.uri})


def surface_handlers(app: object, hub: ClientHub) -> dict[str, Any]:
    """The ``Server`` keyword arguments that serve the app's resources, prompts and
    completions; empty when it has none (or is not a ``Fusion`` app).

    ``hub`` keeps the resource subscriptions (it tells subscribers when a mutation changes
    what they follow, SPEC §15), and is the client channel's server-wide part: a resource
    or prompt handler talks to the client as a tool's does, its questions becoming
    ``input_required`` rounds on 2026-07-28."""
    surface = getattr(app, "surface", None)
    if not isinstance(surface, Surface) or not surface or not isinstance(app, SurfaceApp):
        return {}
    found: dict[str, Any] = {}
    if surface.resources:
        found.update(_resource_handlers(app, hub))
    if surface.prompts:
        found.update(_prompt_handlers(app, hub))
    completes = any(p.completers for p in surface.prompts.values()) or any(
        r.completers for r in surface.resources.values()
    )
    if completes:
        found["on_completion"] = _completion_handler(app)
    return found


def _resource_handlers(app: SurfaceApp, hub: ClientHub) -> dict[str, Any]:
    surface = app.surface
    size = page_size_of(app)

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = surface.list_resources(scopes_of(_caller(app, ctx)))
        shown, following = page(listed, _uri, _cursor(params), size)
        resources = [types.Resource.model_validate(item) for item in shown]
        return types.ListResourcesResult(
            resources=resources, next_cursor=following, ttl_ms=_TTL, cache_scope=_SCOPE
        )

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed = surface.list_resource_templates(scopes_of(_caller(app, ctx)))
        shown, following = page(listed, _uri_template, _cursor(params), size)
        templates = [types.ResourceTemplate.model_validate(item) for item in shown]
        return types.ListResourceTemplatesResult(
            resource_templates=templates, next_cursor=following, ttl_ms=_TTL, cache_scope=_SCOPE
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        try:
            read = await surface.read_resource(
                str(params.uri),
                identity=_caller(app, ctx),
                meta=ctx.meta,
                client=SdkClient(ctx, params, hub),
            )
        except SurfaceError as exc:
            raise _error(exc) from None
        except InputNeeded as need:  # a question, asked by ending this round (2026-07-28)
            return input_required(need)
        contents = repaired(list(read.contents))  # an embedded text, as a prompt's
        return types.ReadResourceResult.model_validate(
            {"contents": contents, "ttlMs": read.ttl_ms, "cacheScope": read.cache_scope}
        )

    async def on_subscribe(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        _check_followable(app, ctx, [str(params.uri)])
        return await hub.on_subscribe(ctx, params)

    return {
        "on_list_resources": on_list_resources,
        "on_list_resource_templates": on_list_resource_templates,
        "on_read_resource": on_read_resource,
        "on_subscribe_resource": on_subscribe,
        "on_unsubscribe_resource": hub.on_unsubscribe,
    }


def _check_followable(app: SurfaceApp, ctx: ServerRequestContext[Any], uris: list[str]) -> None:
    """Refuses to follow a URI that is no resource the caller may read, as if it were unknown
    (a caller without the scopes cannot tell it exists).

    Raises:
        MCPError: -32602 naming the first such URI.
    """
    scopes = scopes_of(_caller(app, ctx))
    for uri in uris:
        found = app.surface.find_resource(uri)
        if found is None or found[0].requires - scopes:
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})


def listen_handler(app: object, hub: ClientHub) -> OnListen:
    """The ``subscriptions/listen`` handler (2026-07-28): the hub's, under
    ``resources/subscribe``'s rule for the resource URIs a stream follows."""
    surface = getattr(app, "surface", None)
    if not isinstance(surface, Surface) or not isinstance(app, SurfaceApp):
        return hub.on_listen  # no resources to guard: not an mcpfusion app

    async def on_listen(
        ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        _check_followable(app, ctx, list(params.notifications.resource_subscriptions or ()))
        return await hub.on_listen(ctx, params)

    return on_listen


def _prompt_handlers(app: SurfaceApp, hub: ClientHub) -> dict[str, Any]:
    surface = app.surface
    size = page_size_of(app)

    async def on_list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        identity = _caller(app, ctx)
        tenant = identity.tenant if identity is not None else None
        listed = surface.list_prompts(scopes_of(identity), tenant=tenant)
        shown, following = page(listed, _name, _cursor(params), size)
        prompts = [types.Prompt.model_validate(item) for item in shown]
        return types.ListPromptsResult(
            prompts=prompts, next_cursor=following, ttl_ms=_TTL, cache_scope=_SCOPE
        )

    async def on_get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        try:
            result = await surface.get_prompt(
                params.name,
                params.arguments,
                identity=_caller(app, ctx),
                meta=ctx.meta,
                client=SdkClient(ctx, params, hub),
            )
        except SurfaceError as exc:
            raise _error(exc) from None
        except InputNeeded as need:  # a question, asked by ending this round (2026-07-28)
            return input_required(need)
        # A handler's text, unlike a block, is not rendered: a lone surrogate in it would
        # fail the write (an HTTP request left unanswered), so it becomes U+FFFD here.
        return types.GetPromptResult.model_validate(repaired(result.to_mcp()))

    return {"on_list_prompts": on_list_prompts, "on_get_prompt": on_get_prompt}


def _completion_handler(app: SurfaceApp) -> Any:
    surface = app.surface

    async def on_completion(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        kind: Literal["prompt", "resource"] = "resource"
        target = getattr(ref, "uri", "")
        if isinstance(ref, types.PromptReference):
            kind, target = "prompt", ref.name
        chosen = params.context.arguments if params.context else None
        try:
            found = await surface.complete(
                kind,
                target,
                params.argument.name,
                params.argument.value,
                chosen,
                identity=_caller(app, ctx),
                meta=ctx.meta,
            )
        except SurfaceError as exc:
            raise _error(exc) from None
        return types.CompleteResult(completion=types.Completion.model_validate(found))

    return on_completion
