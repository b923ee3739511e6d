"""A surface request and what it ends in: SurfaceRequest, Outcome, SurfaceError, results."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, NamedTuple, TypeVar

from mcpfusion._errors import ErrorEnvelope, ToolError
from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse, envelope_of, error_response, success
from mcpfusion._surface.prompt import Message
from mcpfusion._surface.resource import CacheScope
from mcpfusion._tools.action import Action
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import ContextFactory, RequestKind
from mcpfusion._wire.format import fold_lines, neutralize
from mcpfusion._wire.parse import parse_error

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


_PENDING: Any = object()
_DONE: Final = success("ok")  # what middleware sees of a request that was answered


T = TypeVar("T")


class Outcome(Generic[T]):
    """What a resource read, prompt or completion leaves after the pipeline ran it.

    Middleware see a ``ToolResponse`` (an error one when the request failed); the surface
    reads the result, or the ``SurfaceError`` to send, from here.
    """

    __slots__ = ("_finish", "error", "uri", "value", "where")

    def __init__(
        self, finish: Callable[[Any, Any], Awaitable[T]], where: str, uri: str | None = None
    ) -> None:
        self._finish = finish
        self.where = where
        self.uri = uri
        self.value: Any = _PENDING
        self.error: SurfaceError | None = None

    async def finished(self, value: Any, context: Any) -> ToolResponse:
        """Makes the request's result of the handler's ``value`` (the pipeline's last step)."""
        self.value = await self._finish(value, context)
        return _DONE

    def failed(self, exc: BaseException) -> ToolResponse:
        """Records why the request failed; the error response middleware see (a handler's
        ``ToolError`` keeps its own code there)."""
        if isinstance(exc, SurfaceError):
            return self.refused(exc)
        self.error = _failed(exc, self.where, self.uri)
        if isinstance(exc, ToolError):
            return error_response(exc.envelope)
        return self.refused(self.error)

    def timed_out(self, seconds: float) -> ToolResponse:
        """Records that the handler ran past its ``timeout=``; the ``TIMEOUT`` response
        middleware see."""
        message = f"The {self.where} did not finish within {seconds:g} seconds and was stopped."
        self.error = SurfaceError("failed", message, uri=self.uri)
        return error_response(ErrorEnvelope("TIMEOUT", self.error.message))

    def refused(self, error: SurfaceError) -> ToolResponse:
        """Records ``error`` as the request's answer; the error response middleware see."""
        self.error = error
        return error_response(ErrorEnvelope(_CODES[error.kind], error.message))

    def result(self, response: ToolResponse) -> T:
        """The request's result, once the pipeline answered ``response``.

        Raises:
            SurfaceError: the request failed, or a middleware answered it with a response
                of its own (an error's message is what the client reads).
        """
        if self.error is not None:
            raise self.error
        if response.is_error or self.value is _PENDING:
            raise _answered_by_middleware(response, self.where, self.uri)
        value: T = self.value
        return value


class SurfaceRequest(NamedTuple):
    """A resource read, prompt or completion as it enters the app's pipeline.

    One record from the surface to ``Pipeline.dispatch``, so the parameter list is written
    once: the fields are ``dispatch``'s first eleven parameters, in order, and the app
    passes them as ``dispatch(*request)`` (a ``tools/call`` passes arguments, building
    nothing on its hot path). A named tuple, not a frozen dataclass: as immutable, built
    five times faster (a frozen dataclass's ``__init__`` cost 1 µs of a 17 µs resource
    read), and unpacked straight into ``dispatch``.
    """

    kind: RequestKind
    name: str
    step: str
    action: Action
    kwargs: dict[str, Any]
    identity: Identity | None
    meta: Mapping[str, Any]
    client: ClientChannel | None
    factory: ContextFactory | None
    rejection: ToolResponse | None
    outcome: Outcome[Any]


def _failed(exc: BaseException, where: str, uri: str | None) -> SurfaceError:
    """A handler's failure as the client reads it; the traceback goes to the log only."""
    if isinstance(exc, ToolError):
        envelope = exc.envelope
        text = envelope.message + (f" {envelope.recovery}" if envelope.recovery else "")
        kind: ErrorKind = "not_found" if envelope.code == "NOT_FOUND" else "failed"
        return SurfaceError(kind, text, uri=uri)
    logger.error("%s raised an exception", where, exc_info=exc)
    return SurfaceError("failed", f"The {where} failed with an internal error.", uri=uri)


_CODES: Final[dict[ErrorKind, str]] = {
    "not_found": "NOT_FOUND",
    "invalid": "VALIDATION_ERROR",
    "forbidden": "FORBIDDEN",
    "failed": "INTERNAL_ERROR",
}
"""The code middleware (an audit log) read of a request that failed, by its kind."""


def _answered_by_middleware(response: ToolResponse, where: str, uri: str | None) -> SurfaceError:
    """What the client reads when a middleware answered a request itself: its error's
    message (a rate limit, a timeout), else that the request was not served."""
    envelope = envelope_of(response)
    if envelope is None and response.blocks:
        envelope = parse_error(response.blocks[0])
    if response.is_error and envelope is not None:
        text = envelope.message + (f" {envelope.recovery}" if envelope.recovery else "")
        if envelope.retry_after is not None:
            text += f" Retry after {envelope.retry_after} s."
        kind: ErrorKind = "not_found" if envelope.code == "NOT_FOUND" else "failed"
        return SurfaceError(kind, text, uri=uri)
    logger.error("a middleware answered the %s with a response of its own", where)
    return SurfaceError("failed", f"The {where} failed with an internal error.", uri=uri)
