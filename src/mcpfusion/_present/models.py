"""Presenter schemas made from models: pydantic models and SQLAlchemy declarative classes."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, create_model

from mcpfusion._errors import DefinitionError

TENANT_NAMES: Final = ("tenant_id", "tenant")
"""Column or field names recognised as the tenant when ``tenant=`` is not given."""

_CONFIG: Final = ConfigDict(extra="ignore", protected_namespaces=())


def is_sqlalchemy(model: Any) -> bool:
    """Whether ``model`` is a mapped SQLAlchemy class (checked without importing SQLAlchemy)."""
    return isinstance(model, type) and hasattr(model, "__mapper__")


def schema_from_model(
    name: str, model: Any, exclude: Collection[str], tenant: str | None
) -> tuple[type[BaseModel], str | None]:
    """The whitelist of a model and its tenant field.

    Args:
        name: the Presenter's name, for messages and the schema's class name.
        model: a pydantic model class or a mapped SQLAlchemy class.
        exclude: field or column names left out of the whitelist.
        tenant: the tenant column; ``None`` looks for one named as in ``TENANT_NAMES``
            (or a SQLAlchemy column with ``info={"tenant": True}``), ``""`` for none.

    Returns:
        The schema (every field not excluded, the tenant left out) and the tenant's name.

    Raises:
        DefinitionError: on anything else than those models, or names it does not have.
    """
    if isinstance(exclude, str) or not isinstance(exclude, Collection):
        raise DefinitionError(f"Presenter '{name}': exclude takes a list of field names")
    if isinstance(model, type) and issubclass(model, BaseModel):
        fields = _pydantic_fields(model)
        flagged: str | None = None
    elif is_sqlalchemy(model):
        fields, flagged = _sqlalchemy_fields(model)
    else:
        raise DefinitionError(
            f"Presenter '{name}': from_model takes a pydantic model or a SQLAlchemy "
            f"declarative class; got {model!r}"
        )
    unknown = sorted(set(exclude) - set(fields))
    if unknown:
        raise DefinitionError(
            f"Presenter '{name}': exclude names {', '.join(unknown)}, which "
            f"{model.__name__} does not have; fields: {', '.join(fields)}"
        )
    if tenant is None:
        tenant = flagged or next((n for n in TENANT_NAMES if n in fields), None)
    elif tenant and tenant not in fields:
        raise DefinitionError(
            f"Presenter '{name}': tenant '{tenant}' is not a field of {model.__name__}"
        )
    kept = {
        field: spec for field, spec in fields.items() if field not in exclude and field != tenant
    }
    schema: type[BaseModel] = create_model(f"{model.__name__}View", __config__=_CONFIG, **kept)
    return schema, tenant or None


def _pydantic_fields(model: type[BaseModel]) -> dict[str, Any]:
    return {
        field: (info.rebuild_annotation(), info)  # type, default, description and alias
        for field, info in model.model_fields.items()
    }


def _sqlalchemy_fields(model: type) -> tuple[dict[str, Any], str | None]:
    """The mapped columns as fields: their Python types, comments as descriptions."""
    import sqlalchemy  # the `sqlalchemy` extra; only a SQLAlchemy model gets here

    mapper: Any = sqlalchemy.inspect(model)
    fields: dict[str, Any] = {}
    tenant: str | None = None
    for attribute in mapper.column_attrs:
        column = attribute.columns[0]
        try:
            kind: Any = column.type.python_type
        except NotImplementedError:  # custom types without one: sent as they are
            kind = Any
        if column.nullable:
            kind = kind | None
        fields[attribute.key] = (
            kind,
            Field(None if column.nullable else ..., description=column.comment or None),
        )
        if column.info.get("tenant") is True:
            tenant = attribute.key
    return fields, tenant
