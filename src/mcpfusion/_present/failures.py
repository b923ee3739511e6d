"""Everything the model reads when a call fails: routing mistakes, bad input, escaped exceptions."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from mcpfusion._errors import (
    ErrorEnvelope,
    FrameworkCode,
    OutputMismatchError,
    PresenterError,
    SerializationError,
    ToolError,
)
from mcpfusion._present.response import ToolResponse, error_response
from mcpfusion._wire import format as wire

logger = logging.getLogger("mcpfusion")

SENT_LIMIT: Final = 50
"""A value echoed back after "You sent:" is cut to this many characters (SPEC §9)."""

FieldProblem = tuple[str, str]
"""A ``<field>`` of the validation envelope: the dotted path and its text."""

NO_RETRY: Final = (
    "This is a defect on the server side: retrying the same call will not help. Tell the "
    "user this action is unavailable."
)
RETRY_ONCE: Final = (
    "The server logged the details. Retry once; if it fails again, tell the user this "
    "action is unavailable."
)
PICK_ACTION: Final = "Call the tool again with 'action' set to one of the available actions."


def framework_error(
    code: FrameworkCode,
    message: str,
    *,
    recovery: str,
    available_actions: Sequence[str] = (),
    retry_after: int | None = None,
) -> ToolResponse:
    """An envelope with one of the framework's own codes (SPEC §9)."""
    return error_response(
        ErrorEnvelope(
            code,
            message,
            recovery=recovery,
            available_actions=available_actions,
            retry_after=retry_after,
        )
    )


def forbidden(missing: Collection[str]) -> ToolResponse:
    """``FORBIDDEN``: the caller lacks scopes; names the missing ones and nothing else.

    Neither the tool, the action nor the caller's own scopes are named: a caller learns
    only what it would have to be granted.
    """
    names = ", ".join(f"'{scope}'" for scope in sorted(missing))
    noun = "scope" if len(missing) == 1 else "scopes"
    return framework_error(
        "FORBIDDEN",
        f"This call needs the {noun} {names}, which the caller does not have.",
        recovery="Do not retry. Tell the user this needs a permission they have not granted.",
    )


def no_view(scopes: Collection[str]) -> ToolResponse:
    """``FORBIDDEN``: an action with a Presenter per caller has none for this one.

    Names the scopes that would choose a view (none for a selector), as ``forbidden``
    names the missing ones.
    """
    if scopes:
        names = ", ".join(f"'{scope}'" for scope in sorted(scopes))
        needs = f"one of the scopes {names}" if len(scopes) > 1 else f"the scope {names}"
        message = f"This call needs {needs}, which the caller does not have."
    else:
        message = "This call has no view of its data for this caller."
    return framework_error(
        "FORBIDDEN",
        message,
        recovery="Do not retry. Tell the user this needs a permission they have not granted.",
    )


def rate_limited(retry_after: int) -> ToolError:
    """``RATE_LIMITED``, raised by the rate-limit middleware to short-circuit a call."""
    return ToolError(
        "RATE_LIMITED",
        "Too many calls in a short time.",
        recovery="Wait for the time below, then retry the call.",
        retry_after=retry_after,
    )


def out_of_state(
    tool: str, action: str, state: str, allowed: Sequence[str], leading: Sequence[str]
) -> ToolResponse:
    """``OUT_OF_STATE``: the caller's workflow state does not allow the action yet.

    Names the states it needs and the actions, callable now, that lead there (the
    workflow's ``leading_to``), so the agent can heal the call itself.
    """
    needs = ", ".join(f"'{s}'" for s in allowed)
    if leading:
        steps = ", ".join(f"'{step}'" for step in leading)
        recovery = f"Call {steps} first, then retry this call."
    else:
        recovery = "Do not retry: no action available now leads there. Tell the user."
    return framework_error(
        "OUT_OF_STATE",
        f"Action '{action}' of tool '{tool}' is not available in state '{state}'; "
        f"it needs {needs}.",
        recovery=recovery,
        available_actions=leading,
    )


def busy(tool: str, action: str, why: str) -> ToolResponse:
    """``BUSY``: the call was not run because of what runs now; retrying soon may pass."""
    return framework_error(
        "BUSY",
        f"Action '{action}' of tool '{tool}' was not run: {why}.",
        recovery="Wait for the time below, then retry the call once.",
        retry_after=1,
    )


def timed_out(tool: str, action: str, seconds: float) -> ToolResponse:
    """``TIMEOUT``: the handler ran past its action's ``timeout=`` and was cancelled."""
    return framework_error(
        "TIMEOUT",
        f"Action '{action}' of tool '{tool}' did not finish within {seconds:g} seconds "
        "and was stopped.",
        recovery="Retry once with a narrower request; if it times out again, tell the user "
        "this action is unavailable.",
    )


def too_large(tool: str, action: str, size: int, cap: int) -> ToolResponse:
    """``TOO_LARGE``: the answer is over its action's byte cap even without its UI blocks
    and with no rows (SPEC §17).

    A value too large for the cap alone (a long text, one huge field) is never cut: a cut
    value would mislead the model, and a cut JSON or ``outputSchema`` value break clients.
    """
    return framework_error(
        "TOO_LARGE",
        f"The answer of action '{action}' of tool '{tool}' is {size} bytes, over its cap of "
        f"{cap} bytes, and leaving out whole blocks or rows cannot bring it under.",
        recovery="Ask for less: narrow the request with filters, fewer fields or a smaller "
        "page, then call again.",
    )


def invalid_cursor(tool: str, action: str, message: str, recovery: str) -> ToolResponse:
    """``INVALID_CURSOR``: a ``_cursor`` this call cannot use; the recovery starts over."""
    return framework_error("INVALID_CURSOR", f"{tool}/{action}: {message}", recovery=recovery)


def unsupported_by_client(what: str, tool: str, action: str) -> ToolError:
    """``UNSUPPORTED_BY_CLIENT``: the call needs something the client did not declare
    (elicitation, sampling, roots), or cannot be asked over this connection."""
    return ToolError(
        "UNSUPPORTED_BY_CLIENT",
        f"Action '{action}' of tool '{tool}' needs the client to support {what}, "
        "which this client does not offer.",
        recovery="Do not retry with this client. Tell the user this action needs a client "
        f"that supports {what}.",
    )


def not_confirmed(tool: str, action: str, answer: str) -> ToolError:
    """``NOT_CONFIRMED``: the user did not confirm an action that asks first."""
    return ToolError(
        "NOT_CONFIRMED",
        f"The user did not confirm action '{action}' of tool '{tool}' ({answer}); "
        "nothing was changed.",
        recovery="Do not retry unless the user asks for it again.",
    )


def invalid_answer(tool: str, action: str, problem: str) -> ToolError:
    """``INVALID_ANSWER``: the client's answer to a question does not fit what was asked."""
    return ToolError(
        "INVALID_ANSWER",
        f"Action '{action}' of tool '{tool}' got an answer from the client that does not "
        f"fit the question: {problem}.",
        recovery="Retry the call once; if the answer is refused again, tell the user.",
    )


def unknown_tool(name: str, available: Sequence[str]) -> ToolResponse:
    """``UNKNOWN_TOOL``, listing the tools that exist."""
    return framework_error(
        "UNKNOWN_TOOL",
        f"There is no tool {preview(name)}.",
        recovery="Call one of the available tools.",
        available_actions=available,
    )


def missing_discriminator(tool: str, actions: Sequence[str]) -> ToolResponse:
    """``MISSING_DISCRIMINATOR``: a grouped tool was called without ``action``."""
    return framework_error(
        "MISSING_DISCRIMINATOR",
        f"Tool '{tool}' needs the 'action' argument to know which operation to perform.",
        recovery=PICK_ACTION,
        available_actions=actions,
    )


def unknown_action(
    tool: str, sent: Any, actions: Sequence[str], elsewhere: Mapping[str, str] | None = None
) -> ToolResponse:
    """``UNKNOWN_ACTION``, listing the tool's actions.

    ``elsewhere`` maps the actions another listed tool holds (a split tool's other half)
    to that tool's name, so the recovery can point there.
    """
    other = elsewhere.get(sent) if elsewhere and isinstance(sent, str) else None
    recovery = f"Call tool '{other}' for action '{sent}'." if other else PICK_ACTION
    return framework_error(
        "UNKNOWN_ACTION",
        f"Tool '{tool}' has no action {preview(sent)}.",
        recovery=recovery,
        available_actions=actions,
    )


def validation_failure(target: str, problems: Sequence[FieldProblem]) -> ToolResponse:
    """The ``<validation_error>`` result for ``target`` (``tool/action``) and its problems."""
    return ToolResponse((wire.validation_error(target, problems),), is_error=True)


def from_exception(exc: BaseException, tool: str, action: str | None = None) -> ToolResponse:
    """The result for an exception that escaped a handler, its context or its rendering.

    A ``ToolError`` is the handler's own envelope. Everything else is a server defect: the
    traceback goes to the ``mcpfusion`` logger and the wire only names the tool and action
    (only the tool for a handler of another framework, which has no actions).
    """
    leaf = _only_leaf(exc)
    where = f"Tool '{tool}'" if action is None else f"Action '{action}' of tool '{tool}'"
    match leaf:
        case ToolError():
            logger.debug("%s/%s reported %s", tool, action, leaf.code)
            return error_response(leaf.envelope)
        case PresenterError():
            logger.error("%s/%s: %s", tool, action, leaf, exc_info=exc)
            return framework_error(
                "PRESENTER_ERROR", f"{where} could not present its data. {leaf}", recovery=NO_RETRY
            )
        case SerializationError():
            logger.error("%s/%s returned bad data: %s", tool, action, leaf, exc_info=exc)
            return framework_error(
                "INTERNAL_ERROR",
                f"{where} returned data that cannot be serialized.",
                recovery=NO_RETRY,
            )
        case OutputMismatchError():
            logger.error("%s/%s returned bad data: %s", tool, action, leaf, exc_info=exc)
            return framework_error(
                "INTERNAL_ERROR",
                f"{where} returned data that does not match its output schema.",
                recovery=NO_RETRY,
            )
    logger.error("%s/%s raised an exception", tool, action, exc_info=exc)
    return framework_error(
        "INTERNAL_ERROR", f"{where} failed with an internal error.", recovery=RETRY_ONCE
    )


def escaped(name: str) -> ToolResponse:
    """``INTERNAL_ERROR`` for a failure the app did not contain (the adapter's last resort).

    The name is the client's, so it is cut the way every echoed value is.
    """
    return framework_error(
        "INTERNAL_ERROR", f"Tool {preview(name)} failed with an internal error.", recovery=NO_RETRY
    )


def _only_leaf(exc: BaseException) -> BaseException:
    """The single exception inside nested one-member groups (as task groups raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def preview(value: Any, limit: int = SENT_LIMIT) -> str:
    """Renders ``value`` as compact JSON, cut to ``limit`` characters ending in ``…``.

    Only the beginning is ever rendered, so a 1 MB string or a 1,000-level nesting costs
    no more than a short value.
    """
    writer = _Preview(limit)
    writer.write(value)
    return cut("".join(writer.parts), limit)


def cut(text: str, limit: int = SENT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, the last being ``…`` when anything was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Preview:
    """Writes compact JSON and stops as soon as more than ``limit`` characters exist."""

    __slots__ = ("limit", "parts", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def write(self, value: Any) -> None:
        # Each level adds at least one character, so recursion stops within `limit` levels.
        if self.size > self.limit:
            return
        if isinstance(value, str):
            self.add(json.dumps(value[: self.limit + 1], ensure_ascii=False))
        elif value is None or isinstance(value, bool | int | float):
            self.add(_scalar(value))
        elif isinstance(value, Mapping):
            self.add("{")
            for index, (key, item) in enumerate(value.items()):
                if self.size > self.limit:
                    return
                self.add(", " if index else "")
                self.add(json.dumps(str(key)[: self.limit + 1], ensure_ascii=False) + ": ")
                self.write(item)
            self.add("}")
        elif isinstance(value, list | tuple):
            self.add("[")
            for index, item in enumerate(value):
                if self.size > self.limit:
                    return
                self.add(", " if index else "")
                self.write(item)
            self.add("]")
        else:
            # Never a repr: it can carry memory addresses or secrets of arbitrary objects.
            self.add(f"a {type(value).__name__} value")


def _scalar(value: bool | int | float | None) -> str:
    try:
        return json.dumps(value)
    except ValueError:  # an int past Python's digit limit for str()
        return "a very large integer"
