"""Structured output (SPEC §12): an action's output schema, its check and its wrapping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from mcpfusion._errors import DefinitionError, OutputMismatchError
from mcpfusion._present.masking import allows_extra
from mcpfusion._present.response import ToolResponse, success_structured
from mcpfusion._tools.jsonschema import QuietJsonSchema, hoist_defs
from mcpfusion._wire.datablock import select_fields
from mcpfusion._wire.parse import parse_error

RESULT_KEY = "result"
"""The key a value that is not an object is wrapped under (SPEC §12)."""


class OutputSchema:
    """The output schema of one action: what ``tools/list`` advertises and what is sent.

    Args:
        schema: a pydantic model class, or any type pydantic can validate.
        owner: ``tool/action``, for error messages.
    """

    __slots__ = ("_adapter", "json_schema", "keys", "name", "wrapped")

    def __init__(self, schema: Any, owner: str) -> None:
        self.name: str | None = getattr(schema, "__name__", None)
        """The class name, which pydantic writes as the schema's title."""
        try:
            self._adapter: TypeAdapter[Any] = TypeAdapter(schema)
            inner = self._adapter.json_schema(
                mode="serialization", schema_generator=QuietJsonSchema
            )
        except Exception as exc:  # pydantic raises several types for unusable schemas
            raise DefinitionError(
                f"{owner}: output_schema={schema!r} is not a type pydantic can describe "
                f"({exc}); pass a pydantic model class."
            ) from exc
        if allows_extra(self._adapter.core_schema):
            # The dump would carry undeclared fields: an output schema is a whitelist too.
            raise DefinitionError(
                f"{owner}: output_schema={schema!r} (or a model inside it) sets "
                "extra='allow'; use extra='ignore' or 'forbid', so undeclared fields are "
                "never sent"
            )
        inner = _inline_top_ref(inner)
        self.wrapped = inner.get("type") != "object"
        if self.wrapped:
            defs = inner.pop("$defs", None)
            outer: dict[str, Any] = {
                "type": "object",
                "properties": {RESULT_KEY: inner},
                "required": [RESULT_KEY],
            }
            if defs:
                outer["$defs"] = defs
            self.json_schema = outer
            self.keys: tuple[str, ...] = ()
        else:
            self.json_schema = inner
            self.keys = tuple(inner.get("properties", {}))

    def advertised(self, *, selectable: bool) -> dict[str, Any]:
        """The ``outputSchema`` for ``tools/list``.

        With ``_select`` enabled the agent may ask for a subset of the top-level keys, so
        none of them can be promised: the top-level ``required`` list is left out.
        """
        if not (selectable and self.keys and "required" in self.json_schema):
            return self.json_schema
        return {k: v for k, v in self.json_schema.items() if k != "required"}

    def respond(self, value: Any, select: Sequence[str] | None) -> ToolResponse:
        """Validates a handler's value and returns it as ``success_structured``.

        What is sent is the schema's dump of the value (undeclared fields dropped), trimmed
        by ``select`` unless the value is wrapped.

        Raises:
            OutputMismatchError: if the value does not fit the schema.
        """
        try:
            checked = self._adapter.validate_python(value, from_attributes=True)
        except ValidationError as exc:
            raise OutputMismatchError(f"the value does not match the output schema: {exc}") from exc
        dumped = self._adapter.dump_python(checked, mode="json", by_alias=True)
        if self.wrapped:
            # A wrapped value has no top-level keys to pick (SPEC §11): trimming it would
            # drop "result" and break the advertised schema.
            return success_structured({RESULT_KEY: dumped})
        return success_structured(select_fields(dumped, list(dumped), select))

    def resend(self, response: ToolResponse, select: Sequence[str] | None) -> ToolResponse:
        """The response to send for one the handler built itself.

        An error envelope is sent as an error (see ``failed``). Structured content goes
        through ``respond`` like any returned value, so a hand-built response cannot slip
        undeclared fields past the schema or ignore ``_select``; its text becomes the JSON
        of what is sent.

        Raises:
            OutputMismatchError: if structured content is missing or does not fit the schema.
        """
        if response.is_error or parse_error(response.blocks[0]) is not None:
            return failed(response)
        content = response.structured_content
        if content is None:
            raise OutputMismatchError(
                "an action with an output schema must return its data or "
                "success_structured(...), not a response without structured content"
            )
        if not self.wrapped:
            return self.respond(content, select)
        if set(content) != {RESULT_KEY}:
            raise OutputMismatchError(f"structured content must be {{{RESULT_KEY!r}: …}}")
        return self.respond(content[RESULT_KEY], select)


def failed(response: ToolResponse) -> ToolResponse:
    """An error envelope as a structured action sends it: always with ``isError``.

    MCP requires ``structuredContent`` on every result of a tool that declares an output
    schema unless it is an error. A warning envelope carries no data, so on such an action
    it goes out as an error (its ``severity`` still says ``warning``).
    """
    if response.is_error:
        return response
    return ToolResponse(response.blocks, is_error=True)


def _inline_top_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """Inlines the top-level ``$ref`` pydantic emits for a self-referencing model."""
    ref = schema.get("$ref")
    defs = schema.get("$defs", {})
    if not isinstance(ref, str) or set(schema) != {"$ref", "$defs"}:
        return schema
    target = defs.get(ref.rsplit("/", 1)[-1])
    if not isinstance(target, dict) or target.get("type") != "object":
        return schema
    return {**target, "$defs": defs}


def merged_output_schema(schemas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One ``outputSchema`` for the actions of a grouped tool.

    The schema itself when every action declares the same one; otherwise an object that is
    any of them (each distinct schema once, in first-seen order), with their ``$defs``
    hoisted to the top.
    """
    first = schemas[0]
    if all(schema == first for schema in schemas[1:]):
        return first
    stripped, defs = hoist_defs(schemas)
    branches: list[dict[str, Any]] = []
    for branch in stripped:
        # Actions sharing a schema would repeat its branch: tokens in every prompt, no meaning.
        if branch not in branches:
            branches.append(branch)
    merged: dict[str, Any] = {"type": "object", "anyOf": branches}
    if defs:
        merged["$defs"] = defs
    return merged
