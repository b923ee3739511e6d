"""Tool responses, their out-of-band structured view, and the error envelopes (SPEC §1, §9)."""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from mcpfusion import datablock
from mcpfusion.ui import UIBlock
from mcpfusion.wire import format as wire

Severity = Literal["warning", "error", "critical"]
_SEVERITIES = ("warning", "error", "critical")
_TOOL_REF = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A next action for the agent: ``tool`` (e.g. ``billing.remind``) and why.

    Raises:
        ValueError: if ``tool`` is not 1-128 characters of letters, digits, ``_.-/``.
    """

    tool: str
    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not _TOOL_REF.fullmatch(self.tool):
            raise ValueError(
                f"a suggestion names a tool as 1-128 letters, digits or _.-/; got {self.tool!r}"
            )

    @property
    def entry(self) -> str:
        """The bullet text, ``tool: reason``."""
        return wire.suggestion_entry(self.tool, self.reason)


class ResponseView(NamedTuple):
    """The structured view of a built response, as the agent receives it.

    ``data`` is the value serialized into the data block; rules, directives and suggestions
    are the entries of their blocks after folding, neutralization and de-duplication.
    A named tuple: immutable, and cheap to make on every presented call.
    """

    data: Any
    system_rules: tuple[str, ...] = ()
    ui_blocks: tuple[UIBlock, ...] = ()
    directives: tuple[str, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()
    embeds: tuple[UIBlock, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class ToolResponse:
    """A tool call result: ordered text blocks, the error flag, optional structured content.

    Build it with the helpers (``success``, ``tool_error``, ``response(...).build()``) rather
    than by hand. ``to_mcp()`` is its wire form.
    """

    blocks: tuple[str, ...]
    is_error: bool = False
    structured_content: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.blocks:
            raise ValueError("a tool response needs at least one block")

    @property
    def text(self) -> str:
        """All blocks joined by a blank line, for logs and quick reads."""
        return "\n\n".join(self.blocks)

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` as a JSON-compatible dict."""
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": block} for block in self.blocks],
            "isError": self.is_error,
        }
        if self.structured_content is not None:
            result["structuredContent"] = self.structured_content
        return result


# The side door (SPEC §13): views live beside responses, never inside them, so no
# serialization of a response can ever include one.
_VIEWS: weakref.WeakKeyDictionary[ToolResponse, ResponseView] = weakref.WeakKeyDictionary()


def attach_view(response: ToolResponse, view: ResponseView) -> ToolResponse:
    """Records ``view`` as the structured view of ``response`` and returns the response."""
    _VIEWS[response] = view
    return response


def view_of(response: ToolResponse) -> ResponseView | None:
    """The structured view of a response built by a Presenter or builder, else ``None``."""
    return _VIEWS.get(response)


def tool_error(
    code: str,
    message: str,
    *,
    recovery: str | None = None,
    available_actions: Sequence[str] = (),
    details: Mapping[str, object] | None = None,
    retry_after: int | None = None,
    severity: Severity = "error",
) -> ToolResponse:
    """A ``<tool_error>`` envelope; ``isError`` unless the severity is ``warning``."""
    if severity not in _SEVERITIES:
        raise ValueError(f"severity must be one of {', '.join(_SEVERITIES)}; got {severity!r}")
    text = wire.tool_error(
        code,
        message,
        severity=severity,
        recovery=recovery,
        available_actions=available_actions,
        details=details,
        retry_after=retry_after,
    )
    return ToolResponse((text,), is_error=severity != "warning")


def error(message: str, code: str | None = None) -> ToolResponse:
    """A plain error envelope with ``message`` (code ``ERROR`` unless given)."""
    return tool_error(code or "ERROR", message)


def required(field: str) -> ToolResponse:
    """The error for a missing required field."""
    return tool_error(
        "MISSING_REQUIRED_FIELD",
        f"Missing required field: {field}.",
        recovery=f"Call the tool again with '{field}' set.",
    )


def success_structured(data: Any) -> ToolResponse:
    """A JSON text block plus ``structuredContent`` holding the same object (SPEC §12).

    A value that is not an object is wrapped as ``{"result": value}``.
    """
    structured = wrap_structured(datablock.to_jsonable(data))
    response = ToolResponse((datablock.to_json(structured),), structured_content=structured)
    return attach_view(response, ResponseView(data=structured))


def wrap_structured(value: Any) -> dict[str, Any]:
    """Wraps a JSON value that is not an object as ``{"result": value}``."""
    return value if isinstance(value, dict) else {"result": value}
