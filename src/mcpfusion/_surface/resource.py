"""Resources: fixed URIs and ``{name}`` templates, read through a Presenter (SPEC §2 order)."""

from __future__ import annotations

import copy
import re
import urllib.parse
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, Literal

from mcpfusion._errors import DefinitionError
from mcpfusion._present.content import EmbeddedResource, Image, ResourceLink
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.statesync import state_name
from mcpfusion._surface.completion import Completer, completer
from mcpfusion._tools.action import Action

CacheScope = Literal["public", "private"]

_VARIABLE: Final = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*)\}")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
FORMAT_MIME: Final = {
    "json": "application/json",
    "compact": "application/json",
    "toon": "text/toon",
}
"""The MIME type of a data block, by its format (SPEC §3, §10)."""
TEXT_MIME: Final = "text/plain"
BINARY_MIME: Final = "application/octet-stream"


class Resource:
    """One resource or resource template of an app. Made by ``@app.resource(uri)``.

    A fixed URI (``"billing://summary"``) is listed by ``resources/list``; a URI with
    ``{name}`` variables (``"billing://invoices/{invoice_id}"``) is a template, listed by
    ``resources/templates/list``, whose variables are the handler's parameters, validated
    like an action's. The handler may also take the context and the app's state.

    Attributes:
        uri: the URI, or the URI template.
        name: the name clients show (the handler's name unless given).
        variables: the template's variable names, in order (empty for a fixed URI).
        presenter: the Presenter its data is read through, if any.
        mime_type: the declared MIME type, if any.
        requires: the scopes a caller needs to list and read it.
        takes_context: whether the handler receives the request context (what it
            answers may depend on who asks).
        cache_scope: the SEP-2549 scope of its reads: ``"private"`` when it takes the
            context or requires scopes, unless told.
        ttl_ms: how long a read stays fresh, in milliseconds (``fresh_for`` seconds).
    """

    def __init__(
        self,
        uri: str,
        handler: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str = "",
        returns: Presenter | None = None,
        mime_type: str | None = None,
        requires: Collection[str] = (),
        fresh_for: float = 0,
        cache_scope: CacheScope | None = None,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        context_type: type | None = None,
        state_type: type | None = None,
        style: Any = None,
    ) -> None:
        if not isinstance(uri, str) or not _SCHEME.match(uri):
            raise DefinitionError(f"resource URI {uri!r} must start with a scheme, e.g. 'app://'")
        owner = f"resource {uri!r}"
        self.variables = tuple(_VARIABLE.findall(uri))
        if len(set(self.variables)) != len(self.variables):
            raise DefinitionError(f"{owner}: a variable appears twice")
        if "{" in _VARIABLE.sub("", uri) or "}" in _VARIABLE.sub("", uri):
            raise DefinitionError(f"{owner}: variables are written {{name}}, letters first")
        if not isinstance(description, str):
            raise DefinitionError(f"{owner}: description must be a str")
        if mime_type is not None and (not isinstance(mime_type, str) or "/" not in mime_type):
            raise DefinitionError(f"{owner}: mime_type must be a MIME type such as 'text/plain'")
        if isinstance(fresh_for, bool) or not isinstance(fresh_for, int | float) or fresh_for < 0:
            raise DefinitionError(f"{owner}: fresh_for is a number of seconds, 0 or more")
        if cache_scope not in (None, "public", "private"):
            raise DefinitionError(f"{owner}: cache_scope is 'public', 'private' or None")
        self.uri = uri
        self.name = name or getattr(handler, "__name__", "") or uri
        self.title = title
        self.description = description or _first_line(handler)
        self.presenter = returns
        self.mime_type = mime_type
        self.meta = meta
        options: dict[str, Any] = {} if style is None else {"style": style}
        try:
            self.action = Action(
                "resource",
                "read",
                handler,
                returns=returns,
                context_type=context_type,
                state_type=state_type,
                requires=requires,
                timeout=timeout,
                **options,
            )
        except DefinitionError as exc:
            raise DefinitionError(f"{owner}: {str(exc).removeprefix('resource/read: ')}") from None
        params = {p.wire for p in self.action.params}
        if params != set(self.variables):
            raise DefinitionError(
                f"{owner}: the handler's parameters ({', '.join(sorted(params)) or 'none'}) "
                f"must be the URI's variables ({', '.join(self.variables) or 'none'})"
            )
        self.requires = self.action.requires
        self.takes_context = bool(self.action.injected)
        self.cache_scope: CacheScope = cache_scope or (
            "private" if self.takes_context or self.requires else "public"
        )
        self.ttl_ms = round(fresh_for * 1000)
        self._pattern = _pattern(uri) if self.variables else None
        self.completers: dict[str, Completer] = {}
        self._types = (context_type, state_type)

    def __repr__(self) -> str:
        return f"Resource({self.uri!r})"

    @property
    def is_template(self) -> bool:
        """Whether the URI has variables (listed by ``resources/templates/list``)."""
        return bool(self.variables)

    @property
    def state_name(self) -> str:
        """``scheme.first-name`` (SPEC §15, ``_statesync.state_name``):
        ``billing://invoices/{id}`` is ``billing.invoices``; the scheme alone when the URI
        names nothing fixed after it (``x://{id}``)."""
        return state_name(self.uri) or self.uri.partition("://")[0].lower()

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values when ``uri`` is this resource's (decoded), else ``None``."""
        if self._pattern is None:
            return {} if uri == self.uri else None
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {key: urllib.parse.unquote(value) for key, value in found.groupdict().items()}

    def complete(self, variable: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the completion of a template variable: ``@resource.complete("id")``.

        The function takes ``value`` (what the user typed so far), optionally
        ``arguments`` (the other variables already chosen) and the context or the app's
        state, and returns the suggestions (at most 100 are sent).

        Raises:
            DefinitionError: if ``variable`` is not one of the template's.
        """
        if variable not in self.variables:
            raise DefinitionError(
                f"resource {self.uri!r} has no variable '{variable}'; "
                f"variables: {', '.join(self.variables) or 'none'}"
            )

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            owner = f"completion of {variable!r} in {self.uri!r}"
            self.completers[variable] = completer(
                owner, fn, *self._types, timeout=self.action.timeout
            )
            return fn

        return register

    def listing(self) -> dict[str, Any]:
        """The MCP ``Resource`` or ``ResourceTemplate`` object, JSON-compatible."""
        key = "uriTemplate" if self.variables else "uri"
        found: dict[str, Any] = {key: self.uri, "name": self.name}
        if self.title:
            found["title"] = self.title
        if self.description:
            found["description"] = self.description
        mime = self.listed_mime()
        if mime:
            found["mimeType"] = mime
        if self.meta is not None:
            found["_meta"] = copy.deepcopy(dict(self.meta))
        return found

    def listed_mime(self) -> str | None:
        """What ``mimeType`` the list announces: the declared one, else the data format's."""
        if self.mime_type is not None:
            return self.mime_type
        if self.presenter is not None:
            style = self.presenter.style.over(self.action.style)
            return FORMAT_MIME[style.format]
        return None

    def contents(self, uri: str, value: Any, response: ToolResponse | None) -> list[dict[str, Any]]:
        """The ``contents`` of a read: bytes as a blob, else the response's blocks in order.

        The data block comes first, typed by its format (or the declared MIME type for a
        handler's own text); the other blocks (UI, rules, suggestions) follow as text, then
        images, sounds and embedded resources.
        """
        if isinstance(value, bytes | bytearray | memoryview):
            return [EmbeddedResource(uri, blob=bytes(value), mime_type=self.mime_type).contents()]
        assert response is not None
        out: list[dict[str, Any]] = []
        for index, block in enumerate(response.blocks):
            mime = self._data_mime(value) if index == 0 else TEXT_MIME
            out.append({"uri": uri, "mimeType": mime, "text": block})
        for item in response.attachments:
            if isinstance(item, EmbeddedResource):
                out.append(item.contents())
            elif isinstance(item, ResourceLink):
                continue  # a link is not contents; a read cannot carry it
            else:
                # Alone, an image is the resource; after text, a part of it.
                kind = "image" if isinstance(item, Image) else "audio"
                where = f"{uri}#{kind}" if response.blocks else uri
                data = item.to_mcp()["data"]
                out.append({"uri": where, "mimeType": item.mime_type, "blob": data})
        return out

    def _data_mime(self, value: Any) -> str:
        if isinstance(value, str):
            return self.mime_type or TEXT_MIME
        if self.presenter is not None:
            return self.listed_mime() or FORMAT_MIME["json"]
        return self.mime_type or FORMAT_MIME[self.action.style.format]


def _pattern(uri: str) -> re.Pattern[str]:
    parts: list[str] = []
    last = 0
    for found in _VARIABLE.finditer(uri):
        parts.append(re.escape(uri[last : found.start()]))
        parts.append(f"(?P<{found.group(1)}>[^/?#]+)")
        last = found.end()
    parts.append(re.escape(uri[last:]))
    return re.compile("".join(parts))


def _first_line(handler: Callable[..., Any]) -> str:
    doc = getattr(handler, "__doc__", None) or ""
    return doc.strip().split("\n", 1)[0].strip()
