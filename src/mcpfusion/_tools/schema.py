"""The input schemas agents see: the grouped union with its ``action`` enum, and flat ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from mcpfusion._errors import DefinitionError
from mcpfusion._tools.action import Action
from mcpfusion._tools.jsonschema import DEFS_REF, hoist_defs
from mcpfusion._tools.lean import lean_params, lean_schema, lean_usage

DISCRIMINATOR: Final = "action"
"""The argument that names the action of a grouped tool."""

SELECT: Final = "_select"
"""The argument that trims the data block (SPEC §11)."""

CURSOR: Final = "_cursor"
"""The argument that asks a paging action for its next page (SPEC §5.4)."""

ACTION_DESCRIPTION: Final = "The operation to perform; the tool description lists them."
SELECT_DESCRIPTION: Final = "Return only these top-level fields of the data. Omit for all."
CURSOR_DESCRIPTION: Final = (
    "The next-page cursor a cut list gave, sent with the same other arguments. Omit for the "
    "first page."
)

# Keys that describe a parameter without constraining its values.
_ANNOTATION_KEYS: Final = frozenset({"description", "default", "title", "examples"})

# Keys that narrow a type's values without changing what type it is: two actions may
# constrain one parameter differently, each validating its own (SPEC §13).
_CONSTRAINT_KEYS: Final = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
_NULL: Final = {"type": "null"}

_NO_DEFAULT: Final = object()


def select_property(keys: Sequence[str]) -> dict[str, Any]:
    """The ``_select`` property of SPEC §11 for the given (sorted) keys."""
    return {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "string", "enum": list(keys)},
        "description": SELECT_DESCRIPTION,
    }


def cursor_property(used_by: Sequence[str] = ()) -> dict[str, Any]:
    """The ``_cursor`` property of SPEC §5.4; a grouped tool names the actions that page."""
    usage = f" Used by: {', '.join(used_by)}." if used_by else ""
    return {"type": "string", "description": CURSOR_DESCRIPTION + usage}


def flat_input_schema(
    action: Action, select_keys: Sequence[str] | None, *, lean: bool = False
) -> dict[str, Any]:
    """The input schema of one action exposed as its own tool (``lean``: see ``_lean``).

    A declared schema (``input_schema=``) is advertised as given, lean or not, with only
    ``_select`` (and a paging action's ``_cursor``) added to its properties.
    """
    if action.declared is not None:
        declared = action.declared.advertised()
        if action.pages:
            declared.setdefault("properties", {})[CURSOR] = cursor_property()
        if select_keys is not None:
            declared.setdefault("properties", {})[SELECT] = select_property(select_keys)
        return declared
    schema = lean_params(action.params_schema) if lean else action.params_schema
    properties = dict(schema.get("properties", {}))
    required = list(schema.get("required", []))
    defs = dict(schema.get("$defs", {}))
    if action.pages:
        properties[CURSOR] = cursor_property()
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    built = _object(properties, required, defs)
    return lean_schema(built) if lean else built


class ParamTypes:
    """The type each parameter name has in a grouped tool, to reject conflicts when defined.

    Two actions may share a parameter name when its base type agrees: one may take it as
    optional (``T | None = None``) and another require it, and each may constrain it
    differently (``int`` and ``Annotated[int, Field(ge=1)]``); each action still validates
    its own. Only the new action's parameters are described and compared, so defining
    ``n`` actions costs ``O(n)`` schema work, not a whole union per action.

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
            if known is not None and base_type(known[0]) != base_type(shape):
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


def base_type(shape: dict[str, Any]) -> dict[str, Any]:
    """A type without its constraints and without a ``null`` alternative (``T | None``)."""
    return _unconstrained(_non_null(shape) or shape)


def _non_null(shape: dict[str, Any]) -> dict[str, Any] | None:
    """``T`` for the ``anyOf: [T, null]`` of ``T | None`` (pydantic's spelling), else ``None``."""
    branches = shape.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and _NULL in branches):
        return None
    [branch] = [b for b in branches if b != _NULL]
    rest = {k: v for k, v in shape.items() if k != "anyOf"}
    return {**rest, **branch} if isinstance(branch, dict) else None


def _unconstrained(shape: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in shape.items() if k not in _CONSTRAINT_KEYS}


def _constraints(shape: dict[str, Any]) -> dict[str, Any]:
    plain = _non_null(shape) or shape
    return {k: v for k, v in plain.items() if k in _CONSTRAINT_KEYS}


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
    tool: str, actions: Sequence[Action], select_keys: Sequence[str] | None, *, lean: bool = False
) -> dict[str, Any]:
    """The input schema of a grouped tool (SPEC §13).

    ``action`` comes first with the actions in definition order, then the union of every
    action's parameters, each described with the actions that use and require it, then
    ``_cursor`` when an action pages, then ``_select``. Top-level ``required`` holds
    ``action`` and what every action requires.
    Parameter types were checked for conflicts when each action was defined (``ParamTypes``).
    The lean form (``_lean``) leaves the required-for notes to the tool description.
    """
    names = [a.name for a in actions]
    discriminator = {"type": "string", "enum": names}
    if not lean:  # the description says the same, in every prompt
        discriminator["description"] = ACTION_DESCRIPTION
    properties: dict[str, Any] = {DISCRIMINATOR: discriminator}
    params = [lean_params(a.params_schema) if lean else a.params_schema for a in actions]
    schemas, defs = hoist_defs(params)
    views: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    required_in: dict[str, list[str]] = {}
    for action, schema in zip(actions, schemas, strict=True):
        required = schema.get("required", [])
        for wire, prop in schema.get("properties", {}).items():
            views.setdefault(wire, []).append((action.name, prop))
            if wire in required:
                required_in.setdefault(wire, []).append(action.name)
    users = {wire: [name for name, _ in seen] for wire, seen in views.items()}
    for wire, seen in views.items():
        union, notes = _united([prop for _, prop in seen], [name for name, _ in seen])
        if lean:
            used = lean_usage(users[wire], required_in.get(wire, []), names)
            usage = " ".join(filter(None, (used, notes)))
            properties[wire] = _annotated(union, usage)
        else:
            properties[wire] = _described(union, users[wire], required_in.get(wire, []), notes)
    if paging := [a.name for a in actions if a.pages]:
        properties[CURSOR] = cursor_property(paging)
    if select_keys is not None:
        properties[SELECT] = select_property(select_keys)
    always = [w for w in users if len(required_in.get(w, ())) == len(actions)]
    # Sorted by name, as pydantic writes the $defs of one schema.
    built = _object(properties, [DISCRIMINATOR, *always], dict(sorted(defs.items())))
    return lean_schema(built) if lean else built


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


def _united(props: list[dict[str, Any]], names: list[str]) -> tuple[dict[str, Any], str]:
    """One property for every action's view of a parameter, and notes on what differs.

    The same type everywhere keeps its schema (defaults that differ are dropped). When
    the actions differ in optionality or constraints, the base type is advertised
    (nullable when any action accepts ``null``), constraints common to all stay, and the
    others are written in the description, per action.
    """
    united = dict(props[0])
    for prop in props[1:]:
        _fold(united, prop)
    if all(_shape(p) == _shape(props[0]) for p in props[1:]):
        return united, ""
    limits = [_constraints(p) for p in props]
    common = limits[0] if all(limit == limits[0] for limit in limits) else {}
    typed = {**base_type(_shape(props[0])), **common}
    notes = "" if common else _limit_notes(names, limits)
    keep = {k: v for k, v in united.items() if k in _ANNOTATION_KEYS}
    if any(_non_null(_shape(p)) is not None for p in props):
        return {**keep, "anyOf": [typed, dict(_NULL)]}, notes
    return {**keep, **typed}, notes


def _limit_notes(names: list[str], limits: list[dict[str, Any]]) -> str:
    """``In a: minimum 1. In b: maximum 5.``, for the actions that constrain a parameter."""
    notes = [
        f"In {name}: " + ", ".join(f"{k} {json.dumps(v)}" for k, v in limit.items()) + "."
        for name, limit in zip(names, limits, strict=True)
        if limit
    ]
    return " ".join(notes)


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


def _described(
    prop: dict[str, Any], used_by: list[str], required_in: list[str], notes: str = ""
) -> dict[str, Any]:
    """Puts first the parameter's description, followed by which actions use and need it."""
    if required_in == used_by:
        usage = f"Required for: {', '.join(used_by)}."
    elif not required_in:
        usage = f"Used by: {', '.join(used_by)}."
    else:
        usage = f"Used by: {', '.join(used_by)}. Required for: {', '.join(required_in)}."
    if notes:
        usage = f"{usage} {notes}"
    return _annotated(prop, usage)


def _annotated(prop: dict[str, Any], usage: str) -> dict[str, Any]:
    """The parameter with its own description first, then ``usage``."""
    own = str(prop.get("description", "")).strip()
    text = " ".join(filter(None, (sentence(own), usage)))
    rest = {k: v for k, v in prop.items() if k != "description"}
    return {"description": text, **rest} if text else rest


def sentence(text: str) -> str:
    """``text`` ending in a full stop unless it already ends in punctuation."""
    return text if not text or text[-1] in ".!?:" else text + "."
