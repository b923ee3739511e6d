"""What the guard sends and replays around the SDK: bodies replayed, streams captured."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import pydantic_core
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpfusion._serve.jsonrpc import encode, usable_id

__all__ = [
    "DEFAULT_VERSION",
    "REQUEST_CANCELLED",
    "capture",
    "replay",
    "replay_body",
    "request_ids",
    "send_json",
    "unanswered_when_cancelled",
]

REQUEST_CANCELLED: Final = -32800

DEFAULT_VERSION: Final = "2025-03-26"
"""The protocol version of a request without ``MCP-Protocol-Version`` (MCP, the SDK)."""


def unanswered_when_cancelled(send: Send, request_id: Any) -> Send:
    """``send`` without the SDK's -32800 answer to a request the client cancelled.

    MCP says a cancelled request is not answered; the SDK's 2025 HTTP transport still
    writes -32800 "Request cancelled" to the request's stream (clients then report an
    unknown message id). The event is dropped: the stream ends with no answer.
    """
    marker = b'"code":' + str(REQUEST_CANCELLED).encode()

    async def filtered(message: Message) -> None:
        if message["type"] == "http.response.body" and marker in message.get("body", b""):
            kept = [line for line in _events(message["body"]) if not _cancels(line, request_id)]
            message = {**message, "body": b"".join(kept)}
        await send(message)

    return filtered


def _events(body: bytes) -> list[bytes]:
    """An SSE body's events, each with its blank-line ending."""
    parts = body.replace(b"\r\n", b"\n").split(b"\n\n")
    return [part + b"\n\n" for part in parts if part]


def _cancels(event: bytes, request_id: Any) -> bool:
    for line in event.split(b"\n"):
        if line.startswith(b"data:"):
            try:
                message = pydantic_core.from_json(line[5:])
            except ValueError:
                return False
            error = message.get("error") if isinstance(message, dict) else None
            return (
                isinstance(error, dict)
                and error.get("code") == REQUEST_CANCELLED
                and message.get("id") == request_id
            )
    return False


def request_ids(members: list[Any]) -> list[Any]:
    return [
        usable_id(m.get("id"))
        for m in members
        if isinstance(m, dict) and "method" in m and usable_id(m.get("id")) is not None
    ]


async def send_json(send: Send, status: int, message: Any) -> None:
    body = encode(message)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass(slots=True)
class _Captured:
    """A response the guard held back: its status, headers and whole body."""

    status: int = 500
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""

    @property
    def content_type(self) -> str:
        found = (v for k, v in self.headers if k.lower() == b"content-type")
        return next(found, b"").decode("latin-1")

    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the body (one JSON document, or SSE events)."""
        if not self.body:
            return []
        if not self.content_type.startswith("text/event-stream"):
            return [pydantic_core.from_json(self.body)]
        return [
            pydantic_core.from_json(line[5:])
            for line in self.body.replace(b"\r\n", b"\n").split(b"\n")
            if line.startswith(b"data:") and line[5:].strip()
        ]

    async def replay(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


async def capture(app: ASGIApp, scope: Scope, body: bytes) -> _Captured:
    """Runs ``app`` on one request body and holds its whole response."""
    captured = _Captured()
    chunks: list[bytes] = []
    given = False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # the client is there until the response is held
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            captured.status = message["status"]
            captured.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    captured.body = b"".join(chunks)
    return captured


def replay(first: Message, receive: Receive) -> Receive:
    """A ``receive`` that gives ``first`` (a message already read) once, then the real
    stream's next messages."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return first
        return await receive()

    return replayed


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the whole body read once, then the stream's next messages."""
    return replay({"type": "http.request", "body": body, "more_body": False}, receive)
