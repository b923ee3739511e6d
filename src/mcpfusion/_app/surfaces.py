"""The app's resources, prompts and MCP App: their definitions and lists (a base of ``Fusion``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from mcpfusion._errors import DefinitionError
from mcpfusion._present.presenter import Presenter
from mcpfusion._renderer import APP_MIME_TYPE
from mcpfusion._surface.prompt import Prompt
from mcpfusion._surface.resource import CacheScope, Resource
from mcpfusion._surface.surface import Surface
from mcpfusion._surface.ui_app import (
    APP_META,
    DEFAULT_URI,
    SCRIPT_MIME,
    diagram_library,
    parts_template,
    renderer,
)


class Surfaces:
    """``Fusion``'s resources, prompts and MCP App, defined into its ``Surface``.

    A base class of ``Fusion`` only: it reads the app's name, its surface and its
    definition check, which ``Fusion`` sets up.
    """

    name: str
    surface: Surface
    ui_app_uri: str | None
    _defining_check: Callable[[], None]

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str = "",
        returns: Presenter | None = None,
        mime_type: str | None = None,
        requires: Collection[str] = (),
        fresh_for: float = 0,
        cache_scope: CacheScope | None = None,
        timeout: float | None = None,
    ) -> Callable[[Callable[..., Any]], Resource]:
        """Defines a resource read by its handler: ``@app.resource("billing://invoices/{id}")``.

        A URI with ``{name}`` variables is a template: the handler's parameters are its
        variables, validated like an action's. What the handler returns is sent like an
        action's value (SPEC §13): through ``returns`` (a Presenter) when given, its blocks
        as the contents in SPEC §2 order, the data block first; ``bytes`` as a blob.

        Args:
            uri: the fixed URI or the URI template.
            name: the name clients show; the handler's name unless given.
            title: a human-readable title.
            description: what it holds; the handler's first docstring line unless given.
            returns: the Presenter its data goes through.
            mime_type: the MIME type it declares (of the data, for a Presenter's).
            requires: the scopes a caller needs to list and read it.
            fresh_for: how many seconds a read stays fresh (SEP-2549 ``ttlMs``).
            cache_scope: ``"public"`` or ``"private"``; private when the handler takes
                the context or the resource requires scopes, unless told.
            timeout: seconds a read (or a completion of its variables) may take before
                it is stopped and the client told so, as an action's ``timeout=``.

        Raises:
            DefinitionError: on a bad URI, parameters that are not its variables, a
                duplicate, or a frozen app.
        """
        self._defining_check()

        def define(handler: Callable[..., Any]) -> Resource:
            self._defining_check()
            return self.surface.add_resource(
                uri,
                handler,
                name=name,
                title=title,
                description=description,
                returns=returns,
                mime_type=mime_type,
                requires=requires,
                fresh_for=fresh_for,
                cache_scope=cache_scope,
                timeout=timeout,
            )

        return define

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str = "",
        requires: Collection[str] = (),
        enabled: bool = True,
        timeout: float | None = None,
    ) -> Callable[[Callable[..., Any]], Prompt]:
        """Defines a prompt: ``@app.prompt()`` names it after its handler.

        Its arguments are the handler's parameters, validated like an action's; it returns
        a str, messages (``user()``, ``assistant()``) or ``messages_from_view(...)``. With
        ``enabled=False`` it is neither listed nor gettable until ``prompt.enable()``;
        ``timeout`` bounds its handler (and its completers) as an action's ``timeout=``.

        Raises:
            DefinitionError: on a duplicate, a signature that cannot be described, or a
                frozen app.
        """
        self._defining_check()

        def define(handler: Callable[..., Any]) -> Prompt:
            self._defining_check()
            chosen = name or str(getattr(handler, "__name__", ""))
            return self.surface.add_prompt(
                chosen,
                handler,
                title=title,
                description=description,
                requires=requires,
                enabled=enabled,
                timeout=timeout,
            )

        return define

    def list_resources(self, scopes: Collection[str] | None = None) -> list[dict[str, Any]]:
        """Exactly the MCP ``Resource`` objects of ``resources/list`` (the fixed URIs).

        ``scopes`` are the caller's (``None`` lists everything, as for ``list_tools``).
        """
        return self.surface.list_resources(scopes)

    def list_resource_templates(
        self, scopes: Collection[str] | None = None
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``ResourceTemplate`` objects of ``resources/templates/list``."""
        return self.surface.list_resource_templates(scopes)

    def list_prompts(
        self, scopes: Collection[str] | None = None, *, tenant: str | None = None
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``Prompt`` objects of ``prompts/list`` (``scopes`` and ``tenant``
        as for ``list_tools``)."""
        return self.surface.list_prompts(scopes, tenant=tenant)

    def enable_ui_app(self, uri: str = DEFAULT_URI) -> Resource:
        """Serves the result renderer as an MCP App (``io.modelcontextprotocol/ui``).

        The renderer becomes the ``ui://`` resource ``uri`` (``text/html;profile=mcp-app``,
        with its CSP in ``_meta.ui``; under 1 MiB), the template ``{uri}/diagrams/{part}``
        serves the diagram library it reads through the host when a result has a diagram,
        and every listed tool with an action whose Presenter
        can send UI blocks carries ``_meta.ui.resourceUri``: a host that supports Apps
        shows the blocks rendered beside the conversation. The text blocks do not change,
        so clients without Apps see nothing new.

        Raises:
            DefinitionError: if ``uri`` is not a ``ui://`` URI, the app already serves one,
                or the app is frozen.
        """
        self._defining_check()
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise DefinitionError(f"app '{self.name}': an MCP App's URI starts with ui://")
        if self.ui_app_uri is not None:
            raise DefinitionError(f"app '{self.name}' already serves its UI at {self.ui_app_uri}")
        resource = self.surface.add_resource(
            uri,
            renderer(uri),
            name="mcpfusion-renderer",
            title="Tool results, rendered",
            description="Renders the UI blocks of tool results: tables, charts, diagrams.",
            mime_type=APP_MIME_TYPE,
            meta=APP_META,
        )
        self.surface.add_resource(
            parts_template(uri),
            diagram_library(uri),
            name="mcpfusion-renderer-diagrams",
            title="The renderer's diagram library, in parts",
            description="Parts of the diagram library the renderer reads when a result has one.",
            mime_type=SCRIPT_MIME,
        )
        self.ui_app_uri = uri
        return resource
