"""Talking to the client from a handler: logging, questions, sampling, roots (no MCP SDK here).

The server adapter hands every call a ``ClientChannel`` (``Request.client``); the
context's ``log``, ``elicit``, ``sample``, ``list_roots`` and ``supports`` go through it.
Without one (an app called in-process, ``FusionTester`` without a scripted client) a
log is dropped, ``supports`` answers ``False`` and a question is ``UNSUPPORTED_BY_CLIENT``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, get_args

import anyio
from pydantic import BaseModel, ValidationError

from mcpfusion._present.failures import invalid_answer, unsupported_by_client
from mcpfusion._wire.datablock import neutralize_strings, to_jsonable
from mcpfusion._wire.format import fold_lines, neutralize
from mcpfusion._wire.repair import repaired

if TYPE_CHECKING:
    from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion")

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""MCP's log levels (RFC 5424), least severe first."""

LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)

Feature = Literal["elicitation", "sampling", "roots", "logging"]
"""What a client may support, as ``ctx.supports`` and ``requires_client=`` name it."""

FEATURES: Final[tuple[Feature, ...]] = get_args(Feature)

LOG_MESSAGE_LIMIT: Final = 2_000
"""A log message is cut to this many characters."""

Answer = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class Elicitation:
    """The user's answer to ``ctx.elicit``.

    Attributes:
        action: ``"accept"``, ``"decline"`` (the user said no) or ``"cancel"`` (the user
            dismissed the question).
        data: the accepted answer: an instance of the model asked for, or the dict the
            client sent for a JSON Schema; ``None`` unless accepted.
    """

    action: Answer
    data: Any = None

    @property
    def accepted(self) -> bool:
        """Whether the user answered (``action == "accept"``)."""
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Sampled:
    """The client model's reply to ``ctx.sample``.

    Attributes:
        text: the reply's text (empty when it sent none).
        model: the model that answered, as the client names it.
        stop_reason: why it stopped (``"endTurn"``, ``"maxTokens"``, ...), when said.
    """

    text: str
    model: str = ""
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Root:
    """One of the client's roots: a ``file://`` URI and an optional name."""

    uri: str
    name: str | None = None


Message = tuple[Literal["user", "assistant"], str]
"""A sampling message: who says it, and the text."""


class InputNeeded(BaseException):
    """Stops a handler that asked a question the client will answer in a later round.

    On MCP 2026-07-28 a question is an ``input_required`` result: the call ends, the
    client answers, and the call runs again from the start with the answers known. The
    adapter raises this from a question and catches it around the call; it is a
    ``BaseException`` so no ``except Exception`` in a handler or middleware takes it.
    """

    def __init__(self, requests: Mapping[str, Any], state: str) -> None:
        super().__init__("input needed")
        self.requests = requests
        self.state = state


class ClientLacks(BaseException):
    """Refuses, at the protocol level, a call whose action needs a feature the client did
    not declare (``requires_client=``), for channels whose protocol says so (MCP
    2026-07-28's ``-32021``, with ``protocol_refusals``); others get
    ``UNSUPPORTED_BY_CLIENT``."""

    def __init__(self, feature: Feature) -> None:
        super().__init__(feature)
        self.feature = feature


class ClientChannel(Protocol):
    """What the server adapter provides for one call: the client on the other end.

    A channel may also have ``protocol_refusals = True``: a missing feature an action
    declares is then refused with ``ClientLacks`` rather than a tool error.
    """

    def supports(self, feature: Feature) -> bool:
        """Whether the client declared ``feature`` and this connection can carry it."""
        ...

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Sends ``notifications/message`` when the client wants ``level``."""
        ...

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> tuple[Answer, Any]:
        """Asks the user; returns the action and the content the client sent."""
        ...

    async def sample(
        self,
        messages: Sequence[Message],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        key: str | None = None,
    ) -> Sampled:
        """Asks the client's model."""
        ...

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots."""
        ...

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """Tells resource subscribers that state matching ``patterns`` changed."""
        ...


class Caller(Protocol):
    """What these functions read of a call: its tool and action names and its channel.

    ``Request`` (``_context``) is one; taking this instead keeps ``_client`` below the
    request context, with no import back.
    """

    @property
    def tool(self) -> str:
        """The tool's name."""
        ...

    @property
    def action(self) -> str:
        """The action's name."""
        ...

    @property
    def client(self) -> ClientChannel | None:
        """The channel to the client, or ``None`` in-process."""
        ...


async def close_sse_stream(request: Caller) -> bool:
    """Closes the call's SSE stream so the client reconnects (see ``Context.close_sse_stream``).

    A channel offers it with an optional ``close_sse_stream()`` method returning whether
    it closed one.
    """
    close = getattr(request.client, "close_sse_stream", None)
    if not callable(close):
        return False
    closed = await close()
    return bool(closed)


def supports(request: Caller, feature: str) -> bool:
    """Whether the caller's client supports ``feature``.

    Raises:
        ValueError: on a feature name that is none of ``FEATURES``.
    """
    if feature not in FEATURES:
        raise ValueError(f"feature must be one of {', '.join(FEATURES)}; got {feature!r}")
    client = request.client
    return client is not None and client.supports(feature)


async def log(request: Caller, level: str, message: str, data: Any = None) -> None:
    """Sends a log message to the client (see ``Context.log``)."""
    if level not in LOG_LEVELS:
        raise ValueError(f"level must be one of {', '.join(LOG_LEVELS)}; got {level!r}")
    if not isinstance(message, str):
        raise TypeError(f"a log message is a str; got {type(message).__name__}")
    client = request.client
    if client is None:
        return
    text = neutralize(fold_lines(message[: LOG_MESSAGE_LIMIT + 1]))
    if len(text) > LOG_MESSAGE_LIMIT:
        text = text[: LOG_MESSAGE_LIMIT - 1] + "…"
    # The client shows data as it shows the message: its strings follow SPEC §7 as
    # structured content's do (the string itself carries &lt;), lone surrogates as U+FFFD.
    payload: Any = (
        text if data is None else {"message": text, "data": neutralize_strings(to_jsonable(data))}
    )
    try:
        await client.log(level, payload, f"{request.tool}.{request.action}")
    except Exception:
        logger.warning("%s/%s: a log message failed", request.tool, request.action, exc_info=True)


def elicitation_schema(schema: type[BaseModel] | Mapping[str, Any]) -> dict[str, Any]:
    """The requested schema of an elicitation: a flat object of primitive properties.

    Raises:
        TypeError: if ``schema`` is neither a pydantic model class nor a mapping.
    """
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        rendered = schema.model_json_schema()
        rendered.pop("title", None)
        for prop in rendered.get("properties", {}).values():
            if isinstance(prop, dict) and isinstance(prop.get("anyOf"), list):
                # Optional[X] is X, not required: the only shape elicitation allows.
                kinds = [k for k in prop.pop("anyOf") if k.get("type") != "null"]
                if len(kinds) == 1:
                    prop.update(kinds[0])
        return rendered
    if isinstance(schema, Mapping):
        # A transport cannot encode a lone surrogate in a title or description: U+FFFD.
        return dict(repaired(dict(schema)))
    raise TypeError(
        f"elicit takes a pydantic model class or a JSON Schema dict; got {type(schema).__name__}"
    )


async def elicit(
    request: Caller,
    message: str,
    schema: type[BaseModel] | Mapping[str, Any],
    key: str | None = None,
) -> Elicitation:
    """Asks the user through the client (see ``Context.elicit``)."""
    if not isinstance(message, str) or not message.strip():
        raise TypeError("an elicitation message is a non-empty str")
    requested = elicitation_schema(schema)
    client = request.client
    if client is None or not client.supports("elicitation"):
        raise unsupported_by_client("elicitation", request.tool, request.action)
    # The client shows the question as it is (a Confirm template holds the model's own
    # arguments): SPEC §7's neutralization, lone surrogates as U+FFFD.
    action, content = await client.elicit(neutralize(message), requested, key=key)
    if action != "accept":
        return Elicitation(action)
    if not isinstance(content, Mapping):
        raise invalid_answer(request.tool, request.action, "the accepted answer holds no data")
    if isinstance(schema, type):
        try:
            return Elicitation("accept", schema.model_validate(dict(content)))
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) or "(answer)" for e in exc.errors())
            problem = f"fields {fields} do not fit"
            raise invalid_answer(request.tool, request.action, problem) from None
    return Elicitation("accept", dict(content))


async def sample(
    request: Caller,
    messages: str | Sequence[Message],
    *,
    system: str | None = None,
    max_tokens: int = 512,
    temperature: float | None = None,
    key: str | None = None,
) -> Sampled:
    """Asks the client's model (see ``Context.sample``)."""
    if isinstance(messages, str):
        messages = [("user", messages)]
    checked = list(messages)
    for item in checked:
        if not (
            isinstance(item, tuple)
            and len(item) == 2
            and item[0] in ("user", "assistant")
            and isinstance(item[1], str)
        ):
            raise TypeError("sampling messages are (role, text) pairs, role 'user' or 'assistant'")
    if not checked:
        raise ValueError("sampling needs at least one message")
    if system is not None and not isinstance(system, str):
        raise TypeError(f"a system prompt is a str; got {type(system).__name__}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens is a positive int; got {max_tokens!r}")
    client = request.client
    if client is None or not client.supports("sampling"):
        raise unsupported_by_client("sampling", request.tool, request.action)
    # The client shows the prompt before its model reads it: SPEC §7 applies to it, as
    # to every text the framework sends (lone surrogates as U+FFFD).
    prompt = [(role, neutralize(text)) for role, text in checked]
    system = None if system is None else neutralize(system)
    return await client.sample(
        prompt, system=system, max_tokens=max_tokens, temperature=temperature, key=key
    )


async def list_roots(request: Caller, key: str | None = None) -> list[Root]:
    """The client's roots (see ``Context.list_roots``)."""
    client = request.client
    if client is None or not client.supports("roots"):
        raise unsupported_by_client("roots", request.tool, request.action)
    return await client.list_roots(key=key)


async def continue_as_task(request: Caller) -> None:
    """Turns the call into a task where its channel can (see ``Context.continue_as_task``)."""
    begin = getattr(request.client, "continue_as_task", None)
    if begin is not None:
        await begin()


async def gather(request: Caller, *questions: Awaitable[Any]) -> tuple[Any, ...]:
    """Asks several questions at once (see ``Context.gather``): their answers, in order.

    Where questions end the call until the client answers (MCP 2026-07-28), the ones not
    answered yet are asked together, in one round. Where they wait for their answers in
    place (a task's channel says ``asks_at_once``), they are asked concurrently, so the
    client sees them all pending together.
    """
    if getattr(request.client, "asks_at_once", False):
        return await _concurrently(questions)
    answers: list[Any] = []
    needed: dict[str, Any] = {}
    state = ""
    for question in questions:
        try:
            answers.append(await question)
        except InputNeeded as need:
            needed.update(need.requests)
            state = need.state  # each carries every question asked so far
    if needed:
        raise InputNeeded(needed, state)
    return tuple(answers)


async def _concurrently(questions: Sequence[Awaitable[Any]]) -> tuple[Any, ...]:
    """Awaits ``questions`` together; their answers in order, or the first one's error."""
    answers: list[Any] = [None] * len(questions)
    errors: list[BaseException] = []

    async def ask(index: int, question: Awaitable[Any]) -> None:
        try:
            answers[index] = await question
        except Exception as exc:  # raised as itself below, not in an exception group
            errors.append(exc)

    async with anyio.create_task_group() as group:
        for index, question in enumerate(questions):
            group.start_soon(ask, index, question)
    if errors:
        raise errors[0]
    return tuple(answers)
