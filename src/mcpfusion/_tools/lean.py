"""Lean tool definitions (``Fusion(definitions="lean")``): what costs tokens and says nothing.

Every prompt carries every tool definition, so each keyword is paid for on every turn.
The lean form leaves out what the model learns nowhere else from, and nothing more:

- an optional parameter is its plain type, not ``anyOf: [T, {"type": "null"}]`` with
  ``default: null`` (sending ``null`` is still accepted and means absent);
- ``type`` beside an ``enum`` whose values all have that type;
- the ``title`` pydantic derives from a class name, on a ``$defs`` entry of that name;
- the ``$defs`` indirection of a definition referenced once: it is written in place;
- annotation hints that repeat MCP's defaults or that MCP says are meaningless (a
  read-only tool's destructive and idempotent hints).

The tool description's action list, which names every action's required parameters, is
kept; the grouped schema then says which actions use a parameter only where that list
does not (an optional parameter some actions take).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

_NULL: Final = {"type": "null"}
_JSON_TYPES: Final = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def lean_params(schema: dict[str, Any]) -> dict[str, Any]:
    """An action's parameters schema with each optional parameter as its plain type."""
    required = set(schema.get("required", ()))
    properties = {
        name: prop if name in required else _plain(prop)
        for name, prop in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}


def _plain(prop: dict[str, Any]) -> dict[str, Any]:
    """``T`` for an optional ``T | None = None``: no null branch, no ``default: null``."""
    plain = {k: v for k, v in prop.items() if not (k == "default" and v is None)}
    branches = plain.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and _NULL in branches:
        [branch] = [b for b in branches if b != _NULL]
        if isinstance(branch, dict):
            del plain["anyOf"]
            plain.update(branch)
    return plain


def lean_schema(schema: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """A JSON Schema without what the lean form leaves out (see the module).

    ``name`` is the class name pydantic titled the schema with, if any.
    """
    lean: dict[str, Any] = _lean_node(schema, name)
    defs = lean.get("$defs")
    if not isinstance(defs, dict):
        return lean
    counts: dict[str, int] = {}
    _count_refs(lean, counts)
    once = {n for n in defs if counts.get(_DEFS + n) == 1 and _fits(lean, defs, n)}
    if not once:
        return lean
    kept = {n: _inlined(d, defs, once, (n,)) for n, d in defs.items() if n not in once}
    inlined = {k: _inlined(v, defs, once, ()) for k, v in lean.items() if k != "$defs"}
    return {**inlined, "$defs": kept} if kept else inlined


_DEFS: Final = "#/$defs/"


def _count_refs(node: Any, counts: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            counts[ref] = counts.get(ref, 0) + 1
        for value in node.values():
            _count_refs(value, counts)
    elif isinstance(node, list):
        for item in node:
            _count_refs(item, counts)


def _fits(node: Any, defs: dict[str, Any], name: str) -> bool:
    """Whether the one reference to ``name`` can take its definition's keywords in place.

    It can when its other keywords (a ``default``, a ``description``) are not the
    definition's own: the merged object then says exactly what the two said.
    """
    if isinstance(node, list):
        return all(_fits(item, defs, name) for item in node)
    if not isinstance(node, dict):
        return True
    if node.get("$ref") == _DEFS + name:
        definition = defs[name]
        return isinstance(definition, dict) and not (node.keys() - {"$ref"}) & definition.keys()
    return all(_fits(value, defs, name) for value in node.values())


def _inlined(node: Any, defs: dict[str, Any], once: set[str], path: tuple[str, ...]) -> Any:
    """``node`` with each bare reference to a definition in ``once`` replaced by it.

    ``path`` holds the definitions being written: one referring back to itself through
    others keeps its reference (and its definition: it is then referenced twice).
    """
    if isinstance(node, list):
        return [_inlined(item, defs, once, path) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        name = ref.removeprefix(_DEFS)
        if name in once and name not in path:
            siblings = {k: _inlined(v, defs, once, path) for k, v in node.items() if k != "$ref"}
            return {**_inlined(defs[name], defs, once, (*path, name)), **siblings}
    return {k: _inlined(v, defs, once, path) for k, v in node.items()}


def _lean_node(node: Any, name: str | None = None) -> Any:
    """``node`` without the keywords the lean form leaves out, recursively."""
    if isinstance(node, list):
        return [_lean_node(item) for item in node]
    if not isinstance(node, dict):
        return node
    lean: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            # Names here are property and definition names, never keywords.
            lean[key] = {k: _lean_node(v, k if key == "$defs" else None) for k, v in value.items()}
        else:
            lean[key] = _lean_node(value)
    if name is not None and lean.get("title") == name:
        del lean["title"]  # pydantic's class-name title on the definition of that name
    if _typed_enum(lean):
        del lean["type"]
    return lean


def _typed_enum(node: dict[str, Any]) -> bool:
    """Whether ``node`` has an ``enum`` whose values all have the JSON ``type`` beside it."""
    values, kind = node.get("enum"), node.get("type")
    if not (isinstance(values, list) and values and isinstance(kind, str)):
        return False
    types = _JSON_TYPES.get(kind)
    return types is not None and all(
        isinstance(v, types) and (kind == "boolean" or not isinstance(v, bool)) for v in values
    )


def lean_annotations(read_only: bool, destructive: bool, idempotent: bool) -> dict[str, bool]:
    """The tool annotations that differ from MCP's defaults and mean something."""
    if read_only:
        return {"readOnlyHint": True}  # destructive and idempotent hints are then moot
    found: dict[str, bool] = {}
    if not destructive:
        found["destructiveHint"] = False  # MCP assumes a tool may destroy
    if idempotent:
        found["idempotentHint"] = True
    return found


def lean_usage(used_by: Sequence[str], required_in: Sequence[str], every: Sequence[str]) -> str:
    """Which actions use a parameter, unless the tool description already says it.

    Nothing when every action uses it, or when every action using it requires it (the
    description lists each action's required parameters).
    """
    if list(used_by) in (list(every), list(required_in)):
        return ""
    return f"Used by: {', '.join(used_by)}."
