"""Argument completion (``completion/complete``) for prompt arguments and template variables."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from mcpfusion._errors import DefinitionError
from mcpfusion._tools.action import Action
from mcpfusion._wire.format import neutralize

MAX_VALUES: Final = 100
"""MCP sends at most this many completion values; ``total`` and ``hasMore`` say the rest."""

_ACCEPTED: Final = frozenset({"value", "arguments"})


@dataclass(frozen=True, slots=True)
class Completer:
    """A completion function, its parameters read like an action's.

    Attributes:
        action: the function as an action (context and state injection, validation).
        takes_arguments: whether it receives the other arguments already chosen.
    """

    action: Action
    takes_arguments: bool

    def arguments(self, value: str, chosen: dict[str, str]) -> dict[str, Any]:
        """What the function is called with."""
        sent: dict[str, Any] = {"value": value}
        if self.takes_arguments:
            sent["arguments"] = chosen
        return sent


def completer(
    owner: str,
    fn: Callable[..., Any],
    context_type: type | None = None,
    state_type: type | None = None,
    *,
    timeout: float | None = None,
) -> Completer:
    """Reads ``fn(value, [arguments], [ctx], [state])`` as a completer, stopped after
    ``timeout`` seconds (its owner's) when given.

    Raises:
        DefinitionError: if it takes anything else, or no ``value``.
    """
    try:
        action = Action(
            "completion",
            "complete",
            fn,
            context_type=context_type,
            state_type=state_type,
            timeout=timeout,
        )
    except DefinitionError as exc:
        raise DefinitionError(
            f"{owner}: {str(exc).removeprefix('completion/complete: ')}"
        ) from None
    names = {p.wire for p in action.params}
    if "value" not in names or names - _ACCEPTED:
        raise DefinitionError(
            f"{owner}: the function takes value (the text typed so far), optionally "
            f"arguments (the others already chosen) and the context; it takes "
            f"{', '.join(sorted(names)) or 'nothing'}"
        )
    return Completer(action, "arguments" in names)


def completion(values: Iterable[Any]) -> dict[str, Any]:
    """The MCP ``Completion`` of a completer's strings: at most ``MAX_VALUES``, neutralized.

    Raises:
        TypeError: if it returned something other than strings.
    """
    if values is None:
        return {"values": []}
    if isinstance(values, str):
        raise TypeError("a completer returns a list of str, not one str")
    found = list(values)
    if not all(isinstance(value, str) for value in found):
        raise TypeError("a completer returns str values")
    # A client shows the values to the user and may hand them to its model: SPEC §7
    # applies, and a lone surrogate (no transport can encode it) becomes U+FFFD.
    sent = [neutralize(value) for value in found[:MAX_VALUES]]
    result: dict[str, Any] = {"values": sent, "total": len(found)}
    if len(found) > MAX_VALUES:
        result["hasMore"] = True
    return result
