"""Presenters made from response schemas: the schema's properties are the whitelist."""

from __future__ import annotations

import re
import warnings
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, create_model

from mcpfusion._present.presenter import Presenter

_CONFIG: Final = ConfigDict(extra="ignore", protected_namespaces=())
_CLASS_WORD: Final = re.compile(r"[^A-Za-z0-9]+")


def response_presenter(
    name: str, schema: dict[str, Any] | None, limit: int | None = None
) -> Presenter | None:
    """The Presenter of a response schema, or ``None`` when it declares no object fields.

    An object schema (or an array of them) becomes a model whose fields are its properties,
    nested objects included: what the document does not declare (and what it marks
    ``writeOnly``, already removed from the schema) never reaches the agent. Values the
    response leaves out are left out, not sent as ``null`` (``omit_none``).
    """
    if schema is None:
        return None
    item = schema.get("items") if schema.get("type") == "array" else schema
    if not isinstance(item, dict) or not _properties(item):
        return None
    return Presenter(name, model_of(name, item), limit=limit, omit_none=True)


def model_of(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model of an object schema: every property optional, nested ones modelled.

    Properties pydantic reserves (``model_config``, names with a leading ``_``) are left
    out, so they are never sent.
    """
    fields: dict[str, Any] = {}
    for prop, spec in _properties(schema).items():
        if prop == "model_config" or prop.startswith("_"):
            continue
        spec = spec if isinstance(spec, dict) else {}
        description = spec.get("description")
        annotation = _annotation(f"{name}_{prop}", spec)
        fields[prop] = (
            annotation | None,
            Field(None, description=description if isinstance(description, str) else None),
        )
    with warnings.catch_warnings():
        # A property named like a BaseModel method (`json`, `copy`) is still a field: the
        # Presenter reads and writes fields, never those methods.
        warnings.filterwarnings("ignore", message="Field name .* shadows an attribute")
        model: type[BaseModel] = create_model(_class_name(name), __config__=_CONFIG, **fields)
    return model


def _annotation(name: str, spec: dict[str, Any]) -> Any:
    """A property's type: a nested model for an object with properties, else any value."""
    if _properties(spec):
        return model_of(name, spec)
    items = spec.get("items")
    if spec.get("type") == "array" and isinstance(items, dict) and _properties(items):
        return list[model_of(name, items)]  # type: ignore[misc]
    return Any  # the document declares the value, not its shape: sent as it is


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    """The properties of a schema with those of its ``allOf``/``anyOf``/``oneOf`` branches."""
    found: dict[str, Any] = {}
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, dict):
                found.update(_properties(branch))
    own = schema.get("properties")
    if isinstance(own, dict):
        found.update(own)
    return found


def _class_name(name: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in _CLASS_WORD.split(name) if w) or "Response"
