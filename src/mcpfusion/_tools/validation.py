"""Input validation: pydantic's errors, bad ``_select`` and ``_cursor``, as SPEC §9 fields."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

from mcpfusion._present.failures import SENT_LIMIT, FieldProblem, cut, preview

MAX_FIELDS: Final = 20
"""At most this many fields are listed; a flood of bad fields must not flood the context."""

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


def field_problems(
    exc: ValidationError, arguments: Mapping[str, Any], accepted: Sequence[str]
) -> list[FieldProblem]:
    """Turns pydantic's errors into SPEC §9 fields: path, what is wrong, what was sent, a fix.

    Args:
        exc: the error raised while validating ``arguments``.
        arguments: the arguments as sent, to read paths and echo values from.
        accepted: the parameter names the action accepts, offered when a field is unknown.
    """
    # Keyed by the uncut location: two long names cut alike are still two fields.
    problems: dict[tuple[int | str, ...], FieldProblem] = {}
    for index, error in enumerate(_errors(exc)):
        steps, sent = _locate(error, arguments)
        # A union reports one error per member at the same place; the first one reads best.
        if steps in problems:
            continue
        if len(problems) == MAX_FIELDS:
            hidden = exc.error_count() - index
            return [
                *problems.values(),
                (
                    "arguments",
                    f"{hidden} more problems are not listed. You sent: {len(arguments)} "
                    "arguments. Fix the fields above and call again to see the rest.",
                ),
            ]
        path = _dotted(steps)
        problems[steps] = (path, _text(error, path, sent, accepted))
    return list(problems.values())


def _errors(exc: ValidationError) -> Iterator[dict[str, Any]]:
    """pydantic's errors one at a time, read from its JSON rendering as far as needed.

    ``exc.errors()`` builds a dict per error: 200,000 bad list items cost half a second of
    event-loop time, though only the first few are ever described. The JSON rendering is
    built in Rust without Python objects (and without the inputs, which ``_locate`` reads
    from the arguments instead); decoding stops where the caller stops.
    """
    text = exc.json(include_url=False, include_context=False, include_input=False)
    decode = json.JSONDecoder().raw_decode
    index = text.index("[") + 1
    while True:
        while text[index] in _BETWEEN:
            index += 1
        if text[index] == "]":
            return
        error, index = decode(text, index)
        yield error


_BETWEEN: Final = frozenset(" \t\r\n,")

# A function's arguments (as hosts like FastMCP validate them) report these two problems
# under their own error types; they read exactly like a model's.
_MISSING: Final = frozenset({"missing", "missing_argument"})
_UNKNOWN: Final = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
"""What may separate the errors of pydantic's JSON array (it is compact today)."""


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


def cursor_problem(raw: Any) -> FieldProblem:
    """The field problem of a ``_cursor`` that is not a string (SPEC §5.4)."""
    return (
        "_cursor",
        f"Expected the cursor string a cut list gave. You sent: {preview(raw)}. Send it as "
        "given, or omit _cursor for the first page.",
    )


def arguments_problem(arguments: Any) -> FieldProblem:
    """The field problem for arguments that are not a JSON object at all."""
    return (
        "arguments",
        f"Expected an object of named arguments. You sent: {preview(arguments)}. "
        "Send a JSON object.",
    )


def _locate(
    error: Mapping[str, Any], arguments: Mapping[str, Any]
) -> tuple[tuple[int | str, ...], Any]:
    """The location of an error without pydantic's union tags, and the value sent there.

    A location step is kept when it is a key or index of the value sent at that point; a
    missing field is the last step and names a key that is, by definition, absent. A bad
    dict key (pydantic's ``[key]`` step) was sent as the key itself.
    """
    loc = error["loc"]
    kept: list[int | str] = []
    node: Any = arguments
    for position, step in enumerate(loc):
        last = position == len(loc) - 1
        child = _child(node, step)
        if child is not _ABSENT:
            node = child
        elif last and step == "[key]" and kept:
            node = kept[-1]
            continue
        elif not (last and error["type"] in _MISSING):
            continue
        kept.append(step)
    return tuple(kept), node


def _dotted(steps: Sequence[int | str]) -> str:
    """The dotted path of a location, cut like a sent value (keys are sent text too)."""
    # Each step is cut first, so a megabyte-long key is never joined whole.
    return cut(".".join(str(step)[: SENT_LIMIT + 1] for step in steps)) or "arguments"


_ABSENT: Final = object()


def _child(node: Any, step: int | str) -> Any:
    """``node[step]`` when the sent value has that key or index, else ``_ABSENT``."""
    if isinstance(node, Mapping):
        return node.get(step, _ABSENT)
    if isinstance(node, list | tuple) and isinstance(step, int) and -len(node) <= step < len(node):
        return node[step]
    return _ABSENT


def _text(error: Mapping[str, Any], path: str, value: Any, accepted: Sequence[str]) -> str:
    kind = error["type"]
    if kind in _MISSING:
        return f"Field required. You sent: nothing. Add '{path}' and call again."
    sent = preview(value)
    if kind in _UNKNOWN:
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
