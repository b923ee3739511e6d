"""Input schemas declared as JSON Schema (``input_schema=``): advertised as given, enforced
with a Draft 2020-12 validator, each violation a SPEC §9 field problem."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final

from mcpfusion._errors import DefinitionError
from mcpfusion._present.failures import FieldProblem, cut, preview

MAX_PROBLEMS: Final = 20
"""At most this many problems are listed, as for signature-made schemas."""
TEXT_LIMIT: Final = 600
"""A problem's text is cut to this many characters."""

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"


class InvalidArguments(Exception):
    """Arguments that do not fit a declared input schema; ``problems`` say why."""

    def __init__(self, problems: list[FieldProblem]) -> None:
        super().__init__("; ".join(f"{path}: {text}" for path, text in problems))
        self.problems = problems


class DeclaredSchema:
    """An action's input schema as its author wrote it.

    Args:
        owner: ``tool/action``, for messages.
        schema: a JSON Schema (Draft 2020-12 unless its ``$schema`` says otherwise) for an
            object: ``"type": "object"`` at the top.

    Raises:
        DefinitionError: if it is not a JSON-compatible mapping, not an object schema, or
            not a valid schema of its draft.
    """

    def __init__(self, owner: str, schema: Mapping[str, Any]) -> None:
        # jsonschema loads only for an app that declares a schema.
        import jsonschema
        from jsonschema.validators import validator_for

        if not isinstance(schema, Mapping):
            raise DefinitionError(f"{owner}: input_schema is a JSON Schema dict; got {schema!r}")
        try:
            given: dict[str, Any] = json.loads(json.dumps(schema, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise DefinitionError(f"{owner}: input_schema is not JSON-compatible ({exc})") from None
        if given.get("type") != "object":
            raise DefinitionError(
                f'{owner}: input_schema must describe an object ("type": "object" at its '
                "top): MCP tool arguments are a JSON object"
            )
        kind = validator_for(given, default=jsonschema.Draft202012Validator)
        try:
            kind.check_schema(given)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(step) for step in exc.absolute_path) or "its top"
            raise DefinitionError(
                f"{owner}: input_schema is not a valid JSON Schema at {where}: {exc.message}"
            ) from None
        self.schema = given
        self._validator = kind(given, format_checker=kind.FORMAT_CHECKER)

    def properties(self) -> Mapping[str, Any]:
        """The top-level ``properties``."""
        found = self.schema.get("properties", {})
        return found if isinstance(found, dict) else {}

    def required(self) -> list[str]:
        """The top-level ``required`` names."""
        found = self.schema.get("required", [])
        return [n for n in found if isinstance(n, str)] if isinstance(found, list) else []

    def advertised(self) -> dict[str, Any]:
        """A copy of the schema, to advertise (callers may add ``_select``)."""
        return copy.deepcopy(self.schema)

    def check(self, arguments: Mapping[str, Any]) -> None:
        """Validates ``arguments``.

        Raises:
            InvalidArguments: with one problem per violation (at most ``MAX_PROBLEMS``),
                shallowest first.
        """
        errors = sorted(
            self._validator.iter_errors(dict(arguments)),
            key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))),
        )
        if not errors:
            return
        problems: dict[str, FieldProblem] = {}
        for error in errors:
            path, text = _problem(error)
            if path in problems:
                continue  # the first error at a place reads best
            if len(problems) == MAX_PROBLEMS:
                problems["arguments"] = (
                    "arguments",
                    "More problems are not listed. Fix the fields above and call again.",
                )
                break
            problems[path] = (path, text)
        raise InvalidArguments(list(problems.values()))


def _problem(error: Any) -> FieldProblem:
    """One validation error as a field problem: its dotted path, what is wrong, the fix."""
    steps = [str(step) for step in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [n for n in error.validator_value if n not in error.instance]
        if missing:
            path = ".".join([*steps, str(missing[0])])
            return path, f"Field required. You sent: nothing. Add '{cut(path)}' and call again."
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            path = ".".join([*steps, str(extra[0])])
            names = ", ".join(sorted(allowed)) or "none"
            return path, f"Unknown field. Remove it; accepted fields: {cut(names, 300)}."
    path = ".".join(steps) or "arguments"
    if error.context:  # anyOf / oneOf: what each alternative wanted
        wanted = sorted({_wanted(sub) for sub in error.context})
        text = f"Fits none of the allowed forms: {'; or '.join(wanted)}."
    else:
        text = _message(error) + "."
    sent = preview(error.instance)
    return path, cut(f"{text} You sent: {sent}. Fix it and call again.", TEXT_LIMIT)


def _wanted(error: Any) -> str:
    """What one alternative of an ``anyOf``/``oneOf`` asked for."""
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [str(n) for n in error.validator_value if n not in error.instance]
        if missing:
            return "send " + " and ".join(f"'{cut(n)}'" for n in missing)
    where = ".".join(str(step) for step in error.relative_path)
    return (f"{where}: " if where else "") + _message(error)


def _message(error: Any) -> str:
    """jsonschema's message without the echoed value (``You sent`` shows it once), cut."""
    message = str(error.message)
    shown = repr(error.instance)
    if message.startswith(shown):
        message = "The value" + message[len(shown) :]
    return cut(message.rstrip("."), 300)
