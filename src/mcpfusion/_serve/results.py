"""A tool call's answer on every path: the app's response, contained, and its one wire mapping."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from mcp import types
from mcp.types import methods
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpfusion._identity import Identity
from mcpfusion._present.failures import escaped, preview
from mcpfusion._present.response import FOR_USER, ToolResponse
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import Progress

__all__ = [
    "call_result",
    "only_text",
    "respond",
    "sent_result",
    "to_call_tool_result",
    "without_user_ui",
]

logger = logging.getLogger("mcpfusion")

_USER_ONLY: Final = FOR_USER.to_mcp()


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


def only_text(response: ToolResponse) -> bool:
    """Whether ``response`` is text blocks alone, each for everyone or for the user only:
    ``sent_result`` then writes it without the SDK's models."""
    return not response.attachments and all(
        m is None or m == FOR_USER for m in response.annotations
    )


def sent_result(
    response: ToolResponse, version: str, server_info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``call_result(response)`` as the SDK sends it at protocol ``version``.

    At 2026-07-28 the SDK's runner stamps the result with its ``serverInfo``
    (``server_info``, the server's ``server_info_stamp``), which the hot paths pass.

    Raises:
        ValueError: the SDK's refusal of a result its models reject (pydantic's
            ``ValidationError``), answered "Handler returned an invalid result".
    """
    modern = version in MODERN_PROTOCOL_VERSIONS
    result: dict[str, Any]
    annotations = response.annotations
    if not only_text(response):
        # Rare shapes (other annotations, images, audio): the SDK's own sieve.
        result = methods.serialize_server_result("tools/call", version, call_result(response))
    else:
        # Text blocks, some for the user only: what that sieve makes of call_result() (the
        # model's field order, resultType only at 2026-07-28), without building models
        # (pinned against the sieve by tests/unit/_serve/test_results.py).
        marks = annotations or (None,) * len(response.blocks)
        content = [
            {"text": block, "type": "text"}
            if mark is None
            else {"annotations": dict(_USER_ONLY), "text": block, "type": "text"}
            for block, mark in zip(response.blocks, marks, strict=True)
        ]
        result = {"content": content, "isError": response.is_error}
        if modern:
            result["resultType"] = "complete"
        if response.structured_content is not None:
            result["structuredContent"] = response.structured_content
    if modern and server_info is not None and result.get("_meta") is None:
        result["_meta"] = {SERVER_INFO_META_KEY: dict(server_info)}
    return result


def to_call_tool_result(response: ToolResponse) -> types.CallToolResult:
    """The SDK model of ``response``'s wire form, for servers that return the SDK's models."""
    return types.CallToolResult.model_validate(response.to_mcp(), by_name=False)
