"""Masking: validating data against a Presenter schema into plain dicts, extras dropped."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import CoreSchema, SchemaValidator

# Below this many rows the collector's pauses are negligible; above it, validation allocates
# enough objects to trigger full collections that traverse the caller's rows again and again.
_GC_PAUSE_ROWS = 2_000


class _Unsupported(Exception):
    """The schema uses a feature that only model instances honour."""


def _as_typed_dict(node: Any) -> Any:
    """Rewrites a model core schema into typed-dict schemas, recursively.

    A typed dict validates into a plain dict in declaration order without building model
    instances, which is several times faster; extras are ignored at every level. Schemas
    whose behaviour depends on instances (model validators, computed fields, custom
    serializers, serialization aliases) raise ``_Unsupported``.
    """
    if isinstance(node, list):
        return [_as_typed_dict(item) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    serialization = node.get("serialization")
    if isinstance(serialization, dict) and str(serialization.get("type", "")).startswith(
        "function"
    ):
        raise _Unsupported("custom serializer")
    if isinstance(kind, str) and kind.startswith("function-"):
        inner = node.get("schema")
        if isinstance(inner, dict) and inner.get("type") == "model":
            raise _Unsupported("model validator")
    if kind != "model":
        return {key: _as_typed_dict(value) for key, value in node.items()}
    fields_schema = node["schema"]
    if (
        fields_schema.get("type") != "model-fields"
        or fields_schema.get("computed_fields")
        or node.get("root_model")
        or node.get("post_init")
    ):
        raise _Unsupported("instance-only model feature")
    fields = {}
    for name, field in fields_schema["fields"].items():
        if field.get("serialization_alias") or field.get("serialization_exclude"):
            raise _Unsupported("serialization alias")
        typed_field: dict[str, Any] = {
            "type": "typed-dict-field",
            "schema": _as_typed_dict(field["schema"]),
            "required": field["schema"].get("type") != "default",
        }
        if "validation_alias" in field:
            typed_field["validation_alias"] = field["validation_alias"]
        fields[name] = typed_field
    typed: dict[str, Any] = {"type": "typed-dict", "fields": fields, "extra_behavior": "ignore"}
    if "ref" in node:
        typed["ref"] = node["ref"]
    config = {k: v for k, v in node.get("config", {}).items() if k != "extra_fields_behavior"}
    if config:
        typed["config"] = config
    return typed


def _list_of(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "definitions":
        return {**schema, "schema": {"type": "list", "items_schema": schema["schema"]}}
    return {"type": "list", "items_schema": schema}


@contextmanager
def _collector_paused(rows: int) -> Iterator[None]:
    if rows < _GC_PAUSE_ROWS or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Mask:
    """Validates items against a pydantic model and returns plain dicts.

    Undeclared fields are dropped at every nesting level and keys follow the model's
    declaration order. Items may be dicts, model instances, dataclasses or objects with
    attributes; plain dicts take the fast path.
    """

    __slots__ = ("_fast_many", "_fast_one", "_model", "_model_many", "keys")

    def __init__(self, model: type[BaseModel]) -> None:
        self.keys: tuple[str, ...] = tuple(model.model_fields)
        self._model = TypeAdapter(model)
        self._model_many = TypeAdapter(list[model])  # type: ignore[valid-type]
        try:
            typed = _as_typed_dict(model.__pydantic_core_schema__)
        except _Unsupported:
            self._fast_one: SchemaValidator | None = None
            self._fast_many: SchemaValidator | None = None
        else:
            self._fast_one = SchemaValidator(cast(CoreSchema, typed))
            self._fast_many = SchemaValidator(cast(CoreSchema, _list_of(typed)))

    def one(self, item: Any) -> dict[str, Any]:
        """Masks one item.

        Raises:
            ValidationError: if the item does not fit the schema.
        """
        return cast(dict[str, Any], self._validate(self._fast_one, self._model, item))

    def many(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        """Masks a list of items in one call.

        Raises:
            ValidationError: if an item does not fit; its location starts with the index.
        """
        with _collector_paused(len(items)):
            return cast(
                list[dict[str, Any]], self._validate(self._fast_many, self._model_many, items)
            )

    @staticmethod
    def _validate(fast: SchemaValidator | None, model: TypeAdapter[Any], value: Any) -> Any:
        # Dicts of plain values take the typed-dict path. Anything it rejects gets a second
        # chance through model instances (which accept objects, models and dataclasses);
        # if both reject it, the typed-dict error is the one that describes the data.
        fast_error: ValidationError | None = None
        if fast is not None:
            try:
                return fast.validate_python(value)
            except ValidationError as exc:
                fast_error = exc
        try:
            instances = model.validate_python(value, from_attributes=True)
        except ValidationError:
            if fast_error is not None:
                raise fast_error from None
            raise
        return model.dump_python(instances)
