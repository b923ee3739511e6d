"""An app whose tools are an OpenAPI document's operations, served live against the API."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx2
from pydantic import AfterValidator, Field, WithJsonSchema

from mcpfusion._app.app import Fusion
from mcpfusion._errors import DefinitionError
from mcpfusion._openapi.auth import Credentials
from mcpfusion._openapi.document import load_document
from mcpfusion._openapi.operations import Operation, Parameter, operations, python_name
from mcpfusion._openapi.presenters import response_presenter
from mcpfusion._openapi.upstream import MAX_BYTES, Upstream
from mcpfusion._tools.context import Context
from mcpfusion._tools.schema import DISCRIMINATOR, base_type, type_of

DEFAULT_LIMIT = 100
"""Rows of a list response an agent sees unless ``limit=`` says otherwise."""
PLACEHOLDER_URL = "http://upstream.invalid"
_FORBIDDEN = {"header": re.compile(r"[\x00-\x1f\x7f]"), "cookie": re.compile(r"[\x00-\x1f\x7f;]")}
"""What a header or cookie value may not hold (in a cookie, ``;`` starts another)."""
"""The base URL of an app built only to be inspected: no request can reach it."""


def from_openapi(
    source: str | Path | Mapping[str, Any],
    *,
    base_url: str | None = None,
    auth: Credentials | None = None,
    name: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    limit: int | None = DEFAULT_LIMIT,
    max_bytes: int = MAX_BYTES,
    headers: Mapping[str, str] | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    exposition: Literal["grouped", "flat"] = "grouped",
) -> Fusion:
    """Builds an app from an OpenAPI 3.x document: a grouped tool per tag, an action per
    operation, each calling the API live.

    Parameters and request bodies are advertised and validated with the document's
    schemas; a JSON response goes through a Presenter whose whitelist is the response
    schema (``writeOnly`` and undeclared fields never reach the agent); GET, HEAD, OPTIONS
    are ``read_only``, DELETE, PUT, PATCH ``destructive``.

    Args:
        source: the document: a ``.json``/``.yaml`` path or a dict.
        base_url: where the API lives; the document's first absolute server URL by default.
        auth: an ``ApiKey`` or ``Bearer`` sent with every request.
        name: the app's name; the document's title by default.
        timeout: seconds for each attempt of a request.
        retries: further attempts of a GET, HEAD, OPTIONS, PUT or DELETE after a connection
            failure or a 502/503/504; POST and PATCH are never repeated.
        limit: the most rows of a list response the agent sees (the Presenters' limit;
            ``None`` for all).
        max_bytes: the largest response body read (10 MB); a larger one is an
            ``UPSTREAM_TOO_LARGE`` error.
        headers: headers sent with every request.
        transport: an ``httpx2`` transport (tests serving the API in-process).
        exposition: ``"grouped"`` (a tool per tag) or ``"flat"`` (a tool per operation,
            named ``{tag}_{operationId}``).

    Raises:
        DefinitionError: on a document that cannot be read, no base URL, or bad options.
    """
    document = load_document(source)
    found = document.get("info")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    upstream = Upstream(
        base_url or server_url(document),
        credentials=auth,
        timeout=timeout,
        retries=retries,
        max_bytes=max_bytes,
        headers=headers,
        transport=transport,
    )
    app = Fusion(
        name or str(info.get("title") or "openapi"),
        version=str(info.get("version") or "0.1.0"),
    )
    tag_text = {
        str(t.get("name")): str(t.get("description") or "")
        for t in document.get("tags", [])
        if isinstance(t, dict)
    }
    tools: dict[str, Any] = {}
    known: dict[str, dict[str, Any]] = {}
    for operation in operations(document):
        tool = tools.get(operation.tool)
        if tool is None:
            tag = next((t for t in tag_text if t.lower() == operation.tool), operation.tool)
            tool = tools[operation.tool] = app.tool(
                operation.tool,
                description=tag_text.get(tag) or f"The {tag} operations.",
                exposition=exposition,
            )
            known[operation.tool] = {}
        handler = _handler(upstream, operation, known[operation.tool])
        tool.action(
            operation.action,
            description=operation.description or f"{operation.method.upper()} {operation.path}",
            returns=response_presenter(
                f"{operation.tool}.{operation.action}", operation.response, limit
            ),
            read_only=operation.read_only,
            destructive=operation.destructive,
            idempotent=operation.idempotent,
        )(handler)
    return app


def server_url(document: Mapping[str, Any]) -> str:
    """The document's first absolute server URL without variables.

    Raises:
        DefinitionError: if it names none.
    """
    for server in document.get("servers") or []:
        url = server.get("url") if isinstance(server, dict) else None
        if isinstance(url, str) and url.startswith(("http://", "https://")) and "{" not in url:
            return url
    raise DefinitionError(
        "the OpenAPI document names no absolute server URL; pass base_url= (--base-url)"
    )


def _handler(
    upstream: Upstream, operation: Operation, known: dict[str, dict[str, Any]]
) -> Callable[..., Any]:
    """The action's handler: its signature is the operation's parameters, by document name.

    ``known`` holds the tool's argument types so far: a parameter whose name another
    action uses with another type is renamed ``{action}_{name}`` (a grouped tool has one
    type per argument name).
    """
    taken = {DISCRIMINATOR}
    signature: list[inspect.Parameter] = []
    annotations: dict[str, Any] = {}
    wires: dict[str, str] = {}  # python name -> document name
    used: set[str] = {DISCRIMINATOR}
    for param in sorted(operation.parameters, key=lambda p: not p.required):
        schema = _advertised(param)
        wire = param.name
        shape = base_type(type_of(schema, {}))
        if wire in used or wire.startswith("_") or (wire in known and known[wire] != shape):
            wire = f"{operation.action}_{param.name.lstrip('_')}"
        used.add(wire)
        known.setdefault(wire, shape)
        py = python_name(wire, taken)
        wires[py] = param.name
        annotations[py] = Annotated[
            Any,
            WithJsonSchema(schema),
            AfterValidator(_checker(schema, param.location)),
            Field(alias=wire),
        ]
        default = inspect.Parameter.empty if param.required else None
        signature.append(inspect.Parameter(py, inspect.Parameter.KEYWORD_ONLY, default=default))

    context = ""
    if upstream.per_caller:  # the token depends on the caller: the handler takes the context
        context = python_name("ctx", taken)
        annotations[context] = Context
        signature.append(inspect.Parameter(context, inspect.Parameter.KEYWORD_ONLY))

    async def call(**kwargs: Any) -> Any:
        identity = kwargs.pop(context).identity if context else None
        arguments = {wires[py]: value for py, value in kwargs.items()}
        return await upstream.send(operation, arguments, identity)

    call.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
    call.__annotations__ = annotations
    call.__name__ = operation.action
    return call


def _advertised(param: Parameter) -> dict[str, Any]:
    schema = dict(param.schema)
    if param.description and "description" not in schema:
        schema["description"] = param.description
    return schema


def _checker(schema: dict[str, Any], location: str) -> Callable[[Any], Any]:
    """A validator of one argument against its document schema (Draft 2020-12).

    A header or cookie value also may not hold control characters: a line break would
    start a header of the agent's choosing.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    forbidden = _FORBIDDEN.get(location)

    def check(value: Any) -> Any:
        if forbidden is not None and forbidden.search(str(value)):
            raise ValueError(
                f"a {location} value cannot hold control characters"
                + (" or ';'" if location == "cookie" else "")
            )
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is not None:
            where = "/".join(map(str, error.absolute_path))
            raise ValueError((f"at {where}: " if where else "") + error.message[:300])
        return value

    return check
