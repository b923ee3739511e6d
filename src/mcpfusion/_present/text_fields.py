"""Which fields of a Presenter's masked rows can hold text, read once from its schema."""

from __future__ import annotations

import datetime
import decimal
import types
import typing
import uuid
from typing import Any, Final

from pydantic import BaseModel, RootModel, functional_validators

TEXT: Final = "text"
"""A field that holds a string (or ``None``): its column is joined and searched."""

WALK: Final = "walk"
"""A field whose values the schema does not pin down: walked value by value."""

Fields = dict[str, "str | int | Fields | None"]
"""Per key: ``TEXT``, ``WALK``, ``None`` (never text), the longest of a ``Literal``'s
strings, or the fields of a nested model."""

_NEVER_TEXT: Final = (
    bool,
    int,
    float,
    decimal.Decimal,
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
    type(None),
)
"""Types pydantic validates into values that are no strings and hold none."""

_VALIDATORS: Final = (
    functional_validators.AfterValidator,
    functional_validators.BeforeValidator,
    functional_validators.PlainValidator,
    functional_validators.WrapValidator,
)


def text_fields(model: type[BaseModel]) -> Fields | None:
    """The fields of ``model`` by what they can hold, ``None`` if any validator or
    serializer of the model could put a value of another type in a field."""
    decorators = model.__pydantic_decorators__
    if (
        decorators.field_validators
        or decorators.model_validators
        or decorators.field_serializers
        or decorators.model_serializers
        or model.model_computed_fields
    ):
        return None
    fields: Fields = {}
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        if any(isinstance(item, _VALIDATORS) for item in info.metadata):
            fields[name] = WALK
            continue
        fields[name] = _kind(info.annotation)
    return fields


def _kind(annotation: Any) -> str | int | Fields | None:
    """What a field typed ``annotation`` holds once validated."""
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *metadata = typing.get_args(annotation)
        if any(isinstance(item, _VALIDATORS) for item in metadata):
            return WALK
        return _kind(inner)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [_kind(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(kinds) == 1:
            return kinds[0]  # an optional: None is no text, and the join falls back on it
        return None if all(kind is None for kind in kinds) else WALK
    if typing.get_origin(annotation) is typing.Literal:
        values = typing.get_args(annotation)
        strings = [len(value) for value in values if isinstance(value, str)]
        if len(strings) != len(values):
            return None if not strings else WALK
        return max(strings)
    if annotation is str:
        return TEXT
    if isinstance(annotation, type):
        if issubclass(annotation, _NEVER_TEXT) and not issubclass(annotation, str):
            return None
        if issubclass(annotation, BaseModel) and not issubclass(annotation, RootModel):
            nested = text_fields(annotation)
            return WALK if nested is None else nested
    return WALK
