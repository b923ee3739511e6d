"""``FakeClient``: a scripted MCP client for handlers that log, ask, sample or list roots."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpfusion._identity import Identity
from mcpfusion._tools.client import (
    FEATURES,
    LOG_LEVELS,
    Answer,
    Feature,
    LogLevel,
    Message,
    Root,
    Sampled,
)


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A log message a handler sent (``ctx.log``): its level, its data and the logger."""

    level: LogLevel
    data: Any
    logger: str


class FakeClient:
    """Plays the client for ``FusionTester(app, client=...)``: answers from a script, and
    records what the server sent.

    Example::

        client = FakeClient(answers=[("accept", {"confirm": True})])
        tester = FusionTester(app, client=client)
        result = await tester.call("billing", "mark_paid", invoice_id="INV-00001")
        assert client.questions[0][0] == "Mark INV-00001 as paid?"

    Args:
        answers: the user's answers to questions, in order: ``(action, content)``.
        replies: the model's replies to sampling requests, in order.
        roots: what ``ctx.list_roots()`` returns.
        features: what the client supports; by default every feature it has a script
            for, and logging.
        log_level: the least severe level it wants (``logging/setLevel``).

    Attributes:
        logs: the log messages sent, in order.
        questions: each question asked, ``(message, schema)``.
        prompts: each sampling request's messages.
        invalidations: the patterns of each successful mutation, in order.
    """

    def __init__(
        self,
        *,
        answers: Iterable[tuple[Answer, Any]] = (),
        replies: Iterable[str | Sampled] = (),
        roots: Sequence[Root] | None = None,
        features: Collection[Feature] | None = None,
        log_level: LogLevel = "debug",
    ) -> None:
        self._answers = list(answers)
        self._replies = [r if isinstance(r, Sampled) else Sampled(r, "fake") for r in replies]
        self._roots = list(roots or ())
        if features is None:
            features = {"logging"}
            features |= {"elicitation"} if self._answers else set()
            features |= {"sampling"} if self._replies else set()
            features |= {"roots"} if roots is not None else set()
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}; features: {FEATURES}")
        self.features = frozenset(features)
        if log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {LOG_LEVELS}; got {log_level!r}")
        self.log_level = log_level
        self.logs: list[LogEvent] = []
        self.questions: list[tuple[str, dict[str, Any]]] = []
        self.prompts: list[list[Message]] = []
        self.invalidations: list[tuple[str, ...]] = []

    def supports(self, feature: Feature) -> bool:
        """Whether the script says the client supports ``feature``."""
        return feature in self.features

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Records the message when its level is at least ``log_level``."""
        if "logging" in self.features and LOG_LEVELS.index(level) >= LOG_LEVELS.index(
            self.log_level
        ):
            self.logs.append(LogEvent(level, data, logger))

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> tuple[Answer, Any]:
        """The next scripted answer.

        Raises:
            AssertionError: when the script has no answer left.
        """
        self.questions.append((message, schema))
        if not self._answers:
            raise AssertionError(f"FakeClient has no answer left for {message!r}")
        return self._answers.pop(0)

    async def sample(
        self,
        messages: Sequence[Message],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        key: str | None = None,
    ) -> Sampled:
        """The next scripted reply.

        Raises:
            AssertionError: when the script has no reply left.
        """
        self.prompts.append(list(messages))
        if not self._replies:
            raise AssertionError("FakeClient has no sampling reply left")
        return self._replies.pop(0)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The scripted roots."""
        return list(self._roots)

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """Records a successful mutation's patterns."""
        self.invalidations.append(tuple(patterns))
