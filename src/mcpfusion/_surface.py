"""An app's resources, prompts and completions: listing, reading, getting, completing.

Every failure a client should read is a ``SurfaceError`` with a readable message; the
adapter sends it as the protocol's JSON-RPC error. Tracebacks go to the log only.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import ValidationError

from mcpfusion._action import Action
from mcpfusion._client import ClientChannel
from mcpfusion._completion import Completer, completion
from mcpfusion._context import NO_META, ContextFactory, Request
from mcpfusion._errors import DefinitionError, ToolError
from mcpfusion._failures import preview
from mcpfusion._format import fold_lines, neutralize
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._prompt import Message, Prompt, as_messages
from mcpfusion._resource import CacheScope, Resource
from mcpfusion._response import ToolResponse
from mcpfusion._validation import field_problems

if TYPE_CHECKING:
    from mcpfusion._app import Fusion

logger = logging.getLogger("mcpfusion")

ErrorKind = Literal["not_found", "invalid", "forbidden", "failed"]
MESSAGE_LIMIT: Final = 1_000


class SurfaceError(Exception):
    """A resource read, prompt or completion the client must be told failed.

    Attributes:
        kind: ``not_found`` (unknown URI or name), ``invalid`` (a bad argument or
            variable), ``forbidden`` (missing scopes), ``failed`` (the handler failed).
        message: what the client reads.
        uri: the URI read, for a resource.
    """

    def __init__(self, kind: ErrorKind, message: str, *, uri: str | None = None) -> None:
        text = neutralize(fold_lines(message))
        if len(text) > MESSAGE_LIMIT:
            text = text[: MESSAGE_LIMIT - 1] + "…"
        super().__init__(text)
        self.kind: ErrorKind = kind
        self.message = text
        self.uri = uri


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What ``resources/read`` sends: the contents and SEP-2549 cache hints.

    Attributes:
        contents: the MCP ``TextResourceContents``/``BlobResourceContents`` dicts.
        ttl_ms: how long the result stays fresh, in milliseconds.
        cache_scope: ``"public"`` or ``"private"``.
        response: the rendered response the text contents came from (its view is the
            side door tests read), or ``None`` for a blob.
    """

    contents: tuple[dict[str, Any], ...]
    ttl_ms: int
    cache_scope: CacheScope
    response: ToolResponse | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class PromptResult:
    """What ``prompts/get`` sends: the description and the messages."""

    description: str | None
    messages: tuple[Message, ...]

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``GetPromptResult`` as a JSON-compatible dict."""
        found: dict[str, Any] = {"messages": [m.to_mcp() for m in self.messages]}
        if self.description:
            found["description"] = self.description
        return found


class Surface:
    """The resources, prompts and completers of one app (``Fusion`` holds one)."""

    def __init__(self, app: Fusion) -> None:
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
                or the handler failed.
        """
        found = self.find_resource(uri) if isinstance(uri, str) else None
        if found is None or not _allowed(found[0].requires, scopes_of(identity)):
            raise SurfaceError("not_found", f"Resource not found: {preview(uri)}.", uri=uri)
        resource, variables = found
        action = resource.action
        where = f"resource {preview(uri)}"
        kwargs = _parsed(action, variables, where, uri)
        request = self._request(resource.name, "read", identity, meta, client)
        value, response = await self._run(action, kwargs, request, context, where, uri)
        try:
            contents = resource.contents(uri, value, response)
        except Exception as exc:
            raise _failed(exc, where, uri) from None
        return ReadResult(tuple(contents), resource.ttl_ms, resource.cache_scope, response)

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
                or the handler failed.
        """
        gettable = self._gettable(scopes_of(identity), _tenant(identity))
        prompt = self.prompts.get(name) if isinstance(name, str) else None
        if prompt is None or prompt not in gettable:
            known = ", ".join(p.name for p in gettable)
            raise SurfaceError(
                "not_found", f"Unknown prompt {preview(name)}. Prompts: {known or 'none'}."
            )
        where = f"prompt '{name}'"
        kwargs = _parsed(prompt.action, dict(arguments or {}), where)
        request = self._request(name, "get", identity, meta, client)
        value, _ = await self._run(
            prompt.action, kwargs, request, context, where, None, present=False
        )
        try:
            messages = as_messages(value)
        except Exception as exc:
            raise _failed(exc, where, None) from None
        return PromptResult(prompt.description or None, tuple(messages))

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
            SurfaceError: an unknown prompt or template, or the completer failed.
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
        where = f"completion of '{preview(argument)}'"
        kwargs = found.action.parse(found.arguments(value, dict(chosen or {})))
        request = self._request(owner.name, "complete", identity, meta)
        result, _ = await self._run(
            found.action, kwargs, request, context, where, None, present=False
        )
        if inspect.isawaitable(result):
            result = await result
        try:
            return completion(result)
        except TypeError as exc:
            raise _failed(exc, where, None) from None

    # -- helpers -------------------------------------------------------------------------

    def _request(
        self,
        name: str,
        step: str,
        identity: Identity | None,
        meta: Mapping[str, Any] | None,
        client: ClientChannel | None = None,
    ) -> Request:
        state = self._app._lifespan.state
        return Request(name, step, meta or NO_META, None, identity, state, client=client)

    async def _run(
        self,
        action: Action,
        kwargs: dict[str, Any],
        request: Request,
        factory: ContextFactory | None,
        where: str,
        uri: str | None,
        *,
        present: bool = True,
    ) -> tuple[Any, ToolResponse | None]:
        """Runs a handler (and, for a resource, presents its value)."""
        try:
            make = factory or self._app._factory
            context = make(request)
            if inspect.isawaitable(context):
                context = await context
            value = await action.invoke(kwargs, request, context)
            if not present or isinstance(value, bytes | bytearray | memoryview):
                return value, None
            return value, await action.respond(value, context, None)
        except SurfaceError:
            raise
        except Exception as exc:
            raise _failed(exc, where, uri) from None


def _tenant(identity: Identity | None) -> str | None:
    return identity.tenant if identity is not None else None


def _allowed(requires: frozenset[str], scopes: Collection[str] | None) -> bool:
    return scopes is None or not (requires - set(scopes))


def _parsed(
    action: Action, arguments: dict[str, Any], where: str, uri: str | None = None
) -> dict[str, Any]:
    try:
        return action.parse(arguments)
    except ValidationError as exc:
        accepted = [p.wire for p in action.params]
        problems = field_problems(exc, arguments, accepted)
        text = " ".join(f"{path}: {problem}" for path, problem in problems)
        raise SurfaceError("invalid", f"Invalid arguments for {where}: {text}", uri=uri) from None


def _failed(exc: BaseException, where: str, uri: str | None) -> SurfaceError:
    """A handler's failure as the client reads it; the traceback goes to the log only."""
    if isinstance(exc, ToolError):
        envelope = exc.envelope
        text = envelope.message + (f" {envelope.recovery}" if envelope.recovery else "")
        kind: ErrorKind = "not_found" if envelope.code == "NOT_FOUND" else "failed"
        return SurfaceError(kind, text, uri=uri)
    logger.error("%s raised an exception", where, exc_info=exc)
    return SurfaceError("failed", f"The {where} failed with an internal error.", uri=uri)
