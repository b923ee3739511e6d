"""Tool responses: the wire value, its side door, and the helpers that make one (SPEC §1-§3, §9)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, ParamSpec

from mcpfusion._errors import ErrorEnvelope
from mcpfusion._present.content import Attachment
from mcpfusion._present.slots import trusted_constructor
from mcpfusion._wire import format as wire
from mcpfusion._wire.datablock import (
    EMPTY_TEXT,
    DataFormat,
    Delimiter,
    neutralize_strings,
    render_data,
    to_json,
    to_jsonable,
)
from mcpfusion._wire.format import neutralize
from mcpfusion._wire.parts import BULLET_KINDS, ResponseView, UIBlock

P = ParamSpec("P")


class _SideDoor:
    """The slots a built response keeps its ``ResponseView`` (SPEC §13) or its error
    envelope in.

    The slots are not dataclass fields, so equality, ``repr``, ``dataclasses.asdict``,
    pydantic's dumps, pickling, copies and ``to_mcp()`` see only the wire fields:
    the view can never be serialized with the response, and two responses with the same
    blocks are equal (``success(1) == success(1)``). A copy or an unpickled response is
    rebuilt from its fields alone and has no view.
    """

    __slots__ = ("_envelope", "_view")


Role = Literal["user", "assistant"]
"""Who a block is for, in MCP's words."""


@dataclass(frozen=True, slots=True)
class BlockAnnotations:
    """MCP content annotations of one block: who it is for and how much it matters.

    Attributes:
        audience: ``("user",)`` for a block hosts show the user without sending it to the
            model; empty for everyone.
        priority: 0 (optional) to 1 (effectively required), or ``None``.
    """

    audience: tuple[Role, ...] = ()
    priority: float | None = None

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``annotations`` object."""
        found: dict[str, Any] = {}
        if self.audience:
            found["audience"] = list(self.audience)
        if self.priority is not None:
            found["priority"] = self.priority
        return found


FOR_USER = BlockAnnotations(("user",))
"""The annotations of a UI block meant for the user's eyes only."""


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ToolResponse(_SideDoor):
    """A tool call result: ordered text blocks, the error flag, optional structured content.

    Build it with the helpers (``success``, ``tool_error``, ``response(...).build()``) rather
    than by hand. ``to_mcp()`` is its wire form. ``annotations`` is empty, or holds one
    ``BlockAnnotations`` (or ``None``) per block. ``attachments`` (images, audio, resources)
    are sent after the text blocks; a response of attachments alone has no text block.
    """

    blocks: tuple[str, ...]
    is_error: bool = False
    structured_content: dict[str, Any] | None = field(default=None, hash=False)
    annotations: tuple[BlockAnnotations | None, ...] = ()
    attachments: tuple[Attachment, ...] = ()

    def __post_init__(self) -> None:
        if not self.blocks and not self.attachments:
            raise ValueError("a tool response needs at least one block")
        if self.annotations and len(self.annotations) != len(self.blocks):
            raise ValueError("annotations hold one entry per block, or none")

    def annotations_of(self, index: int) -> BlockAnnotations | None:
        """The annotations of block ``index``, if it has any."""
        return self.annotations[index] if self.annotations else None

    @property
    def text(self) -> str:
        """All blocks joined by a blank line, for logs and quick reads."""
        return "\n\n".join(self.blocks)

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` as a JSON-compatible dict."""
        content: list[dict[str, Any]] = [{"type": "text", "text": block} for block in self.blocks]
        for item, marks in zip(content, self.annotations, strict=False):
            if marks is not None:
                item["annotations"] = marks.to_mcp()
        content += [attachment.to_mcp() for attachment in self.attachments]
        result: dict[str, Any] = {"content": content, "isError": self.is_error}
        if self.structured_content is not None:
            result["structuredContent"] = self.structured_content
        return result


# What a render makes is built to fit: constructed without the checks (see _slots).
new_view: Final = trusted_constructor(ResponseView)
new_response: Final = trusted_constructor(ToolResponse, "_view")


def with_view(response: ToolResponse, view: ResponseView) -> ToolResponse:
    object.__setattr__(response, "_view", view)
    return response


def view_of(response: ToolResponse) -> ResponseView | None:
    """The structured view of a response built by a Presenter or builder, else ``None``."""
    return getattr(response, "_view", None)


def require_view(response: ToolResponse) -> ResponseView:
    """The structured view of a built response.

    Raises:
        LookupError: if the response carries none (an error envelope, a hand-made
            ``ToolResponse``, a copy).
    """
    view = view_of(response)
    if view is None:
        raise LookupError("this response carries no structured view (SPEC §13)")
    return view


def render_parts(
    data: Any,
    ui_blocks: tuple[UIBlock, ...],
    embeds: tuple[UIBlock, ...],
    bullets: Sequence[Sequence[Any]],
    caused_by: str = "",
    data_format: DataFormat = "json",
    delimiter: Delimiter = "|",
    user_ui: bool = False,
    shared_ui: int = 0,
    attachments: tuple[Attachment, ...] = (),
) -> ToolResponse:
    """Renders the parts of a response as its blocks, in SPEC §2 order.

    ``bullets`` holds the entries of each bullet kind, in ``BULLET_KINDS`` order. Entries
    are folded, neutralized and de-duplicated; the response carries the view of exactly
    what was sent, the one view a render makes (a builder passes its parts, not a view of
    them: a view costs 0.5-0.9 µs). With ``user_ui``, UI blocks and embeds are annotated
    for the user only, except the first ``shared_ui`` UI blocks (a truncation notice the
    model must read too). ``attachments`` follow the text blocks.
    """
    if not (ui_blocks or embeds or attachments or any(bullets)):
        return render_value(data, data_format, delimiter)
    blocks = [render_data(data, data_format, delimiter)]
    sent_by = ""  # the view's caused_by: sent only with the block that carries it
    blocks.extend(block.text for block in ui_blocks)
    blocks.extend(block.text for block in embeds)
    sent: list[Any] = []
    for kind, entries in zip(BULLET_KINDS, bullets, strict=True):
        lines = kind.lines(entries) if entries else []
        if lines:
            attribute = None
            if kind.attribute is not None:
                attribute = (kind.attribute, caused_by)
                sent_by = caused_by
            blocks.append(wire.bullet_block(kind.tag, lines, attribute))
        sent.append(tuple(map(kind.read, lines)) if lines else ())
    view = new_view(data, ui_blocks, embeds, *sent, sent_by)
    ui_count = len(ui_blocks) + len(embeds)
    marks: tuple[BlockAnnotations | None, ...] = ()
    if user_ui and ui_count > shared_ui:
        # Block 0 is the data; blocks 1..ui_count are the UI blocks, then the embeds.
        marks = tuple(FOR_USER if shared_ui < i <= ui_count else None for i in range(len(blocks)))
    return new_response(tuple(blocks), False, None, marks, attachments, view)


def render_value(
    data: Any,
    data_format: DataFormat = "json",
    delimiter: Delimiter = "|",
    *,
    str_as_data: bool = False,
) -> ToolResponse:
    """A response with only a data block: a plain value, a str, ``None`` (``render_data``)."""
    if str_as_data or type(data) is not str:
        text = render_data(data, data_format, delimiter, str_as_data=str_as_data)
    else:  # the common str, as render_data writes it: its frame and keyword call less
        text = neutralize(data) if data else EMPTY_TEXT
    return new_response((text,), False, None, (), (), new_view(data, (), (), (), (), (), (), ""))


def attached(values: tuple[Attachment, ...]) -> ToolResponse:
    """A response whose content is ``values`` alone (SPEC §13: a handler returned them)."""
    return ToolResponse((), attachments=values)


def success(data: Any) -> ToolResponse:
    """A response with only a data block (indented JSON, a str verbatim, ``None`` as OK)."""
    return render_value(data)


def toon_success(data: Any, *, delimiter: Delimiter = "|") -> ToolResponse:
    """A response whose data block is TOON, ``|``-delimited unless told (SPEC §10).

    A str is TOON too: ``toon_success("123")`` sends ``"123"``, which decodes to the
    string (sent bare, it would decode to the number).
    """
    return render_value(data, "toon", delimiter, str_as_data=True)


def success_structured(data: Any) -> ToolResponse:
    """A JSON text block plus ``structuredContent`` holding the same object (SPEC §12).

    A value that is not an object is wrapped as ``{"result": value}``. A string that could
    open or close a reserved tag carries ``&lt;`` in both (SPEC §7).
    """
    structured, text = structured_json(wrap_structured(to_jsonable(data)))
    response = ToolResponse((text,), structured_content=structured)
    return with_view(response, ResponseView(structured))


def structured_json(value: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A plain JSON object as structured content (strings neutralized, SPEC §7), and its
    JSON text."""
    text = to_json(value)
    # Every "<" of a string shows in the JSON text, raw or neutralized, and every lone
    # surrogate as U+FFFD: without either (the common case) the value needs no walk.
    if "<" in text or "\\u003c" in text or "\ufffd" in text:
        value = neutralize_strings(value)
        text = to_json(value)
    return value, text


def wrap_structured(value: Any) -> dict[str, Any]:
    """Wraps a JSON value that is not an object as ``{"result": value}``."""
    return value if isinstance(value, dict) else {"result": value}


def error_response(envelope: ErrorEnvelope) -> ToolResponse:
    """The result that sends ``envelope``: ``isError`` unless it is a warning.

    The response keeps the envelope beside its text (``envelope_of``), like a view.
    """
    response = ToolResponse((wire.tool_error(envelope),), is_error=envelope.is_error)
    object.__setattr__(response, "_envelope", envelope)
    return response


def envelope_of(response: ToolResponse) -> ErrorEnvelope | None:
    """The envelope a ``<tool_error>`` response was rendered from, else ``None``."""
    return getattr(response, "_envelope", None)


def _sending(envelope: Callable[P, ErrorEnvelope]) -> Callable[P, ToolResponse]:
    def send(*args: P.args, **kwargs: P.kwargs) -> ToolResponse:
        return error_response(envelope(*args, **kwargs))

    return send


tool_error = _sending(ErrorEnvelope)
tool_error.__name__ = tool_error.__qualname__ = "tool_error"
tool_error.__doc__ = """A ``<tool_error>`` result (SPEC §9): ``ErrorEnvelope``'s arguments, sent.

Example: ``tool_error("NOT_FOUND", "Invoice INV-9 does not exist.", recovery="...")``;
``isError`` unless the severity is ``warning``.

Raises:
    TypeError, ValueError: if a field is malformed (see ``ErrorEnvelope``).
"""


def error(message: str, code: str | None = None) -> ToolResponse:
    """A plain error envelope with ``message`` (code ``ERROR`` unless given)."""
    return error_response(ErrorEnvelope(code or "ERROR", message))


def required(field: str) -> ToolResponse:
    """The error for a missing required field."""
    return error_response(
        ErrorEnvelope(
            "MISSING_REQUIRED_FIELD",
            f"Missing required field: {field}.",
            recovery=f"Call the tool again with '{field}' set.",
        )
    )
