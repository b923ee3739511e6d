"""The checks an HTTP request passes before the MCP SDK sees it.

Host and Origin are parsed and compared exactly (DNS-rebinding protection); a POST must
be JSON (415 otherwise); a stateless server has no stream to GET (405); a body that is
too large (413) or too slow as a whole (408) is refused before it is parsed. A body that is not JSON
(-32700), not JSON-RPC or with a repeated key (-32600) is answered here, with the id it
carries and without quoting it; a batch is served member by member where the protocol
version allows one (2025-03-26), up to a bound, until its client goes away, and refused
where it does not.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
import pydantic_core
from mcp.shared.inbound import decode_header_value
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpfusion._present.failures import preview
from mcpfusion._serve.http.hosts import HostPolicy, _headers, _is_json
from mcpfusion._serve.http.replies import (
    DEFAULT_VERSION,
    capture,
    replay_body,
    request_ids,
    send_json,
    unanswered_when_cancelled,
)
from mcpfusion._serve.jsonrpc import (
    BATCH_VERSIONS,
    INVALID_REQUEST,
    PARSE_ERROR,
    encode,
    error,
    recover_id,
    repeated_key,
    usable_id,
    validated,
)

logger = logging.getLogger("mcpfusion")

MESSAGE: Final = "mcpfusion.message"
"""The ASGI scope key of a POST's JSON-RPC message (or batch), parsed and validated by the
guard: the body the app receives, decoded once (the hot path reads it here)."""


async def _plain(
    send: Send, status: int, text: str, headers: Sequence[tuple[str, str]] = ()
) -> None:
    raw = [(b"content-type", b"text/plain; charset=utf-8")]
    raw += [(k.encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": text.encode()})


class RequestGuard:
    """ASGI middleware in front of the MCP endpoint: the checks of this module's docstring.

    Args:
        app: the endpoint.
        policy: the Host/Origin policy.
        stateless: whether the server keeps no sessions (then a GET is 405).
        max_body_bytes: a larger body is 413.
        body_timeout: seconds the whole body may take to arrive (then 408).
        max_batch_size: a batch of more messages is refused whole.
        sessions: the open stateful sessions' transports, by session id (the SDK's), whose
            negotiated protocol version decides whether a batch is allowed.
    """

    def __init__(
        self,
        app: ASGIApp,
        policy: HostPolicy,
        *,
        stateless: bool,
        max_body_bytes: int,
        body_timeout: float,
        max_batch_size: int = 100,
        sessions: Mapping[str, object] | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.stateless = stateless
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.max_batch_size = max_batch_size
        self.sessions: Mapping[str, object] = {} if sessions is None else sessions
        # Each session's negotiated protocol version, by its transport: forgotten with it.
        self._negotiated: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        # A stateless request has no session a cancellation could name: requests in flight
        # are found by caller and id instead (see _in_flight).
        self._in_flight: dict[tuple[Any, ...], anyio.CancelScope] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.policy.protected:
            if not self.policy.host_allowed(_headers(scope, b"host")):
                logger.info("refused a request for a Host this server does not serve")
                await _plain(send, 421, "Invalid Host header")
                return
            if not self.policy.origin_allowed(_headers(scope, b"origin")):
                logger.info("refused a request from an Origin this server does not allow")
                await _plain(send, 403, "Invalid Origin header")
                return
        method = scope["method"]
        if method == "GET" and self.stateless:
            await _plain(send, 405, "A stateless server has no stream to GET", [("allow", "POST")])
            return
        if method != "POST":
            await self.app(scope, receive, send)
            return
        if not _is_json(_headers(scope, b"content-type")):
            await _plain(send, 415, "Content-Type must be application/json")
            return
        body = await self._body(receive, send)
        if body is None:
            return
        parsed, answer = screen(body)
        if answer is None:
            answer = _task_name_mismatch(scope, parsed)
        if answer is not None:
            await send_json(send, 400, answer)
            return
        # The SDK compares the media type case-sensitively: hand it the canonical spelling.
        # The message goes on parsed and validated, so the hot path does not parse it again.
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
        canonical = [*headers, (b"content-type", b"application/json")]
        scope = {**scope, "headers": canonical, MESSAGE: parsed}
        if isinstance(parsed, list):
            await self._batch(scope, parsed, receive, send)
        elif (
            parsed.get("method") == "initialize"
            and not self.stateless
            and not _headers(scope, b"mcp-session-id")
        ):
            await self._initialize(scope, body, send)
        elif isinstance(parsed, dict) and "method" in parsed and "id" in parsed:
            send = unanswered_when_cancelled(send, parsed["id"])
            if not self.stateless:
                await self.app(scope, replay_body(body, receive), send)
                return
            caller = _caller(scope)
            key = None if caller is None else (*caller, repr(parsed["id"]))
            response = _Progress(send)
            with anyio.CancelScope() as cancel:
                if key is not None:
                    self._in_flight[key] = cancel
                try:
                    await self.app(scope, replay_body(body, receive), response.send)
                finally:
                    if key is not None and self._in_flight.get(key) is cancel:
                        del self._in_flight[key]
            if cancel.cancelled_caught:
                await response.end_unanswered()
        else:
            if self.stateless and isinstance(parsed, dict):
                self._cancel(scope, parsed)
            await self.app(scope, replay_body(body, receive), send)

    async def _initialize(self, scope: Scope, body: bytes, send: Send) -> None:
        """Opens a session, unless ``initialize`` failed: then no session is kept.

        The SDK registers the session before answering and keeps it even when its answer
        is an error; a failed handshake then held a session (and its memory) for the idle
        timeout, and its id still worked.
        """
        captured = await capture(self.app, scope, body)
        session = next((v for k, v in captured.headers if k.lower() == b"mcp-session-id"), None)
        messages = captured.messages()
        failed = any(isinstance(m, dict) and "error" in m for m in messages)
        if session is not None and not failed:
            self._note_version(session.decode("latin-1"), messages)
        if session is not None and failed:
            ending = {
                **{k: v for k, v in scope.items() if k != MESSAGE},
                "method": "DELETE",
                "headers": [*scope["headers"], (b"mcp-session-id", session)],
            }
            await capture(self.app, ending, b"")
            captured.headers = [
                (k, v) for k, v in captured.headers if k.lower() != b"mcp-session-id"
            ]
        await captured.replay(send)

    def _cancel(self, scope: Scope, message: dict[str, Any]) -> None:
        """Applies a stateless ``notifications/cancelled`` to the caller's request in flight.

        Without a session, the request is found by the caller (its verified
        ``Authorization`` header and address) and its id, in this process only: behind a
        load balancer a cancellation that reaches another replica does nothing (closing
        the connection always cancels). The request then ends without an answer. An
        anonymous caller cannot be told from another (behind a proxy they share an
        address, and request ids repeat), so its cancellations stop nothing.
        """
        params = message.get("params")
        caller = _caller(scope)
        if (
            caller is None
            or message.get("method") != "notifications/cancelled"
            or not isinstance(params, dict)
        ):
            return
        request_id = usable_id(params.get("requestId"))
        found = self._in_flight.get((*caller, repr(request_id)))
        if request_id is not None and found is not None:
            found.cancel()

    def _note_version(self, session: str, messages: list[Any]) -> None:
        """Keeps the protocol version the SDK answered a session's ``initialize`` with."""
        transport = self.sessions.get(session)
        for message in messages:
            result = message.get("result") if isinstance(message, dict) else None
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if transport is not None and isinstance(version, str):
                self._negotiated[transport] = version

    def _version(self, scope: Scope) -> str:
        """The protocol version a request is served at.

        A session's is the one negotiated at ``initialize`` (the header cannot change it);
        without one, the ``MCP-Protocol-Version`` header's, or 2025-03-26 when it is absent
        (what MCP and the SDK assume).
        """
        session = next(iter(_headers(scope, b"mcp-session-id")), None)
        transport = None if session is None else self.sessions.get(session)
        negotiated = None if transport is None else self._negotiated.get(transport)
        if negotiated is not None:
            return negotiated
        return next(iter(_headers(scope, b"mcp-protocol-version")), DEFAULT_VERSION)

    async def _batch(self, scope: Scope, members: list[Any], receive: Receive, send: Send) -> None:
        """Answers a batch: each member served alone, the answers sent as one array.

        Members are served one after the other until the client goes away; then the one
        running is cancelled and the rest are not served.
        """
        version = self._version(scope)
        if version not in BATCH_VERSIONS:
            reason = f"Invalid Request: no batches at protocol version {preview(version)}"
            answers = [error(i, INVALID_REQUEST, reason) for i in request_ids(members)]
            await send_json(send, 400, answers or error(None, INVALID_REQUEST, reason))
            return
        if len(members) > self.max_batch_size:
            reason = (
                f"Invalid Request: a batch of {len(members)} messages; "
                f"at most {self.max_batch_size} are served"
            )
            await send_json(send, 400, error(None, INVALID_REQUEST, reason))
            return
        gone = False
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            served = await self._members(scope, members)
            group.cancel_scope.cancel()
        if gone:
            logger.info("a batch's client went away: its members were stopped")
            return
        if served:
            await send_json(send, 200, served)
        else:
            await _plain(send, 202, "")

    async def _members(self, scope: Scope, members: list[Any]) -> list[Any]:
        """Serves a batch's members one by one; their answers."""
        answers = []
        for member in members:
            message = validated(member)
            if isinstance(message, tuple):
                request_id, reason = message
                answers.append(error(request_id, INVALID_REQUEST, f"Invalid Request: {reason}"))
            elif member.get("method") == "initialize":
                reason = "Invalid Request: initialize cannot be part of a batch"
                answers.append(error(usable_id(member.get("id")), INVALID_REQUEST, reason))
            else:
                answers += await self._alone(scope, member)
        return answers

    async def _alone(self, scope: Scope, member: dict[str, Any]) -> list[Any]:
        """Serves one batch member as its own request; its answer, if it has one."""
        captured = await capture(self.app, {**scope, MESSAGE: member}, encode(member))
        if captured.status == 202:
            return []
        found = captured.messages()
        return [m for m in found if isinstance(m, dict) and m.get("id") == member.get("id")]

    async def _body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or ``None`` once a 408/413 (or a disconnect) ended the request.

        The deadline is for the whole body: one bounded per pause let a body trickle in a
        byte at a time, holding its connection and task for as long as the client liked.
        """
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout) as waited:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body_bytes:
                    await _plain(send, 413, "Request body too large")
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        if waited.cancelled_caught:
            await _plain(send, 408, "The request body took too long to arrive")
        return None


def screen(body: bytes) -> tuple[Any, Any]:
    """A POST body decoded, or the JSON-RPC error that answers it: ``(parsed, answer)``.

    Parsing is strict (no lone surrogate, no NaN, no number past 4,300 digits, no nesting
    past pydantic's limit) and a key repeated in one object is refused (a parser would keep
    the last one, a reader of the text may act on the first).
    """
    try:
        parsed = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError as exc:
        return None, error(recover_id(body), PARSE_ERROR, f"Parse error: {exc}")
    request_id = usable_id(parsed.get("id")) if isinstance(parsed, dict) else None
    repeated = repeated_key(body, parsed)
    if repeated is not None:
        reason = f"the key {preview(repeated)} appears twice in one object"
        return None, error(request_id, INVALID_REQUEST, f"Invalid Request: {reason}")
    if isinstance(parsed, list):
        if not parsed:
            return None, error(None, INVALID_REQUEST, "Invalid Request: an empty batch")
        return parsed, None
    message = validated(parsed)
    if isinstance(message, tuple):
        request_id, reason = message
        return None, error(request_id, INVALID_REQUEST, f"Invalid Request: {reason}")
    return parsed, None


class _Progress:
    """A ``send`` that remembers how far the response got, to end it after a cancellation."""

    __slots__ = ("_send", "complete", "started")

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = self.complete = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)

    async def end_unanswered(self) -> None:
        """Ends the response of a cancelled request: an event stream with no answer."""
        if not self.started:
            headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})
        if not self.complete:
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})


def _caller(scope: Scope) -> tuple[Any, ...] | None:
    """Who sent a request, as far as a stateless server can tell; ``None`` if anonymous.

    Only a credential the server verified (``Auth``) tells callers apart: an address is
    shared by every client behind one proxy, and an unverified header is anyone's.
    """
    if not getattr(scope.get("user"), "is_authenticated", False):
        return None
    client = scope.get("client") or ("", 0)
    return (client[0], *_headers(scope, b"authorization"))


_TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
HEADER_MISMATCH: Final = -32020


def _task_name_mismatch(scope: Scope, parsed: Any) -> dict[str, Any] | None:
    """The refusal of a ``tasks/*`` request whose ``Mcp-Name`` names another task.

    SEP-2663 mirrors the ``taskId`` of ``tasks/get``, ``tasks/update`` and ``tasks/cancel``
    in ``Mcp-Name`` for routing intermediaries; a server checks the two agree (SEP-2243:
    ``-32020``, HTTP 400), as the SDK does for ``tools/call``'s name. Without the header
    nothing is checked: clients of other revisions do not send it.
    """
    if not isinstance(parsed, dict) or parsed.get("method") not in _TASK_METHODS:
        return None
    values = _headers(scope, b"mcp-name")
    if not values:
        return None
    params = parsed.get("params")
    task_id = params.get("taskId") if isinstance(params, dict) else None
    if len(values) == 1 and decode_header_value(values[0].strip()) == task_id:
        return None
    return error(
        usable_id(parsed.get("id")), HEADER_MISMATCH, "Mcp-Name header does not match taskId"
    )
