"""An app's resources, prompts and completions: listing, reading, getting, completing.

Their handlers run through the app's one request pipeline (identity, scopes, middleware,
handler, Presenter, checked suggestion targets), as an action's do. Every failure a
client should read is a ``SurfaceError`` with a readable message; the adapter sends it as
the protocol's JSON-RPC error. Tracebacks go to the log only.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.failures import preview
from mcpfusion._present.response import ToolResponse
from mcpfusion._surface.completion import Completer, completion
from mcpfusion._surface.outcome import (
    Outcome,
    PromptResult,
    ReadResult,
    SurfaceError,
    SurfaceRequest,
)
from mcpfusion._surface.prompt import Prompt, as_messages
from mcpfusion._surface.resource import Resource
from mcpfusion._tools.action import Action
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import NO_META, ContextFactory, RequestKind
from mcpfusion._tools.decorator import Defaults
from mcpfusion._tools.validation import field_problems

T = TypeVar("T")


class Owner(Defaults, Protocol):
    """What a surface needs from the app that holds it."""

    @property
    def name(self) -> str:
        """The app's name."""
        ...

    async def _catalog_changed(self, tenant: str | None, listed: Literal["prompts"]) -> None:
        """Tells whoever serves the app that the prompts ``tenant`` (or everyone) sees
        changed."""
        ...

    def _dispatch(self, request: SurfaceRequest) -> Awaitable[ToolResponse]:
        """Runs a request through the app's pipeline (middleware, handler, ``outcome``)."""
        ...

    def _checked(self, response: ToolResponse) -> ToolResponse:
        """``response`` with its suggestion targets checked and spelled as listed."""
        ...


class Surface:
    """The resources, prompts and completers of one app (``Fusion`` holds one)."""

    def __init__(self, app: Owner) -> None:
        self._app = app
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}

    def __bool__(self) -> bool:
        return bool(self.resources or self.prompts)

    # -- definitions ---------------------------------------------------------------------

    def add_resource(self, uri: str, handler: Callable[..., Any], **options: Any) -> Resource:
        """Defines a resource (``Fusion.resource``)."""
        app = self._app
        if uri in self.resources:
            raise DefinitionError(f"app '{app.name}' already has a resource {uri!r}")
        resource = Resource(
            uri,
            handler,
            context_type=app.context_type,
            state_type=app.state_type,
            style=app.style,
            **options,
        )
        self.resources[uri] = resource
        return resource

    def add_prompt(self, name: str, handler: Callable[..., Any], **options: Any) -> Prompt:
        """Defines a prompt (``Fusion.prompt``)."""
        app = self._app
        if name in self.prompts:
            raise DefinitionError(f"app '{app.name}' already has a prompt '{name}'")
        prompt = Prompt(
            name,
            handler,
            context_type=app.context_type,
            state_type=app.state_type,
            style=app.style,
            on_change=self._prompts_changed,
            **options,
        )
        self.prompts[name] = prompt
        return prompt

    async def _prompts_changed(self, tenant: str | None) -> None:
        await self._app._catalog_changed(tenant, "prompts")

    # -- lists ---------------------------------------------------------------------------

    def list_resources(self, scopes: Collection[str] | None = None) -> list[dict[str, Any]]:
        """The MCP ``Resource`` objects of the fixed URIs the caller may read."""
        return [
            r.listing()
            for r in self.resources.values()
            if not r.is_template and _allowed(r.requires, scopes)
        ]

    def list_resource_templates(
        self, scopes: Collection[str] | None = None
    ) -> list[dict[str, Any]]:
        """The MCP ``ResourceTemplate`` objects the caller may read through."""
        return [
            r.listing()
            for r in self.resources.values()
            if r.is_template and _allowed(r.requires, scopes)
        ]

    def list_prompts(
        self, scopes: Collection[str] | None = None, *, tenant: str | None = None
    ) -> list[dict[str, Any]]:
        """The MCP ``Prompt`` objects the caller may get: allowed by ``scopes`` (``None``:
        any) and enabled for ``tenant``'s callers (``Prompt.disable``)."""
        return [p.listing() for p in self._gettable(scopes, tenant)]

    def _gettable(self, scopes: Collection[str] | None, tenant: str | None) -> list[Prompt]:
        return [
            p
            for p in self.prompts.values()
            if _allowed(p.requires, scopes) and p.enabled_for(tenant)
        ]

    def find_resource(self, uri: str) -> tuple[Resource, dict[str, str]] | None:
        """The resource ``uri`` names and its variables: a fixed URI first, then templates."""
        fixed = self.resources.get(uri)
        if fixed is not None and not fixed.is_template:
            return fixed, {}
        for resource in self.resources.values():
            found = resource.match(uri) if resource.is_template else None
            if found is not None:
                return resource, found
        return None

    # -- calls ---------------------------------------------------------------------------

    async def read_resource(
        self,
        uri: str,
        *,
        identity: Identity | None = None,
        meta: Mapping[str, Any] | None = None,
        context: ContextFactory | None = None,
        client: ClientChannel | None = None,
    ) -> ReadResult:
        """Reads ``uri`` through its resource's handler and Presenter; ``client`` is the
        client on the other end, as the server adapter provides it (``ctx.elicit``, ...).

        Raises:
            SurfaceError: unknown URI, a variable that fails validation, missing scopes,
                the handler failed, or a middleware refused the read.
        """
        found = self.find_resource(uri) if isinstance(uri, str) else None
        if found is None or not _allowed(found[0].requires, scopes_of(identity)):
            raise SurfaceError("not_found", f"Resource not found: {preview(uri)}.", uri=uri)
        resource, variables = found
        action = resource.action

        async def contents(value: Any, ctx: Any) -> ReadResult:
            response = None
            if not isinstance(value, bytes | bytearray | memoryview):
                response = self._app._checked(await action.respond(value, ctx, None))
            found = resource.contents(uri, value, response)
            return ReadResult(tuple(found), resource.ttl_ms, resource.cache_scope, response)

        outcome = Outcome(contents, f"resource {preview(uri)}", uri)
        return await self._request(
            "resources/read", resource.name, "read", action, variables, outcome,
            identity, meta, context, client,
        )  # fmt: skip

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        identity: Identity | None = None,
        meta: Mapping[str, Any] | None = None,
        context: ContextFactory | None = None,
        client: ClientChannel | None = None,
    ) -> PromptResult:
        """Runs prompt ``name`` with ``arguments`` and returns its messages; ``client`` as
        for ``read_resource``. A question the client answers in a later round (MCP
        2026-07-28) ends the run with ``InputNeeded``, which the adapter sends as an
        ``input_required`` result.

        Raises:
            SurfaceError: unknown prompt, arguments that fail validation, missing scopes,
                the handler failed, or a middleware refused it.
        """
        gettable = self._gettable(scopes_of(identity), _tenant(identity))
        prompt = self.prompts.get(name) if isinstance(name, str) else None
        if prompt is None or prompt not in gettable:
            known = ", ".join(p.name for p in gettable)
            raise SurfaceError(
                "not_found", f"Unknown prompt {preview(name)}. Prompts: {known or 'none'}."
            )

        async def messages(value: Any, _: Any) -> PromptResult:
            found = as_messages(value, checked=self._app._checked)
            return PromptResult(prompt.description or None, tuple(found))

        outcome = Outcome(messages, f"prompt '{name}'")
        return await self._request(
            "prompts/get", name, "get", prompt.action, dict(arguments or {}), outcome,
            identity, meta, context, client,
        )  # fmt: skip

    async def complete(
        self,
        ref: Literal["prompt", "resource"],
        target: str,
        argument: str,
        value: str,
        chosen: Mapping[str, str] | None = None,
        *,
        identity: Identity | None = None,
        meta: Mapping[str, Any] | None = None,
        context: ContextFactory | None = None,
    ) -> dict[str, Any]:
        """The MCP ``Completion`` for ``argument`` of a prompt (by name) or a resource
        template (by its URI template); empty when nothing completes it.

        Raises:
            SurfaceError: an unknown prompt or template, the completer failed, or a
                middleware refused it.
        """
        scopes = scopes_of(identity)
        owner: Prompt | Resource | None = (
            self.prompts.get(target) if ref == "prompt" else self.resources.get(target)
        )
        hidden = isinstance(owner, Prompt) and not owner.enabled_for(_tenant(identity))
        if owner is None or hidden or not _allowed(owner.requires, scopes):
            kind = "prompt" if ref == "prompt" else "resource template"
            raise SurfaceError("not_found", f"Unknown {kind} {preview(target)}.")
        found: Completer | None = owner.completers.get(argument)
        if found is None:
            return {"values": []}

        async def completed(result: Any, _: Any) -> dict[str, Any]:
            if inspect.isawaitable(result):
                result = await result
            return completion(result)

        outcome = Outcome(completed, f"completion of {preview(argument)}")
        arguments = found.arguments(value, dict(chosen or {}))
        return await self._request(
            "completion/complete", owner.name, "complete", found.action, arguments, outcome,
            identity, meta, context, None,
        )  # fmt: skip

    # -- helpers -------------------------------------------------------------------------

    async def _request(
        self,
        kind: RequestKind,
        name: str,
        step: str,
        action: Action,
        arguments: dict[str, Any],
        outcome: Outcome[T],
        identity: Identity | None,
        meta: Mapping[str, Any] | None,
        factory: ContextFactory | None,
        client: ClientChannel | None,
    ) -> T:
        """Validates the arguments and runs the request through the app's pipeline."""
        rejection = None
        kwargs: dict[str, Any] = {}
        try:
            kwargs = action.parse(arguments)
        except ValidationError as exc:
            accepted = [p.wire for p in action.params]
            problems = field_problems(exc, arguments, accepted)
            text = " ".join(f"{path}: {problem}" for path, problem in problems)
            where = outcome.where
            error = SurfaceError(
                "invalid", f"Invalid arguments for {where}: {text}", uri=outcome.uri
            )
            rejection = outcome.refused(error)
        response = await self._app._dispatch(
            SurfaceRequest(
                kind, name, step, action, kwargs, identity, meta or NO_META, client, factory,
                rejection, outcome,
            )
        )  # fmt: skip
        return outcome.result(response)


def _tenant(identity: Identity | None) -> str | None:
    return identity.tenant if identity is not None else None


def _allowed(requires: frozenset[str], scopes: Collection[str] | None) -> bool:
    return scopes is None or not (requires - set(scopes))
