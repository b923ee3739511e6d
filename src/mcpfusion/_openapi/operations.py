"""The operations of an OpenAPI document: tag → tool, operationId → action, what they take."""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpfusion._errors import DefinitionError
from mcpfusion._openapi.document import json_schema, resolve

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
READ_ONLY: Final = frozenset({"get", "head", "options", "trace"})
"""Methods that change nothing upstream (RFC 9110's safe methods)."""
IDEMPOTENT: Final = frozenset({"get", "head", "options", "trace", "put", "delete"})
"""Methods a client may repeat: only these are retried."""
DESTRUCTIVE: Final = frozenset({"delete", "put", "patch"})
"""Methods that delete or overwrite what exists."""
DEFAULT_TAG: Final = "api"
"""The tool of operations without a tag."""
_JSON: Final = re.compile(r"^application/([\w.+-]+\+)?json")
_NOT_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Parameter:
    """One input of an operation.

    Attributes:
        name: the name in the document (``petId``, ``api-key``).
        location: ``path``, ``query``, ``header``, ``cookie`` or ``body``.
        schema: its JSON Schema, as the request direction sends it.
        required: whether the agent must send it.
        description: what it is, from the document.
    """

    name: str
    location: str
    schema: dict[str, Any]
    required: bool
    description: str


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: the action it becomes and the request it makes."""

    tool: str
    action: str
    method: str
    path: str
    description: str
    parameters: tuple[Parameter, ...]
    body_media: str | None
    response: dict[str, Any] | None
    """The JSON Schema of its successful JSON response, as the response direction reads it."""

    @property
    def read_only(self) -> bool:
        """Whether the method changes nothing upstream."""
        return self.method in READ_ONLY

    @property
    def destructive(self) -> bool:
        """Whether the method deletes or overwrites."""
        return self.method in DESTRUCTIVE

    @property
    def idempotent(self) -> bool:
        """Whether repeating the call has no further effect (so it may be retried)."""
        return self.method in IDEMPOTENT


def operations(document: Mapping[str, Any]) -> list[Operation]:
    """Every operation of the document, in document order.

    Raises:
        DefinitionError: if two operations of one tag get the same action name.
    """
    found: list[Operation] = []
    seen: set[tuple[str, str]] = set()
    for path, item in document["paths"].items():
        if not isinstance(item, dict):
            continue
        item = resolve(document, item)
        shared = item.get("parameters", [])
        for method in METHODS:
            spec = item.get(method)
            if not isinstance(spec, dict):
                continue
            operation = _operation(document, path, method, spec, shared)
            key = (operation.tool, operation.action)
            if key in seen:
                raise DefinitionError(
                    f"OpenAPI: two operations of tag '{operation.tool}' are both named "
                    f"'{operation.action}'; give them distinct operationIds"
                )
            seen.add(key)
            found.append(operation)
    return found


def _operation(
    document: Mapping[str, Any], path: str, method: str, spec: dict[str, Any], shared: Any
) -> Operation:
    tags = spec.get("tags") or [DEFAULT_TAG]
    tool = tool_name(str(tags[0]))
    action = action_name(spec.get("operationId"), method, path)
    summary = str(spec.get("summary") or "").strip()
    detail = str(spec.get("description") or "").strip()
    description = summary or detail.split("\n\n")[0]
    params: dict[tuple[str, str], Parameter] = {}
    for raw in [*(shared if isinstance(shared, list) else []), *spec.get("parameters", [])]:
        if isinstance(raw, dict) and "name" in raw and "in" in raw:
            param = Parameter(
                name=str(raw["name"]),
                location=str(raw["in"]),
                schema=json_schema(raw.get("schema", {}), "request"),
                required=bool(raw.get("required")) or raw["in"] == "path",
                description=str(raw.get("description") or ""),
            )
            params[(param.location, param.name)] = param  # the operation's own wins
    body_media, body = _body(spec.get("requestBody"))
    if body is not None:
        params[("body", "body")] = body
    return Operation(
        tool=tool,
        action=action,
        method=method,
        path=path,
        description=description,
        parameters=tuple(params.values()),
        body_media=body_media,
        response=_response(spec.get("responses")),
    )


def _body(spec: Any) -> tuple[str | None, Parameter | None]:
    """The request body as one ``body`` parameter: JSON first, then a form."""
    if not isinstance(spec, dict) or not isinstance(spec.get("content"), dict):
        return None, None
    content = spec["content"]
    media = next((m for m in content if _JSON.match(m)), None)
    if media is None:
        media = next((m for m in content if m == "application/x-www-form-urlencoded"), None)
    if media is None:
        return None, None  # binary uploads and XML: no argument an agent can send
    schema = json_schema((content[media] or {}).get("schema", {}), "request")
    description = str(spec.get("description") or "The request body.")
    return media, Parameter("body", "body", schema, bool(spec.get("required")), description)


def _response(responses: Any) -> dict[str, Any] | None:
    """The JSON Schema of the first successful JSON response (2xx, then ``default``)."""
    if not isinstance(responses, dict):
        return None
    codes = [*sorted(c for c in map(str, responses) if c.startswith("2")), "default"]
    for code in codes:
        spec = responses.get(code, responses.get(int(code) if code.isdigit() else code))
        if not isinstance(spec, dict) or not isinstance(spec.get("content"), dict):
            continue
        for media, body in spec["content"].items():
            if _JSON.match(media) and isinstance(body, dict) and "schema" in body:
                return json_schema(body["schema"], "response")
    return None


def tool_name(tag: str) -> str:
    """A tag as an MCP tool name: ``Fine-tuning`` → ``fine-tuning``, spaces to ``_``."""
    name = _NOT_NAME.sub("_", tag.strip().lower()).strip("_")[:64]
    return name or DEFAULT_TAG


def action_name(operation_id: Any, method: str, path: str) -> str:
    """The operationId when MCP allows it as a name, else ``{method}_{path words}``."""
    if isinstance(operation_id, str) and operation_id:
        name = _NOT_NAME.sub("_", operation_id).strip("_")
    else:
        words = [w for w in re.split(r"[^A-Za-z0-9]+", path) if w]
        name = "_".join([method, *words])
    return name[:64] or method


def python_name(name: str, taken: set[str]) -> str:
    """A Python identifier for a parameter name (``api-key`` → ``api_key``), unique."""
    base = re.sub(r"\W", "_", name).strip("_") or "param"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"p_{base}"
    candidate = base
    while candidate in taken:
        candidate += "_"
    taken.add(candidate)
    return candidate
