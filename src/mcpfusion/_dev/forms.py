"""The console's forms: one per action, read from a tool's MCP input schema."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from mcpfusion._dev.target import parse_arguments

FieldKind = Literal["select", "checkboxes", "boolean", "integer", "number", "text", "json"]

ACTION: Final = "action"
"""The argument that names the action of a grouped tool."""

# A grouped tool's parameter description ends by naming the actions that use it
# ("Used by: a, b." and/or "Required for: a.").
_USAGE = re.compile(
    r"(?:^|\s)(?:Used by: (?P<used>[^.:]+)\.)?\s*(?:Required for: (?P<required>[^.:]+)\.)?\s*$"
)


@dataclass(frozen=True, slots=True)
class FormField:
    """One input of a form: how to ask for a parameter."""

    name: str
    kind: FieldKind
    required: bool = False
    description: str = ""
    options: tuple[str, ...] = ()
    """The choices of a ``select`` or ``checkboxes`` field."""
    default: str = ""
    """The schema's default as JSON text, shown as a placeholder (``""`` when none)."""
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True, slots=True)
class ActionForm:
    """The form calling one action of a tool (``action`` is ``None`` for a tool without)."""

    tool: str
    action: str | None
    description: str = ""
    fields: tuple[FormField, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The form as JSON for the console page."""
        return asdict(self)


def _names(text: str | None) -> set[str]:
    return {name.strip() for name in (text or "").split(",") if name.strip()}


def _usage(description: str) -> tuple[set[str] | None, set[str]]:
    """The actions a grouped parameter serves and those requiring it (``None``: all)."""
    found = _USAGE.search(description)
    if found is None or not (found["used"] or found["required"]):
        return None, set()
    required = _names(found["required"])
    return (_names(found["used"]) | required), required


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
        if isinstance(target, Mapping):
            return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _branch(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema without its ``null`` alternative, when only one other remains."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        branches = [_resolve(b, root) for b in schema.get(key) or () if isinstance(b, Mapping)]
        kept = [b for b in branches if b.get("type") != "null"]
        if branches and len(kept) == 1:
            return {**kept[0], **{k: v for k, v in schema.items() if k != key}}
    return schema


def _field(
    name: str, prop: Mapping[str, Any], root: Mapping[str, Any], required: bool
) -> FormField:
    schema = _branch(prop, root)
    kind: FieldKind = "json"
    options: tuple[str, ...] = ()
    items = _resolve(schema.get("items") or {}, root)
    if isinstance(schema.get("enum"), list):
        kind, options = "select", tuple(str(v) for v in schema["enum"])
    elif schema.get("type") == "array" and isinstance(items.get("enum"), list):
        kind, options = "checkboxes", tuple(str(v) for v in items["enum"])
    elif schema.get("type") in ("boolean", "integer", "number"):
        kind = schema["type"]
    elif schema.get("type") == "string":
        kind = "text"
    default = json.dumps(prop["default"]) if prop.get("default") is not None else ""
    return FormField(
        name=name,
        kind=kind,
        required=required,
        description=str(prop.get("description", "")),
        options=options,
        default=default,
        minimum=schema.get("minimum"),
        maximum=schema.get("maximum"),
    )


def action_forms(tool: Mapping[str, Any]) -> list[ActionForm]:
    """A form per action of ``tool`` (an MCP tool definition), in the ``action`` enum's order.

    A grouped tool's parameters go to the actions their description names ("Used by:",
    "Required for:"); a parameter that names none goes to every action.
    """
    schema: Mapping[str, Any] = tool.get("inputSchema") or {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    always_required = set(schema.get("required") or ())
    action_prop = properties.get(ACTION)
    actions: Sequence[str | None] = [None]
    if isinstance(action_prop, Mapping) and isinstance(action_prop.get("enum"), list):
        actions = [str(a) for a in action_prop["enum"]]
    forms = []
    for action in actions:
        fields = []
        for name, prop in properties.items():
            if (name == ACTION and action is not None) or not isinstance(prop, Mapping):
                continue
            used_by, required_in = (
                (None, set()) if action is None else _usage(str(prop.get("description", "")))
            )
            if used_by is not None and action not in used_by:
                continue
            required = name in always_required or action in required_in
            fields.append(_field(name, prop, schema, required))
        forms.append(
            ActionForm(str(tool["name"]), action, _action_line(tool, action), tuple(fields))
        )
    return forms


def _action_line(tool: Mapping[str, Any], action: str | None) -> str:
    """The action's line of the tool description (``- name: …``), else ``""``."""
    if action is None:
        return ""
    for line in str(tool.get("description", "")).splitlines():
        if line.startswith(f"- {action}: "):
            return line.removeprefix(f"- {action}: ")
    return ""


def form_arguments(
    tool: Mapping[str, Any], action: str | None, values: Mapping[str, str | list[str]]
) -> dict[str, Any]:
    """The call's arguments from a submitted form, read the way ``mcpfusion call`` reads them.

    Empty values are left out; a list (checkboxes) is sent as a JSON array.

    Raises:
        UsageError: if a value is malformed for the command line's rules.
    """
    words = [] if action is None else [action]
    for name, value in values.items():
        if isinstance(value, list):
            if value:
                words.append(f"{name}={json.dumps(value)}")
        elif value.strip():
            words.append(f"{name}={value}")
    return parse_arguments(tool, words)
