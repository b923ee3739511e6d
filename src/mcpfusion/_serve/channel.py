"""The client channel's shape on every serving path: one base, its questions written once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from mcp import types

from mcpfusion._identity import Identity
from mcpfusion._tools.client import Answer, Feature, LogLevel, Message, Root, Sampled

__all__ = ["Channel", "Notices", "R"]

R = TypeVar("R", bound=types.Result)


class Notices(Protocol):
    """Where a channel's change notices go (``ClientHub`` is one)."""

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """Tells the subscribers of the resources ``patterns`` cover."""


class Channel:
    """A ``ClientChannel`` of one call: what each transport's channel has in common.

    The questions (``elicit``, ``sample``, ``list_roots``) are the same SDK requests and
    results on every path; a subclass says only how a request reaches the client
    (``_ask``), what the client offers (``supports``) and how a log message is sent.

    Args:
        hub: where change notices go (``None``: a path that tells no one).
    """

    protocol_refusals = False
    """Whether a call needing a feature the client lacks is refused (2026-07-28's ``-32021``)."""

    def __init__(self, hub: Notices | None) -> None:
        self._hub = hub

    def supports(self, feature: Feature) -> bool:
        """Whether the client declared ``feature`` and this connection can carry it."""
        raise NotImplementedError

    async def close_sse_stream(self) -> bool:
        """Closes the call's SSE stream when the transport can resume it (here: never)."""
        return False

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Sends ``notifications/message`` for the call, at the client's level."""
        raise NotImplementedError

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        """Sends ``request`` to the client; its answer, validated as ``kind``."""
        raise NotImplementedError

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> tuple[Answer, Any]:
        """Asks the user with a form; the answer's action and content."""
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        result = await self._ask(request, types.ElicitResult, key)
        return result.action, result.content

    async def sample(
        self,
        messages: Sequence[Message],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        key: str | None = None,
    ) -> Sampled:
        """Asks the client's model; the text of its reply."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(role=role, content=types.TextContent(text=text))
                    for role, text in messages
                ],
                system_prompt=system,
                max_tokens=max_tokens,
                temperature=temperature,
            )
        )
        result = await self._ask(request, types.CreateMessageResult, key)
        content = result.content
        text = content.text if isinstance(content, types.TextContent) else ""
        return Sampled(text, result.model, result.stop_reason)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots."""
        result = await self._ask(types.ListRootsRequest(), types.ListRootsResult, key)
        return [Root(str(root.uri), root.name) for root in result.roots]

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """Tells resource subscribers (SPEC §15)."""
        if self._hub is not None:
            await self._hub.invalidated(patterns, identity)
