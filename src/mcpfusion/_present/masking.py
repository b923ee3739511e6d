"""Masking: validating data against a Presenter schema into plain dicts, extras dropped."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Final, cast

from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError
from pydantic_core import CoreSchema, SchemaValidator

from mcpfusion._errors import DefinitionError
from mcpfusion._wire.repair import MISSING

# Below this many rows the collector's pauses are negligible.
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
    if kind == "missing-sentinel":
        # A MISSING value is absent on this path (the key is simply not there); a row that
        # holds the sentinel itself gets the model path, whose dump leaves it out.
        return _as_typed_dict(node["schema"])
    if isinstance(kind, str) and kind.startswith("function-"):
        inner = node.get("schema")
        if isinstance(inner, dict) and inner.get("type") == "model":
            raise _Unsupported("model validator")
    if kind == "dataclass":
        # pydantic keeps a dataclass instance as it is, so a subclass would carry its own
        # fields past the whitelist; the model path dumps it by the declared schema.
        raise _Unsupported("dataclass")
    if kind != "model":
        return {key: _as_typed_dict(value) for key, value in node.items()}
    fields_schema = node["schema"]
    if (
        node.get("root_model")
        and fields_schema.get("type") == "model"
        and set(node.get("config", {})) <= {"title"}
    ):
        return _as_typed_dict(fields_schema)  # RootModel[Model] masks as Model
    if (
        fields_schema.get("type") != "model-fields"
        or fields_schema.get("computed_fields")
        or node.get("root_model")
        or node.get("post_init")
    ):
        raise _Unsupported("instance-only model feature")
    fields = {}
    for name, field in fields_schema["fields"].items():
        if (
            field.get("serialization_alias")
            or field.get("serialization_exclude")
            or field.get("serialization_exclude_if")
        ):
            raise _Unsupported("serialization alias or exclusion")
        schema = field["schema"]
        required = schema.get("type") != "default"
        if not required and schema.get("default") is MISSING:
            # No default at all: a key the row lacks stays absent from the masked dict.
            schema = schema["schema"]
        typed_field: dict[str, Any] = {
            "type": "typed-dict-field",
            "schema": _as_typed_dict(schema),
            "required": required,
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


def allows_extra(node: Any) -> bool:
    """Whether any model, typed dict or dataclass in a core schema keeps undeclared fields."""
    if isinstance(node, list):
        return any(allows_extra(item) for item in node)
    if not isinstance(node, dict):
        return False
    config = node.get("config")
    if node.get("extra_behavior") == "allow" or (
        isinstance(config, dict) and config.get("extra_fields_behavior") == "allow"
    ):
        return True
    return any(allows_extra(value) for key, value in node.items() if key != "config")


def _list_of(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "definitions":
        return {**schema, "schema": {"type": "list", "items_schema": schema["schema"]}}
    return {"type": "list", "items_schema": schema}


def collector_paused(rows: int) -> AbstractContextManager[None]:
    """Pauses the cyclic garbage collector while ``rows`` rows (2,000 or more) are handled.

    Validating and rendering a large list allocates enough objects to trigger full
    collections, each traversing the caller's rows again (100k rows: 362 -> 120 ms).
    The collector is restored afterwards, and left alone if it was already off.
    """
    if rows < _GC_PAUSE_ROWS or not gc.isenabled():
        # One shared no-op: a generator context manager per call cost ~0.5 us, twice a call.
        return _UNPAUSED
    return _paused()


_UNPAUSED: Final = nullcontext()


@contextmanager
def _paused() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Mask:
    """Validates items against a pydantic model and returns plain dicts.

    Undeclared fields are dropped at every nesting level and keys follow the model's
    declaration order. Plain dicts take the fast path (typed dicts, no model instances);
    model instances, dataclasses and objects with attributes take the model path, which
    validates into instances and dumps them by the schema. Both give the same data, except
    that on the model path a schema declared ``extra='forbid'`` rejects undeclared fields.
    """

    __slots__ = ("_fast_many", "_fast_one", "_model_many", "_model_one", "keys")

    def __init__(self, model: type[BaseModel]) -> None:
        schema = model.__pydantic_core_schema__
        if allows_extra(schema):
            # Model instances would carry the extras into the dump: the whitelist would leak
            # on every input that takes the model path (objects, validators, computed fields).
            raise DefinitionError(
                f"schema {model.__name__} (or a model inside it) sets extra='allow'; a "
                "Presenter schema is a whitelist, so use extra='ignore' or 'forbid'"
            )
        # The keys a data block can hold: declared fields that are sent, then computed ones
        # (a RootModel[Model] holds the model's).
        shown = seen_through(model)
        self.keys: tuple[str, ...] = tuple(
            name for name, info in shown.model_fields.items() if not info.exclude
        ) + tuple(shown.model_computed_fields)
        self._model_one = TypeAdapter(model)
        self._model_many = TypeAdapter(list[model])  # type: ignore[valid-type]
        try:
            typed = _as_typed_dict(schema)
        except _Unsupported:
            self._fast_one: SchemaValidator | None = None
            self._fast_many: SchemaValidator | None = None
        else:
            self._fast_one = SchemaValidator(cast(CoreSchema, typed))
            self._fast_many = SchemaValidator(cast(CoreSchema, _list_of(typed)))

    @property
    def plain(self) -> bool:
        """Whether every path gives the schema's own fields, typed as declared (no
        serializer, alias or computed field changes what a dump holds)."""
        return self._fast_one is not None

    def one(self, item: Any) -> dict[str, Any]:
        """Masks one item.

        Raises:
            ValidationError: if the item does not fit the schema.
        """
        masked: dict[str, Any]  # what the validators return (typed Any)
        if isinstance(item, dict):
            if self._fast_one is not None:
                try:  # the common row, in one call; a rejected one gets _validate's rules
                    masked = self._fast_one.validate_python(item)
                    return masked
                except ValidationError:
                    pass
            masked = _validate(self._fast_one, self._model_one, item)
            return masked
        row = as_mapping(item)
        if row is not None:
            masked = _validate(self._fast_one, self._model_one, row)
            return masked
        masked = _validate(None, self._model_one, item)
        return masked

    def many(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        """Masks a list of items in one call.

        Raises:
            ValidationError: if an item does not fit; its location starts with the index.
        """
        # The first row picks the path: a list of model instances or ORM rows would fail
        # the typed-dict path on every row before reaching the model path.
        if not items or isinstance(items[0], dict):
            return cast(list[dict[str, Any]], _validate(self._fast_many, self._model_many, items))
        if as_mapping(items[0]) is not None:
            # Database rows (sqlite3.Row and the like): each is read into the validator as
            # it is reached, never held as a list of copies.
            rows = _Rows(items)
            return cast(list[dict[str, Any]], _validate(self._fast_many, self._model_many, rows))
        return cast(list[dict[str, Any]], _validate(None, self._model_many, items))


def seen_through(model: type[BaseModel]) -> type[BaseModel]:
    """The model whose fields a schema's data holds: a ``RootModel[Model]``'s ``Model``."""
    if issubclass(model, RootModel):
        root = model.model_fields["root"].annotation
        if isinstance(root, type) and issubclass(root, BaseModel):
            return seen_through(root)
    return model


def as_mapping(item: Any) -> Mapping[str, Any] | None:
    """``item`` as a mapping when it is a row read by key (``keys()`` and ``[key]``).

    A ``Mapping`` is itself; a mapping-like row such as ``sqlite3.Row`` is read into a dict;
    anything else (a model, an object with attributes) is ``None``.
    """
    if isinstance(item, Mapping):
        return item
    if not (hasattr(item, "keys") and hasattr(item, "__getitem__")):
        return None
    try:
        return dict(item)
    except (TypeError, ValueError, KeyError, IndexError):  # keys() that are not its keys
        return None


class _Rows:
    """Mapping-like rows read one by one, for a validator that iterates them once per pass."""

    __slots__ = ("_items",)

    def __init__(self, items: Sequence[Any]) -> None:
        self._items = items

    def __iter__(self) -> Iterator[Any]:
        for item in self._items:
            row = as_mapping(item)
            yield item if row is None else row


def _fresh(value: Any) -> Any:
    """What a validator reads: rows are iterated afresh by each path (pydantic takes an
    iterator for a list)."""
    return iter(value) if isinstance(value, _Rows) else value


def _validate(
    fast: SchemaValidator | None,
    model: TypeAdapter[Any],
    value: Any,
) -> Any:
    # Dicts of plain values take the typed-dict path. Anything it rejects gets a second
    # chance through model instances (which accept objects, models and dataclasses).
    # If both reject it, the typed-dict error describes dict data best, unless the
    # typed-dict path only choked on an object where it wanted a dict: then the model
    # path's error names the real field.
    fast_error: ValidationError | None = None
    if fast is not None:
        try:
            return fast.validate_python(_fresh(value))
        except ValidationError as exc:
            fast_error = exc
    try:
        instances = model.validate_python(_fresh(value), from_attributes=True)
    except ValidationError:
        if fast_error is not None and fast_error.errors()[0]["type"] != "dict_type":
            raise fast_error from None
        raise
    return model.dump_python(instances)
