"""The input schemas agents see: the grouped union with its ``action`` enum, and flat ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from mcpfusion.action import Action
from mcpfusion.errors import DefinitionError
from mcpfusion.structured import QuietJsonSchema

DISCRIMINATOR: Final = "action"
"""The argument that names the action of a grouped tool."""

SELECT: Final = "_select"
"""The argument that trims the data block (SPEC §11)."""

ACTION_DESCRIPTION: Final = "The operation to perform; the tool description lists them."
SELECT_DESCRIPTION: Final = "Return only these top-level fields of the data. Omit for all."

# Keys that describe a parameter without constraining its values.
_ANNOTATION_KEYS: Final = frozenset({"description", "default", "title", "examples"})

_NO_DEFAULT: Final = object()

_Params = tuple[dict[str, Any], list[str]]


def select_property(keys: Sequence[str]) -> dict[str, Any]:
    """The ``_select`` property of SPEC §11 for the given (sorted) keys."""
    return {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "string", "enum": list(keys)},
        "description": SELECT_DESCRIPTION,
    }


def flat_input_schema(action: Action, select_keys: Sequence[str] | None) -> dict[str, Any]:
    """The input schema of one action exposed as its own tool."""
    [(properties, required)], defs = _action_params([action])
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    return _object(properties, required, defs)


def grouped_input_schema(
    tool: str, actions: Sequence[Action], select_keys: Sequence[str] | None
) -> dict[str, Any]:
    """The input schema of a grouped tool (SPEC §13).

    ``action`` comes first with the actions in definition order, then the union of every
    action's parameters, each described with the actions that use and require it, then
    ``_select``. Top-level ``required`` holds ``action`` and what every action requires.

    Raises:
        DefinitionError: if two actions give one parameter different types.
    """
    names = [a.name for a in actions]
    properties: dict[str, Any] = {
        DISCRIMINATOR: {"type": "string", "enum": names, "description": ACTION_DESCRIPTION}
    }
    params, defs = _action_params(actions)
    first_user: dict[str, str] = {}
    users: dict[str, list[str]] = {}
    required_in: dict[str, list[str]] = {}
    for action, (props, required) in zip(actions, params, strict=True):
        for wire, prop in props.items():
            known = properties.get(wire)
            if known is None:
                properties[wire] = dict(prop)
                first_user[wire] = action.name
            else:
                _merge(tool, wire, known, prop, first_user[wire], action.name)
            users.setdefault(wire, []).append(action.name)
            if wire in required:
                required_in.setdefault(wire, []).append(action.name)
    for wire, used_by in users.items():
        properties[wire] = _described(properties[wire], used_by, required_in.get(wire, []))
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    always = [w for w in users if len(required_in.get(w, ())) == len(actions)]
    return _object(properties, [DISCRIMINATOR, *always], defs)


def _action_params(actions: Sequence[Action]) -> tuple[list[_Params], dict[str, Any]]:
    """Each action's properties and required names, and the ``$defs`` they share."""
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (a.params_model, "validation") for a in actions
    ]
    refs, top = models_json_schema(models, schema_generator=QuietJsonSchema)
    defs: dict[str, Any] = dict(top.get("$defs", {}))
    params: list[_Params] = []
    for model in models:
        name = refs[model]["$ref"].rsplit("/", 1)[-1]
        schema = defs.pop(name)
        params.append((dict(schema.get("properties", {})), list(schema.get("required", []))))
    return params, defs


def _object(
    properties: dict[str, Any], required: list[str], defs: dict[str, Any]
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if defs:
        schema["$defs"] = defs
    return schema


def _merge(
    tool: str, wire: str, known: dict[str, Any], prop: dict[str, Any], first: str, second: str
) -> None:
    """Folds a second action's view of a parameter into the union, or rejects a conflict."""
    if _shape(known) != _shape(prop):
        raise DefinitionError(
            f"tool '{tool}': parameter '{wire}' is {json.dumps(_shape(known))} in action "
            f"'{first}' but {json.dumps(_shape(prop))} in action '{second}'; give it one "
            "type in both, or rename it in one of them."
        )
    if known.get("default", _NO_DEFAULT) != prop.get("default", _NO_DEFAULT):
        known.pop("default", None)  # no single default is true for every action
    if "description" not in known and "description" in prop:
        known["description"] = prop["description"]


def _shape(prop: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in prop.items() if k not in _ANNOTATION_KEYS}


def _described(prop: dict[str, Any], used_by: list[str], required_in: list[str]) -> dict[str, Any]:
    """Puts first the parameter's description, followed by which actions use and need it."""
    if required_in == used_by:
        usage = f"Required for: {', '.join(used_by)}."
    elif not required_in:
        usage = f"Used by: {', '.join(used_by)}."
    else:
        usage = f"Used by: {', '.join(used_by)}. Required for: {', '.join(required_in)}."
    own = str(prop.get("description", "")).strip()
    text = f"{sentence(own)} {usage}" if own else usage
    return {"description": text, **{k: v for k, v in prop.items() if k != "description"}}


def sentence(text: str) -> str:
    """``text`` ending in a full stop unless it already ends in punctuation."""
    return text if not text or text[-1] in ".!?:" else text + "."
