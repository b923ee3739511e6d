"""The live client of the upstream API: timeouts, retries on idempotent methods, and upstream
failures turned into errors the agent can act on (SPEC §9)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

import anyio
import httpx2

from mcpfusion._errors import DefinitionError, ToolError
from mcpfusion._identity import Identity
from mcpfusion._openapi.auth import ApiKey, Bearer, Credentials
from mcpfusion._openapi.operations import Operation

logger = logging.getLogger("mcpfusion")

RETRIED_STATUSES: Final = frozenset({502, 503, 504})
"""Upstream answers that say "try again": retried, on idempotent methods only."""
BACKOFF: Final = 0.2
"""Seconds before the first retry; doubled before each next one."""
MAX_BYTES: Final = 10_000_000
"""The largest response body read by default: past it the call fails, unread."""
DETAIL_LIMIT: Final = 300
"""Characters of the upstream's error body quoted to the agent."""

_CODES: Final = {
    400: ("UPSTREAM_REJECTED", "Fix the arguments the message names and call again."),
    401: ("UPSTREAM_UNAUTHORIZED", "The server's credentials were refused; tell the user."),
    403: ("UPSTREAM_FORBIDDEN", "This caller may not do that; do not retry it."),
    404: ("NOT_FOUND", "Check the identifier, e.g. by listing what exists, and call again."),
    409: ("CONFLICT", "Read the current state again, then retry with it."),
    422: ("UPSTREAM_REJECTED", "Fix the arguments the message names and call again."),
    429: ("RATE_LIMITED", "Wait, then call again."),
}


class Upstream:
    """Sends operations to the upstream API.

    Args:
        base_url: where the API lives, e.g. ``https://api.example.com/v1``.
        credentials: an ``ApiKey`` or ``Bearer`` sent with every request, if any.
        timeout: seconds for each attempt (connect, read, write each).
        retries: further attempts of an idempotent request after a connection failure or a
            502/503/504; a POST or PATCH is never repeated.
        max_bytes: the largest response body read; a larger one is an error, not memory.
        headers: headers sent with every request.
        transport: an ``httpx2`` transport, for tests that serve the API in-process.
    """

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Credentials | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        max_bytes: int = MAX_BYTES,
        headers: Mapping[str, str] | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise DefinitionError(f"base_url is an http(s) URL; got {base_url!r}")
        if credentials is not None and not isinstance(credentials, ApiKey | Bearer):
            raise DefinitionError(f"auth takes an ApiKey or a Bearer; got {credentials!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise DefinitionError(f"timeout is a positive number of seconds; got {timeout!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise DefinitionError(f"retries is a count, 0 or more; got {retries!r}")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise DefinitionError(f"max_bytes is a positive number of bytes; got {max_bytes!r}")
        self.max_bytes = max_bytes
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self.retries = retries
        self._timeout = httpx2.Timeout(timeout)
        self._headers = dict(headers or {})
        self._transport = transport

    def _client(self) -> httpx2.AsyncClient:
        # A client per call: a pool outlives no event loop (FusionTester.call_sync runs
        # each call in its own), and a sync handler's thread shares nothing.
        return httpx2.AsyncClient(
            timeout=self._timeout,
            headers=self._headers,
            transport=self._transport,
            follow_redirects=False,  # a redirect could carry the credentials elsewhere
        )

    @property
    def per_caller(self) -> bool:
        """Whether the credentials depend on the caller's identity."""
        return isinstance(self.credentials, Bearer) and self.credentials.per_caller

    async def send(
        self, operation: Operation, arguments: Mapping[str, Any], identity: Identity | None = None
    ) -> Any:
        """Makes the operation's request with the validated ``arguments`` (by document name),
        with the credentials for ``identity`` (the caller).

        Returns:
            The decoded JSON body, the text of another body, or ``None`` for an empty one.

        Raises:
            ToolError: when the upstream cannot be reached or answers with an error.
        """
        token = None
        if isinstance(self.credentials, Bearer):
            try:
                token = await self.credentials.current(identity)
            except Exception as exc:
                # The server log gets the traceback; the agent reads only that there are no
                # credentials (the function's message may hold secrets).
                logger.error("the Bearer token function failed", exc_info=exc)
                raise ToolError(
                    "UPSTREAM_UNAUTHORIZED",
                    f"No credentials for the upstream API could be had for {operation.action}.",
                    recovery="Tell the user; retrying will not help.",
                ) from exc
        async with self._client() as client:
            return await self._send(client, operation, arguments, token)

    async def _send(
        self,
        client: httpx2.AsyncClient,
        operation: Operation,
        arguments: Mapping[str, Any],
        token: str | None,
    ) -> Any:
        request = self._request(client, operation, arguments, token)
        attempts = 1 + (self.retries if operation.idempotent else 0)
        delay = BACKOFF
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = await client.send(request, stream=True)
                try:
                    body = await self._read(operation, response)
                finally:
                    await response.aclose()
            except httpx2.TimeoutException:
                failure = "did not answer in time"
            except httpx2.TransportError as exc:
                failure = f"could not be reached ({type(exc).__name__})"
            else:
                if last or response.status_code not in RETRIED_STATUSES:
                    return _result(operation, response, body)
                failure = f"answered {response.status_code}"
            if last:
                raise _unreachable(operation, failure)
            await anyio.sleep(delay)  # the backoff between attempts: no event to wait for
            delay *= 2
        raise _unreachable(operation, "was not asked")  # attempts is at least 1

    async def _read(self, operation: Operation, response: httpx2.Response) -> bytes:
        """Reads the body, refusing one past ``max_bytes``."""
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                raise ToolError(
                    "UPSTREAM_TOO_LARGE",
                    f"The upstream API answered {operation.action} with more than "
                    f"{self.max_bytes} bytes; the response was not read.",
                    recovery="Narrow the request (filters, a smaller page) and call again.",
                )
        return bytes(body)

    def _request(
        self,
        client: httpx2.AsyncClient,
        operation: Operation,
        arguments: Mapping[str, Any],
        token: str | None = None,
    ) -> httpx2.Request:
        path = operation.path
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        cookies: dict[str, str] = {}
        body: Any = None
        for param in operation.parameters:
            if param.name not in arguments or arguments[param.name] is None:
                continue
            value = arguments[param.name]
            if param.location == "path":
                # Quoted whole: a value cannot climb out of its segment ("../admin").
                path = path.replace("{" + param.name + "}", quote(_text(value), safe=""))
            elif param.location == "query":
                query[param.name] = value if isinstance(value, list) else _text(value)
            elif param.location == "header":
                headers[param.name] = _text(value)
            elif param.location == "cookie":
                cookies[param.name] = _text(value)
            else:
                body = value
        credentials = self.credentials
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        elif isinstance(credentials, ApiKey):
            {"header": headers, "query": query, "cookie": cookies}[credentials.location][
                credentials.name
            ] = credentials.key
        extra: dict[str, Any] = {}
        if body is not None:
            if operation.body_media == "application/x-www-form-urlencoded":
                extra["data"] = body
            else:
                extra["json"] = body
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return client.build_request(
            operation.method.upper(),
            self.base_url + path,
            params=query,
            headers=headers,
            **extra,
        )


def _text(value: Any) -> str:
    """A scalar as the text a URL or header carries (``true``, not ``True``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _result(operation: Operation, response: httpx2.Response, body: bytes) -> Any:
    text = body.decode(response.encoding or "utf-8", errors="replace")
    if response.is_success:
        if not body:
            return None
        if "json" in response.headers.get("content-type", ""):
            try:
                return json.loads(body)
            except ValueError:
                raise ToolError(
                    "UPSTREAM_INVALID",
                    f"{operation.method.upper()} {operation.path} answered with invalid JSON.",
                    recovery="Tell the user the upstream service is misbehaving.",
                ) from None
        return text
    status = response.status_code
    code, recovery = _CODES.get(
        status,
        ("UPSTREAM_UNAVAILABLE", "Try again later.")
        if status >= 500
        else ("UPSTREAM_REJECTED", "Fix the request and call again."),
    )
    detail = " ".join(text.split())[:DETAIL_LIMIT]
    message = f"The upstream API answered {status} to {operation.action}."
    retry_after = response.headers.get("retry-after", "")
    raise ToolError(
        code,
        message + (f" It said: {detail}" if detail else ""),
        recovery=recovery,
        details={"status": status},
        retry_after=int(retry_after) if retry_after.isdigit() else None,
    )


def _unreachable(operation: Operation, what: str) -> ToolError:
    return ToolError(
        "UPSTREAM_UNAVAILABLE",
        f"The upstream API {what} for {operation.action}.",
        recovery="Try again later; if it keeps failing, tell the user the service is down.",
    )
