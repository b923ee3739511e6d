"""A tool call's answer on every path: the app's response, contained, and its one wire mapping."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mcp import types
from mcp.types import methods

from mcpfusion._identity import Identity
from mcpfusion._present.failures import escaped, preview
from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import Progress

__all__ = ["call_result", "respond", "sent_result", "to_call_tool_result", "without_user_ui"]

logger = logging.getLogger("mcpfusion")


async def respond(
    app: ServableApp,
    name: str,
    arguments: Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
    progress: Progress,
    identity: Identity | None,
    client: ClientChannel,
    client_name: str | None = None,
) -> ToolResponse:
    """The app's answer to a ``tools/call``, the same on the SDK's path and the hot paths.

    Everything the model should read is a response: an exception the app failed to
    contain becomes the escaped-error result. A question of 2026-07-28 (``InputNeeded``),
    a refused capability (``ClientLacks``) and a cancellation are ``BaseException``s and
    propagate: the SDK's path answers the first two (the hot paths serve no session
    where they arise). A host that would send blocks for the user to the model too
    (``client_name``, its ``clientInfo.name``; ``sends_user_ui``) gets none.
    """
    try:
        response = await app.call_tool(
            name, arguments, progress=progress, meta=meta, identity=identity, client=client
        )
        if not isinstance(response, ToolResponse):
            raise TypeError(f"call_tool returned {type(response).__name__}")
    except Exception:
        logger.exception("tool %s raised out of the app", preview(name))
        response = escaped(name)
    if response.annotations and not app.sends_user_ui(client_name):
        response = without_user_ui(response)
    return response


def without_user_ui(response: ToolResponse) -> ToolResponse:
    """``response`` without its blocks for the user only (``audience: ["user"]``)."""
    kept = [
        i
        for i, marks in enumerate(response.annotations)
        if marks is None or set(marks.audience) != {"user"}
    ]
    if len(kept) == len(response.blocks) or not (kept or response.attachments):
        return response
    return replace(
        response,
        blocks=tuple(response.blocks[i] for i in kept),
        annotations=tuple(response.annotations[i] for i in kept),
    )


def call_result(response: ToolResponse) -> dict[str, Any]:
    """The handler result of ``response``: the one mapping of a response onto the wire.

    ``ToolResponse.to_mcp()`` decides the shape; ``resultType`` is what 2026-07-28
    requires, and the 2025-11-25 sieve drops it. A new dict, the caller's to keep.
    """
    result = response.to_mcp()
    result["resultType"] = "complete"
    return result


def sent_result(response: ToolResponse, version: str) -> dict[str, Any]:
    """``call_result(response)`` as the SDK sends it at protocol ``version``.

    Raises:
        ValueError: the SDK's refusal of a result its models reject (pydantic's
            ``ValidationError``), answered "Handler returned an invalid result".
    """
    if response.annotations or response.attachments:
        # Rare shapes (blocks for the user only, images, audio): the SDK's own sieve.
        return methods.serialize_server_result("tools/call", version, call_result(response))
    # Text blocks alone: what that sieve makes of call_result() (the model's field order,
    # no resultType on the 2025 versions the hot paths serve), without building models
    # (pinned against the sieve by tests/unit/_serve/test_results.py).
    result: dict[str, Any] = {
        "content": [{"text": block, "type": "text"} for block in response.blocks],
        "isError": response.is_error,
    }
    if response.structured_content is not None:
        result["structuredContent"] = response.structured_content
    return result


def to_call_tool_result(response: ToolResponse) -> types.CallToolResult:
    """The SDK model of ``response``'s wire form, for servers that return the SDK's models."""
    return types.CallToolResult.model_validate(response.to_mcp(), by_name=False)
