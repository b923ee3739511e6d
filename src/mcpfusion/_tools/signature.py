"""A handler's signature, read at definition time into its parameters model."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, create_model

from mcpfusion._errors import DefinitionError
from mcpfusion._tools.context import Context
from mcpfusion._tools.declared import DeclaredSchema
from mcpfusion._tools.jsonschema import QuietJsonSchema

_PARAMS_CONFIG: Final = ConfigDict(extra="forbid", protected_namespaces=())


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a handler as agents see it.

    Attributes:
        name: the handler's parameter name.
        field: the field of the parameters model (differs when ``name`` would shadow a
            ``BaseModel`` attribute such as ``json``).
        wire: the argument name agents send (the field's alias, else ``name``).
        required: whether the agent must send it.
    """

    name: str
    field: str
    wire: str
    required: bool


def takes_null(properties: Mapping[str, Any], name: str) -> bool:
    """Whether the JSON Schema of parameter ``name`` accepts ``null``."""
    prop = properties.get(name)
    if not isinstance(prop, Mapping):
        return True  # described by nothing: leave its null to validation
    kind = prop.get("type")
    branches = prop.get("anyOf") or ()
    return (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or {"type": "null"} in branches
    )


class _StateMarker:
    """Marks a parameter that receives the app's state."""


STATE: Final[type] = _StateMarker


def fits_declared(owner: str, declared: DeclaredSchema, params: Sequence[Param]) -> None:
    """Checks that a declared schema gives every handler parameter its value."""
    properties, required = declared.properties(), declared.required()
    for param in params:
        if param.wire not in properties:
            raise DefinitionError(
                f"{owner}: parameter '{param.name}' is not a top-level property of "
                "input_schema, so no argument could reach it; add it to the schema's "
                "properties or remove the parameter"
            )
        if param.required and param.wire not in required:
            raise DefinitionError(
                f"{owner}: parameter '{param.name}' has no default but input_schema does not "
                "require it; give it a default or list it in the schema's required"
            )


def is_async(handler: Callable[..., Any]) -> bool:
    call = getattr(handler, "__call__", None)  # noqa: B004 - objects with an async __call__
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


_Fields = dict[str, tuple[Any, Any]]


def signature(
    owner: str,
    handler: Callable[..., Any],
    context_type: type | None,
    reserved: Collection[str],
    state_type: type | None = None,
) -> tuple[_Fields, dict[str, str], tuple[tuple[str, type], ...]]:
    """Reads a handler's parameters: model fields, field-to-parameter names, context ones."""
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as exc:
        raise DefinitionError(f"{owner}: cannot read the handler's signature ({exc})") from exc
    try:
        hints = typing.get_type_hints(_annotated(handler), include_extras=True)
    except Exception as exc:  # NameError and friends from unresolvable string annotations
        raise DefinitionError(
            f"{owner}: cannot resolve the handler's type hints ({exc}); define the types it "
            "names at module level so they can be found."
        ) from exc
    fields: _Fields = {}
    names: dict[str, str] = {}
    injected: list[tuple[str, type]] = []
    for param in signature.parameters.values():
        name = param.name
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise DefinitionError(
                f"{owner}: *{name} cannot be described to an agent; declare each parameter"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise DefinitionError(f"{owner}: parameter '{name}' is positional-only; drop the /")
        annotation = hints.get(name, Any)
        kind = _context_kind(annotation, context_type, state_type)
        if kind is not None:
            injected.append((name, kind))
            continue
        if name.startswith("_"):
            raise DefinitionError(
                f"{owner}: parameter '{name}' starts with '_', which is reserved for the "
                "framework (as in _select); rename it."
            )
        if name in reserved:
            raise DefinitionError(
                f"{owner}: parameter '{name}' is reserved in a grouped tool (it selects the "
                "action); rename it."
            )
        field = name
        while hasattr(BaseModel, field) or field in fields:
            field += "_"  # the wire keeps `name` through the alias
        default = Field(alias=name) if field != name else ...
        if param.default is not param.empty:
            default = Field(param.default, alias=name) if field != name else param.default
        fields[field] = (annotation, default)
        names[field] = name
    return fields, names, tuple(injected)


def _annotated(handler: Callable[..., Any]) -> Any:
    """The object whose annotations describe ``handler``'s parameters."""
    if isinstance(handler, functools.partial):
        return _annotated(handler.func)
    if inspect.isroutine(handler) or inspect.isclass(handler):
        return handler
    return type(handler).__call__  # a callable object: its __call__ has the annotations


def _context_kind(
    annotation: Any, context_type: type | None, state_type: type | None = None
) -> type | None:
    """The class a context parameter asks for (``STATE`` for the app's state), or ``None``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = annotation.__origin__
    if not isinstance(annotation, type):
        return None
    if annotation is state_type:
        return STATE
    if issubclass(annotation, Context):
        return annotation
    for product, kind in ((context_type, annotation), (state_type, STATE)):
        if product is not None and annotation is not object:
            try:
                if issubclass(product, annotation):
                    return kind
            except TypeError:  # protocols that are not runtime-checkable
                return None
    return None


def model(owner: str, fields: _Fields) -> type[BaseModel]:
    try:
        model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{owner.replace('/', '__')}__params", __config__=_PARAMS_CONFIG, **fields
        )
    except Exception as exc:  # pydantic's schema errors for types it cannot handle
        raise DefinitionError(
            f"{owner}: a parameter type cannot be validated from JSON ({exc}). Use JSON "
            "types, pydantic models, enums or Literal; to receive the request context, "
            "annotate the parameter with mcpfusion.Context or your context factory's "
            "return type."
        ) from exc
    return model


def schema(owner: str, model: type[BaseModel]) -> dict[str, Any]:
    try:
        return model.model_json_schema(schema_generator=QuietJsonSchema)
    except Exception as exc:  # PydanticInvalidForJsonSchema, and what custom types raise
        raise DefinitionError(
            f"{owner}: a parameter type cannot be described in JSON Schema ({exc}), so no "
            "agent could know what to send. Use JSON types, pydantic models, enums or "
            "Literal."
        ) from exc
