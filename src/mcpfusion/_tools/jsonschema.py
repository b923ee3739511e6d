"""JSON Schema as agents read it: no derived titles, and shared ``$defs`` merged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pydantic.json_schema import GenerateJsonSchema

DEFS_REF: Final = "#/$defs/"


class QuietJsonSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema without the titles it derives from field names.

    ``"title": "Invoice Id"`` next to ``invoice_id`` only costs tokens in every agent
    prompt; titles set explicitly with ``Field(title=...)`` are kept.
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def hoist_defs(schemas: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Moves the ``$defs`` of several schemas into one shared table.

    A definition several schemas share is kept once; two different definitions under one
    name are told apart by a numeric suffix (``Line``, ``Line2``), with the references of
    each schema renamed to match.

    Returns:
        The schemas without their ``$defs``, and the shared table.
    """
    defs: dict[str, Any] = {}
    stripped: list[dict[str, Any]] = []
    for schema in schemas:
        own: dict[str, Any] = schema.get("$defs", {})
        renames: dict[str, str] = {}
        for name, definition in own.items():
            target, n = name, 2
            while target in defs and defs[target] != definition:
                target, n = f"{name}{n}", n + 1
            renames[name] = target
        for name, definition in own.items():
            defs[renames[name]] = _renamed(definition, renames)
        stripped.append(_renamed({k: v for k, v in schema.items() if k != "$defs"}, renames))
    return stripped, defs


def _renamed(node: Any, renames: dict[str, str]) -> Any:
    """``node`` with its ``#/$defs/`` references renamed."""
    if all(old == new for old, new in renames.items()):
        return node
    if isinstance(node, list):
        return [_renamed(item, renames) for item in node]
    if not isinstance(node, dict):
        return node
    renamed = {key: _renamed(value, renames) for key, value in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(DEFS_REF):
        name = ref[len(DEFS_REF) :]
        renamed["$ref"] = DEFS_REF + renames.get(name, name)
    return renamed
