"""Input validation failures as the ``<validation_error>`` envelope of SPEC §9."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from mcpfusion.response import ToolResponse
from mcpfusion.wire import format as wire

SENT_LIMIT: Final = 50
"""A value echoed back after "You sent:" is cut to this many characters (SPEC §9)."""

MAX_FIELDS: Final = 20
"""At most this many fields are listed; a flood of bad fields must not flood the context."""

FieldProblem = tuple[str, str]
"""A ``<field>`` of the envelope: the dotted path and its text."""

_SHOULD = re.compile(r"(?P<subject>.+?) should (?P<verb>be|have|match) (?P<rest>.+)", re.DOTALL)
_VERBS: Final = {"be": "is", "have": "has", "match": "matches"}
# What to send, by the first word of pydantic's error type, for messages without "should".
_EXPECTED: Final = {
    "int": "a valid integer",
    "float": "a valid number",
    "decimal": "a valid number",
    "bool": "true or false",
    "string": "a valid string",
    "list": "a list",
    "dict": "a JSON object",
    "model": "a JSON object",
    "date": "an ISO 8601 date",
    "datetime": "an ISO 8601 date and time",
    "uuid": "a UUID",
}


def validation_failure(target: str, problems: Sequence[FieldProblem]) -> ToolResponse:
    """The ``<validation_error>`` result for ``target`` (``tool/action``) and its problems."""
    text = wire.validation_error(target, problems)
    return ToolResponse((text,), is_error=True)


def field_problems(
    exc: ValidationError, arguments: Mapping[str, Any], accepted: Sequence[str]
) -> list[FieldProblem]:
    """Turns pydantic's errors into SPEC §9 fields: path, what is wrong, what was sent, a fix.

    Args:
        exc: the error raised while validating ``arguments``.
        arguments: the arguments as sent, to read paths and echo values from.
        accepted: the parameter names the action accepts, offered when a field is unknown.
    """
    problems: dict[str, str] = {}
    errors = exc.errors(include_url=False)
    for error in errors:
        path = _path(error, arguments)
        # A union reports one error per member at the same place; the first one reads best.
        if path not in problems:
            problems[path] = _text(error, path, accepted)
    listed = list(problems.items())
    if len(listed) > MAX_FIELDS:
        hidden = len(listed) - MAX_FIELDS
        listed = listed[:MAX_FIELDS]
        listed.append(
            (
                "arguments",
                f"{hidden} more invalid fields are not listed. You sent: {len(arguments)} "
                "arguments. Fix the fields above and call again to see the rest.",
            )
        )
    return listed


def select_problems(raw: Any, allowed: Sequence[str]) -> list[FieldProblem]:
    """Checks a ``_select`` value (SPEC §11): a list of distinct names from ``allowed``."""
    names = ", ".join(allowed)
    if not isinstance(raw, list):
        return [
            (
                "_select",
                f"Expected a list of field names. You sent: {preview(raw)}. Send a list "
                f"drawn from: {names}; omit _select for all fields.",
            )
        ]
    allowed_set = frozenset(allowed)
    seen: set[str] = set()
    unknown: list[Any] = []
    repeated: list[str] = []
    for key in raw:
        if not isinstance(key, str) or key not in allowed_set:
            unknown.append(key)
        elif key in seen:
            repeated.append(key)
        else:
            seen.add(key)
    problems = []
    if unknown:
        problems.append(
            (
                "_select",
                f"Unknown field names. You sent: {preview(unknown)}. Use only these "
                f"names: {names}.",
            )
        )
    if repeated:
        problems.append(
            (
                "_select",
                f"Duplicate field names. You sent: {preview(repeated)}. List each name once.",
            )
        )
    return problems


def arguments_problem(arguments: Any) -> FieldProblem:
    """The field problem for arguments that are not a JSON object at all."""
    return (
        "arguments",
        f"Expected an object of named arguments. You sent: {preview(arguments)}. "
        "Send a JSON object.",
    )


def _path(error: ErrorDetails, arguments: Mapping[str, Any]) -> str:
    """The dotted path of an error, without the tags pydantic adds for union members.

    A location step is kept when it is a key or index of the value sent at that point; a
    missing field is the last step and names a key that is, by definition, absent.
    """
    loc = error["loc"]
    parts: list[str] = []
    node: Any = arguments
    for position, step in enumerate(loc):
        child = _child(node, step)
        if child is not _ABSENT:
            node = child
        elif not (error["type"] == "missing" and position == len(loc) - 1):
            continue
        parts.append(str(step))
    return ".".join(parts) or "arguments"


_ABSENT: Final = object()


def _child(node: Any, step: int | str) -> Any:
    """``node[step]`` when the sent value has that key or index, else ``_ABSENT``."""
    if isinstance(node, Mapping):
        return node.get(step, _ABSENT)
    if isinstance(node, list | tuple) and isinstance(step, int) and -len(node) <= step < len(node):
        return node[step]
    return _ABSENT


def _text(error: ErrorDetails, path: str, accepted: Sequence[str]) -> str:
    kind = error["type"]
    if kind == "missing":
        return f"Field required. You sent: nothing. Add '{path}' and call again."
    sent = preview(error.get("input"))
    if kind == "extra_forbidden":
        if "." in path:
            return f"Unknown field. You sent: {sent}. Remove it."
        if not accepted:
            return f"Unknown field. You sent: {sent}. Remove it; this action takes no arguments."
        return f"Unknown field. You sent: {sent}. Remove it; this action accepts: " + (
            ", ".join(accepted) + "."
        )
    what = error["msg"].rstrip(".")
    return f"{what}. You sent: {sent}. {_how_to_fix(what, kind)}"


def _how_to_fix(message: str, kind: str) -> str:
    """Turns pydantic's "X should be Y" into "Send Y"; else a fix from the error type."""
    match = _SHOULD.fullmatch(message)
    if match is None:
        expected = _EXPECTED.get(kind.split("_", 1)[0])
        if expected is not None:
            return f"Send {expected}."
        return "Send a value that matches the tool's input schema."
    subject, verb, rest = match["subject"], match["verb"], match["rest"]
    if verb == "be" and not rest.startswith(("'", '"')):
        rest = rest.split(", ", 1)[0]  # drop pydantic's detail, e.g. "unable to parse..."
    if subject == "Input" and verb == "be":
        if rest.startswith(("a ", "an ", "'", '"')) or rest[:1].isdigit() or rest[:1].isupper():
            return f"Send {rest}."
        return f"Send a value {rest}."
    return f"Send a {subject.lower()} that {_VERBS[verb]} {rest}."


def preview(value: Any, limit: int = SENT_LIMIT) -> str:
    """Renders ``value`` as compact JSON, cut to ``limit`` characters ending in ``…``.

    Only the beginning is ever rendered, so a 1 MB string or a 1,000-level nesting costs
    no more than a short value.
    """
    writer = _Preview(limit)
    writer.write(value)
    text = "".join(writer.parts)
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
