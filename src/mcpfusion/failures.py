"""The error results the call path sends: routing mistakes and what escapes a handler."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Final

from mcpfusion.errors import PresenterError, SerializationError, ToolError
from mcpfusion.response import ToolResponse, tool_error
from mcpfusion.structured import OutputMismatchError
from mcpfusion.validation import preview

logger = logging.getLogger("mcpfusion")

NO_RETRY: Final = (
    "This is a defect on the server side: retrying the same call will not help. Tell the "
    "user this action is unavailable."
)
RETRY_ONCE: Final = (
    "The server logged the details. Retry once; if it fails again, tell the user this "
    "action is unavailable."
)
PICK_ACTION: Final = "Call the tool again with 'action' set to one of the available actions."


def unknown_tool(name: str, available: Sequence[str]) -> ToolResponse:
    """``UNKNOWN_TOOL``, listing the tools that exist."""
    return tool_error(
        "UNKNOWN_TOOL",
        f"There is no tool {preview(name)}.",
        recovery="Call one of the available tools.",
        available_actions=available,
    )


def missing_discriminator(tool: str, actions: Sequence[str]) -> ToolResponse:
    """``MISSING_DISCRIMINATOR``: a grouped tool was called without ``action``."""
    return tool_error(
        "MISSING_DISCRIMINATOR",
        f"Tool '{tool}' needs the 'action' argument to know which operation to perform.",
        recovery=PICK_ACTION,
        available_actions=actions,
    )


def unknown_action(tool: str, sent: Any, actions: Sequence[str]) -> ToolResponse:
    """``UNKNOWN_ACTION``, listing the tool's actions."""
    return tool_error(
        "UNKNOWN_ACTION",
        f"Tool '{tool}' has no action {preview(sent)}.",
        recovery=PICK_ACTION,
        available_actions=actions,
    )


def from_exception(exc: Exception, tool: str, action: str) -> ToolResponse:
    """The result for an exception that escaped a handler, its context or its rendering.

    A ``ToolError`` is the handler's own envelope. Everything else is a server defect: the
    traceback goes to the ``mcpfusion`` logger and the wire only names the tool and action.
    """
    leaf = _only_leaf(exc)
    where = f"Action '{action}' of tool '{tool}'"
    if isinstance(leaf, ToolError):
        logger.debug("%s/%s reported %s", tool, action, leaf.code)
        try:
            return tool_error(
                leaf.code,
                leaf.message,
                recovery=leaf.recovery,
                available_actions=leaf.available_actions,
                details=leaf.details,
                retry_after=leaf.retry_after,
                severity=leaf.severity,  # type: ignore[arg-type]  # checked by tool_error
            )
        except Exception as failure:  # whatever a malformed ToolError raises, never escape
            logger.error(
                "%s/%s raised a ToolError that cannot be sent", tool, action, exc_info=failure
            )
            return tool_error(
                "INTERNAL_ERROR", f"{where} failed with an internal error.", recovery=NO_RETRY
            )
    if isinstance(leaf, PresenterError):
        logger.error("%s/%s: %s", tool, action, leaf, exc_info=exc)
        return tool_error(
            "PRESENTER_ERROR", f"{where} could not present its data. {leaf}", recovery=NO_RETRY
        )
    if isinstance(leaf, SerializationError | OutputMismatchError):
        logger.error("%s/%s returned bad data: %s", tool, action, leaf, exc_info=exc)
        problem = (
            "cannot be serialized"
            if isinstance(leaf, SerializationError)
            else "does not match its output schema"
        )
        return tool_error(
            "INTERNAL_ERROR", f"{where} returned data that {problem}.", recovery=NO_RETRY
        )
    logger.error("%s/%s raised an exception", tool, action, exc_info=exc)
    return tool_error(
        "INTERNAL_ERROR", f"{where} failed with an internal error.", recovery=RETRY_ONCE
    )


def _only_leaf(exc: Exception) -> Exception:
    """The single exception inside nested one-member groups (as task groups raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        inner = exc.exceptions[0]
        if not isinstance(inner, Exception):
            break
        exc = inner
    return exc
