"""Schema dialects: input schemas as each model provider's tool-calling API accepts them.

MCP sends JSON Schema 2020-12; the providers accept less. ``in_dialect`` rewrites a tool's
``inputSchema`` for one of them, keeping the meaning where the dialect can say it and
moving it into the ``description`` where it cannot (what the server still checks):

- ``"openai"`` (strict mode): every object closed (``additionalProperties: false``) and
  every property required; an optional parameter is nullable (the server reads ``null``
  as absent), an optional field deeper in is required with its default in its
  description; ``$ref`` beside other keywords written in place; keywords strict mode
  rejects (``minLength``, ``maxLength``, ``uniqueItems``, ``default``, ...) described.
- ``"gemini"`` (the OpenAPI 3.0 subset of function declarations): every ``$ref`` written
  in place (a recursive one ends in an object described by name), ``null`` branches
  become ``nullable``, ``oneOf`` becomes ``anyOf``, ``const`` a one-value ``enum``,
  enums of numbers and unsupported formats described, and nothing outside the subset
  (``additionalProperties``, ``exclusiveMinimum``, ``uniqueItems``, ...) is sent.
- ``"anthropic"``: JSON Schema as it is, an object at the top (what MCP requires too).

``outputSchema`` stays JSON Schema in every dialect: MCP clients validate
``structuredContent`` with it, and no provider's tool-calling API reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

from mcpfusion._errors import DefinitionError

Dialect = Literal["mcp", "openai", "gemini", "anthropic"]
"""Whose rules tool definitions follow: MCP's JSON Schema as written, or a provider's."""

DIALECTS: Final[tuple[Dialect, ...]] = get_args(Dialect)

_NULL: Final = {"type": "null"}
_DEFS: Final = "#/$defs/"

_OPENAI_DROPPED: Final = frozenset(
    {
        "minLength", "maxLength", "uniqueItems", "default", "examples", "patternProperties",
        "propertyNames", "minProperties", "maxProperties", "unevaluatedProperties",
        "unevaluatedItems", "contains", "minContains", "maxContains", "dependentRequired",
        "dependentSchemas", "not", "if", "then", "else", "readOnly", "writeOnly",
        "deprecated", "contentEncoding", "contentMediaType", "discriminator", "$schema", "$id",
    }
)  # fmt: skip
"""Keywords OpenAI's strict mode does not support: their meaning goes into the description."""

_OPENAI_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

_GEMINI_KEPT: Final = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "properties",
        "required", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength",
        "pattern", "anyOf", "default", "example", "propertyOrdering", "minProperties",
        "maxProperties",
    }
)  # fmt: skip
"""The keywords of Gemini's function-declaration schema (an OpenAPI 3.0 subset)."""

_GEMINI_FORMATS: Final = {
    "string": frozenset({"date-time", "enum"}),
    "integer": frozenset({"int32", "int64"}),
    "number": frozenset({"float", "double"}),
}

_SILENT: Final = frozenset(
    {
        "$defs",
        "$ref",
        "$schema",
        "$id",
        "additionalProperties",
        "title",
        "readOnly",
        "discriminator",
    }
)
"""Dropped keywords whose meaning is kept otherwise (or is none the model needs)."""


def in_dialect(tool: dict[str, Any], dialect: Dialect) -> dict[str, Any]:
    """``tool`` (an MCP ``Tool`` object) with its ``inputSchema`` in ``dialect``; a new dict.

    Raises:
        ValueError: on an unknown dialect.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"schema dialect is one of {DIALECTS}; got {dialect!r}")
    if dialect == "mcp":
        return tool
    schema = tool["inputSchema"]
    if dialect == "openai":
        converted = _Strict(schema).node(schema, top=True)
    elif dialect == "gemini":
        converted = _Gemini(schema).node(schema, ())
    else:
        converted = {**schema, "type": "object"}
    return {**tool, "inputSchema": converted}


def _noted(node: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``node`` with ``notes`` (what its dialect cannot say) appended to its description."""
    if not notes:
        return node
    text = "; ".join(notes) + "."
    text = text[0].upper() + text[1:]
    described = node.get("description")
    node["description"] = f"{described} {text}" if described else text
    return node


def _phrase(key: str, value: Any) -> str | None:
    """How a dropped keyword reads in a description; ``None`` when it says nothing."""
    if key in _SILENT:
        return None
    phrases = {
        "default": None if value is None else f"default {json.dumps(value)}",
        "minLength": f"at least {value} characters",
        "maxLength": f"at most {value} characters",
        "uniqueItems": "no repeated items" if value else None,
        "exclusiveMinimum": f"more than {value}",
        "exclusiveMaximum": f"less than {value}",
        "multipleOf": f"a multiple of {value}",
        "format": f"format {value}",
        "examples": f"e.g. {', '.join(json.dumps(v) for v in value)}"
        if isinstance(value, list)
        else None,
        "deprecated": "deprecated" if value else None,
    }
    if key in phrases:
        return phrases[key]
    return f"{key} {json.dumps(value)}"


def _map_phrase(values: dict[str, Any]) -> str:
    """How an object of any keys (``additionalProperties`` a schema) reads in words."""
    return f"an object of any keys, each value {json.dumps(values)}"


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """The definition a local ``#/$defs/`` reference names, if any."""
    if not ref.startswith(_DEFS):
        return None
    found = root.get("$defs", {}).get(ref.removeprefix(_DEFS))
    return found if isinstance(found, dict) else None


def _accepts_null(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    branches = node.get("anyOf") or node.get("oneOf") or []
    return kind == "null" or (isinstance(kind, list) and "null" in kind) or _NULL in branches


class _Strict:
    """One schema rewritten for OpenAI's strict mode."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def node(self, node: Any, *, top: bool = False) -> Any:
        if isinstance(node, list):
            return [self.node(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1 and (found := _resolve(self.root, ref)):
            # Strict mode takes no keyword beside a $ref: the definition is written in place.
            merged = {**found, **{k: v for k, v in node.items() if k != "$ref"}}
            return self.node(merged, top=top)
        notes: list[str] = []
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _OPENAI_DROPPED:
                if (phrase := _phrase(key, value)) is not None:
                    notes.append(phrase)
            elif key == "format" and value not in _OPENAI_FORMATS:
                notes.append(f"format {value}")
            elif key == "oneOf":
                out["anyOf"] = self.node(value)
            elif key == "allOf" and isinstance(value, list) and len(value) == 1:
                out.update(self.node(value[0]))
            elif key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {name: self.node(v) for name, v in value.items()}
            elif key == "additionalProperties":
                if isinstance(value, dict):  # a map: strict mode closes every object
                    notes.append(_map_phrase(value))
            elif key == "const":
                out["enum"] = [value]
            else:
                out[key] = self.node(value)
        if out.get("type") == "object" or "properties" in out:
            out["additionalProperties"] = False
            properties: dict[str, Any] = out.setdefault("properties", {})
            required = set(node.get("required", ()))
            for name, prop in properties.items():
                # Deeper in, an optional field is required with its default described.
                if name in required or _accepts_null(prop) or not top:
                    continue
                # A parameter: the server reads null as absent (``Action.parse``).
                described = {k: v for k, v in prop.items() if k != "description"}
                nullable: dict[str, Any] = {"anyOf": [described, dict(_NULL)]}
                if "description" in prop:
                    nullable["description"] = prop["description"]
                properties[name] = nullable
            out["required"] = list(properties)
        return _noted(out, notes)


class _Gemini:
    """One schema rewritten into Gemini's function-declaration subset."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def node(self, node: Any, path: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix(_DEFS)
            found = _resolve(self.root, ref)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if found is None or name in path:  # recursive: the model reads its name only
                return _noted({"type": "object", **siblings}, [f"a {name}, as above"])
            return self.node({**found, **siblings}, (*path, name))
        notes: list[str] = []
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: self.node(v, path) for name, v in value.items()}
            elif key == "items" and isinstance(value, dict):
                out[key] = self.node(value, path)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                branches = [self.node(v, path) for v in value if v != _NULL]
                if len(branches) < len(value):
                    out["nullable"] = True
                if len(branches) == 1:
                    out.update({k: v for k, v in branches[0].items() if k not in out})
                elif branches:
                    out["anyOf"] = branches
            elif key == "allOf" and isinstance(value, list):
                for part in value:
                    out.update(self.node(part, path))
            elif key == "const":
                out["enum"] = [value]
            elif key == "type" and isinstance(value, list):
                kinds = [k for k in value if k != "null"]
                if len(kinds) < len(value):
                    out["nullable"] = True
                if len(kinds) == 1:
                    out["type"] = kinds[0]
                else:
                    out["anyOf"] = [{"type": k} for k in kinds]
            elif key == "additionalProperties" and isinstance(value, dict):
                notes.append(_map_phrase(value))
            elif key in _GEMINI_KEPT:
                out[key] = value
            elif (phrase := _phrase(key, value)) is not None:
                notes.append(phrase)
        enum = out.get("enum")
        if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
            # Gemini's enums are strings only: other values are told, and checked server-side.
            del out["enum"]
            notes.append("one of " + ", ".join(json.dumps(v) for v in enum))
        elif isinstance(enum, list) and "type" not in out:
            out["type"] = "string"
        kind = out.get("type")
        fmt = out.get("format")
        if fmt is not None and fmt not in _GEMINI_FORMATS.get(
            kind if isinstance(kind, str) else "", ()
        ):
            del out["format"]
            notes.append(f"format {fmt}")
        return _noted(out, notes)


KNOWN_CLIENTS: Final[Mapping[str, Dialect]] = MappingProxyType(
    {
        "claude-ai": "anthropic",  # Claude desktop and Claude.ai
        "claude-code": "anthropic",
        "codex-mcp-client": "openai",  # Codex CLI
        "openai-mcp": "openai",  # ChatGPT's connectors
        "gemini-cli-mcp-client": "gemini",  # Gemini CLI
    }
)
"""The ``clientInfo.name`` of known hosts, and the dialect of the model behind each."""


def client_dialects(owner: str, given: Mapping[str, Dialect] | None) -> dict[str, Dialect]:
    """``KNOWN_CLIENTS`` with ``given`` laid over it (``"mcp"`` turns a known name off).

    Raises:
        DefinitionError: on a name that is not a str or a dialect that is not known.
    """
    if given is None:
        return dict(KNOWN_CLIENTS)
    if not isinstance(given, Mapping):
        raise DefinitionError(f"{owner}: client_dialects maps clientInfo names to dialects")
    for name, dialect in given.items():
        if not isinstance(name, str) or not name:
            raise DefinitionError(f"{owner}: a client_dialects key is a clientInfo name")
        check_dialect(owner, dialect, f"client_dialects[{name!r}]")
    return {**KNOWN_CLIENTS, **given}


def check_dialect(owner: str, dialect: object, option: str = "schema_dialect") -> Dialect:
    """``dialect`` if it is one of ``DIALECTS``.

    Raises:
        DefinitionError: naming the option and the dialects.
    """
    for known in DIALECTS:
        if dialect == known:
            return known
    raise DefinitionError(f"{owner}: {option} is one of {', '.join(DIALECTS)}; got {dialect!r}")
