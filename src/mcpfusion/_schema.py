"""The input schemas agents see: the grouped union with its ``action`` enum, and flat ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from mcpfusion._action import Action
from mcpfusion._errors import DefinitionError
from mcpfusion._jsonschema import DEFS_REF, hoist_defs

DISCRIMINATOR: Final = "action"
"""The argument that names the action of a grouped tool."""

SELECT: Final = "_select"
"""The argument that trims the data block (SPEC §11)."""

ACTION_DESCRIPTION: Final = "The operation to perform; the tool description lists them."
SELECT_DESCRIPTION: Final = "Return only these top-level fields of the data. Omit for all."

# Keys that describe a parameter without constraining its values.
_ANNOTATION_KEYS: Final = frozenset({"description", "default", "title", "examples"})

_NO_DEFAULT: Final = object()


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
    schema = action.params_schema
    properties = dict(schema.get("properties", {}))
    required = list(schema.get("required", []))
    defs = dict(schema.get("$defs", {}))
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    return _object(properties, required, defs)


class ParamTypes:
    """The type each parameter name has in a grouped tool, to reject conflicts when defined.

    Only the new action's parameters are described and compared, so defining ``n`` actions
    costs ``O(n)`` schema work, not a whole union per action.

    Args:
        tool: the tool's name, for error messages.
    """

    __slots__ = ("_known", "_tool")

    def __init__(self, tool: str) -> None:
        self._tool = tool
        self._known: dict[str, tuple[Any, str]] = {}

    def add(self, action: Action) -> None:
        """Records ``action``'s parameter types.

        Raises:
            DefinitionError: if one has a different type in an earlier action; then nothing
                is recorded.
        """
        schema = action.params_schema
        defs = schema.get("$defs", {})
        shapes = {wire: type_of(prop, defs) for wire, prop in schema.get("properties", {}).items()}
        for wire, shape in shapes.items():
            known = self._known.get(wire)
            if known is not None and known[0] != shape:
                raise _conflict(self._tool, wire, known[0], known[1], shape, action.name)
        for wire, shape in shapes.items():
            self._known.setdefault(wire, (shape, action.name))


def type_of(prop: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A parameter's type: its schema without annotations, ``$defs`` references inlined.

    Inlining makes the type independent of the names pydantic gives definitions, which
    differ between one action's schema and the tool's union (a same-named class elsewhere
    gets a module-qualified name); a reference back into a definition being inlined
    becomes ``{"$recursive": n}``, ``n`` levels up.
    """
    return _inlined(_shape(prop), defs, ())


def _inlined(node: Any, defs: dict[str, Any], within: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inlined(item, defs, within) for item in node]
    if not isinstance(node, dict):
        return node
    inlined = {key: _inlined(value, defs, within) for key, value in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(DEFS_REF) and ref[len(DEFS_REF) :] in defs:
        name = ref[len(DEFS_REF) :]
        if name in within:
            inlined["$ref"] = {"$recursive": len(within) - within.index(name)}
        else:
            inlined["$ref"] = _inlined(defs[name], defs, (*within, name))
    return inlined


def grouped_input_schema(
    tool: str, actions: Sequence[Action], select_keys: Sequence[str] | None
) -> dict[str, Any]:
    """The input schema of a grouped tool (SPEC §13).

    ``action`` comes first with the actions in definition order, then the union of every
    action's parameters, each described with the actions that use and require it, then
    ``_select``. Top-level ``required`` holds ``action`` and what every action requires.
    Parameter types were checked for conflicts when each action was defined (``ParamTypes``).
    """
    names = [a.name for a in actions]
    properties: dict[str, Any] = {
        DISCRIMINATOR: {"type": "string", "enum": names, "description": ACTION_DESCRIPTION}
    }
    schemas, defs = hoist_defs([a.params_schema for a in actions])
    users: dict[str, list[str]] = {}
    required_in: dict[str, list[str]] = {}
    for action, schema in zip(actions, schemas, strict=True):
        required = schema.get("required", [])
        for wire, prop in schema.get("properties", {}).items():
            known = properties.get(wire)
            if known is None:
                properties[wire] = dict(prop)
            else:
                _fold(known, prop)
            users.setdefault(wire, []).append(action.name)
            if wire in required:
                required_in.setdefault(wire, []).append(action.name)
    for wire, used_by in users.items():
        properties[wire] = _described(properties[wire], used_by, required_in.get(wire, []))
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    always = [w for w in users if len(required_in.get(w, ())) == len(actions)]
    # Sorted by name, as pydantic writes the $defs of one schema.
    return _object(properties, [DISCRIMINATOR, *always], dict(sorted(defs.items())))


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


def _fold(known: dict[str, Any], prop: dict[str, Any]) -> None:
    """Folds a second action's view of a parameter (of the same type) into the union."""
    if known.get("default", _NO_DEFAULT) != prop.get("default", _NO_DEFAULT):
        known.pop("default", None)  # no single default is true for every action
    if "description" not in known and "description" in prop:
        known["description"] = prop["description"]


def _conflict(
    tool: str, wire: str, first_type: Any, first: str, second_type: Any, second: str
) -> DefinitionError:
    return DefinitionError(
        f"tool '{tool}': parameter '{wire}' is {json.dumps(first_type)} in action "
        f"'{first}' but {json.dumps(second_type)} in action '{second}'; give it one "
        "type in both, or rename it in one of them."
    )


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
