"""Reading an OpenAPI 3.x document: JSON or YAML, references inlined, schemas as JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from mcpfusion._errors import DefinitionError

Direction = Literal["request", "response"]
"""Which way a schema's data travels: ``readOnly`` fields are never sent, ``writeOnly``
ones never come back."""

MAX_DEPTH: Final = 12
"""References are inlined this deep; a recursive schema is cut to ``{}`` (any value) below."""

# OpenAPI's own keywords that JSON Schema validators do not know, or that only document.
_DROPPED: Final = frozenset(
    {"nullable", "example", "xml", "externalDocs", "discriminator", "deprecated"}
)


def load_document(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """Reads an OpenAPI 3.x document from a file (``.json``, ``.yaml``, ``.yml``) or a dict.

    Raises:
        DefinitionError: if the file cannot be read or parsed, or is not OpenAPI 3.x.
    """
    if isinstance(source, Mapping):
        document: Any = json.loads(json.dumps(source))  # a copy the mapping cannot change
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DefinitionError(f"cannot read the OpenAPI document {path}: {exc}") from None
        document = _parse(path, text)
    if not isinstance(document, dict) or not str(document.get("openapi", "")).startswith("3."):
        raise DefinitionError(
            'an OpenAPI document is a mapping with "openapi": "3.x" (Swagger 2.0 documents '
            "convert with swagger2openapi first)"
        )
    if not isinstance(document.get("paths"), dict):
        raise DefinitionError("the OpenAPI document has no paths")
    return document


def _parse(path: Path, text: str) -> Any:
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise DefinitionError(f"{path} is not valid JSON: {exc}") from None
    try:
        import yaml  # the `openapi` extra; JSON documents need nothing
    except ImportError:
        raise DefinitionError(
            f"reading {path} needs PyYAML: pip install 'mcpfusion[openapi]'"
        ) from None
    try:
        return yaml.safe_load(text)  # safe_load: a document builds no Python objects
    except yaml.YAMLError as exc:
        raise DefinitionError(f"{path} is not valid YAML: {exc}") from None


def resolve(document: Mapping[str, Any], node: Any, depth: int = 0) -> Any:
    """``node`` with every local ``$ref`` (``#/components/...``) replaced by its target.

    A reference deeper than ``MAX_DEPTH`` (a recursive schema) becomes ``{}``.

    Raises:
        DefinitionError: on a reference outside the document or to nothing.
    """
    if isinstance(node, list):
        return [resolve(document, item, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if depth >= MAX_DEPTH:
            return {}
        return resolve(document, _target(document, ref), depth + 1)
    return {key: resolve(document, value, depth) for key, value in node.items()}


def _target(document: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise DefinitionError(f"only references inside the document are read; got {ref!r}")
    node: Any = document
    for step in ref[2:].split("/"):
        step = step.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or step not in node:
            raise DefinitionError(f"the reference {ref!r} points to nothing")
        node = node[step]
    return node


def json_schema(schema: Any, direction: Direction) -> dict[str, Any]:
    """An OpenAPI 3.0 schema (references resolved) as plain JSON Schema for one direction.

    ``nullable: true`` becomes a ``null`` alternative; the properties that do not travel
    that way (``readOnly`` in a request, ``writeOnly`` in a response) are removed, from
    ``required`` too.
    """
    if not isinstance(schema, dict):
        return {}
    skip = "readOnly" if direction == "request" else "writeOnly"
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED or key.startswith("x-"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                name: json_schema(prop, direction)
                for name, prop in value.items()
                if not (isinstance(prop, dict) and prop.get(skip) is True)
            }
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = json_schema(value, direction)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [json_schema(item, direction) for item in value]
        else:
            out[key] = value
    if "required" in out and isinstance(out.get("properties"), dict):
        kept = [n for n in out["required"] if n in out["properties"]]
        if kept:
            out["required"] = kept
        else:
            del out["required"]
    for bound in ("Minimum", "Maximum"):  # 3.0's boolean form, as 2020-12 spells it
        if out.get(f"exclusive{bound}") is True and f"{bound.lower()}" in out:
            out[f"exclusive{bound}"] = out.pop(bound.lower())
        elif isinstance(out.get(f"exclusive{bound}"), bool):
            del out[f"exclusive{bound}"]
    if schema.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out
