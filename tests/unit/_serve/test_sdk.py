"""The MCP SDK adapter in-process: conversions, failures, cancellation, security settings."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.session import ServerSession
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.routing import Route

from mcpfusion import (
    DefinitionError,
    HttpOptions,
    Presenter,
    ResponseBuilder,
    ToolResponse,
    error,
    success_structured,
    ui,
)
from mcpfusion._app.app import Fusion
from mcpfusion._identity import Identity
from mcpfusion._present.builder import response
from mcpfusion._present.failures import NO_RETRY, preview
from mcpfusion._serve.http import app as http
from mcpfusion._serve.options import http_options
from mcpfusion._tools.context import Context, Progress
from mcpfusion._tools.dialects import Dialect
from mcpfusion.server import (
    asgi_app,
    build_server,
    host_policy,
    is_loopback,
    to_call_tool_result,
)
from tests.client_results import first_text, texts

TOOL = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}


class Row(BaseModel):
    """A presented row."""

    id: int


class StubApp:
    """A hand-written app: records what the adapter hands it, answers from ``behaviour``."""

    name = "stub"
    version = "9.9.9"
    instructions = "Be kind."

    def __init__(self, behaviour: Any = None) -> None:
        self.behaviour = behaviour
        self.listed = 0
        self.calls: list[tuple[str, Any, Mapping[str, Any] | None]] = []
        self.cancelled = anyio.Event()
        self.started = anyio.Event()

    local_identity = None
    toggled = False

    def list_tools(
        self,
        scopes: Collection[str] | None = None,
        *,
        tenant: str | None = None,
        dialect: Dialect | None = None,
    ) -> list[dict[str, Any]]:
        self.listed += 1
        return [dict(TOOL)]

    def dialect_for(self, client: str | None) -> Dialect:
        return "mcp"

    def sends_user_ui(self, client: str | None) -> bool:
        return True

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None:
        return None

    def running(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        meta: Mapping[str, Any] | None = None,
        identity: Identity | None = None,
        client: Any = None,
    ) -> ToolResponse:
        self.calls.append((name, arguments, meta))
        if self.behaviour == "raise":
            raise KeyError("secret internals")
        if self.behaviour == "wrong type":
            return {"content": []}  # type: ignore[return-value]
        if self.behaviour == "hang":
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
        if self.behaviour == "progress":
            assert progress is not None
            await progress(1, 2, "half")
            await progress(2, 2, None)
        return response({"name": name}).rule("a rule").build()


@pytest.mark.parametrize(
    "built",
    [
        response({"a": 1}).rule("r").suggest("echo", "again").build(),
        success_structured([1, 2]),
        error("nope"),
        ResponseBuilder({"a": 1}, user_ui=True).ui(ui.summary("for you")).rule("r").build(),
    ],
)
def test_call_tool_result_is_the_wire_form(built: ToolResponse) -> None:
    """The SDK result serializes to exactly ``ToolResponse.to_mcp()``."""
    result = to_call_tool_result(built)
    wire = result.model_dump(by_alias=True, exclude_none=True, exclude={"result_type"})
    assert wire == built.to_mcp()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_server_identity_and_tools(mode: str) -> None:
    """Name, version, instructions and tools come from the app; tools convert once."""
    app = StubApp()
    async with Client(build_server(app), mode=mode) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("stub", "9.9.9")
        assert client.instructions == "Be kind."
        first = await client.list_tools()
        await client.list_tools()
        await client.call_tool("echo", {})
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in first.tools] == [TOOL]
    assert app.listed == 1


def test_tools_are_listed_once_when_the_server_is_built() -> None:
    """The app's tool list is read at build time, before any client asks for it."""
    app = StubApp()
    build_server(app)
    assert app.listed == 1


def test_definition_mistake_stops_the_server_at_start() -> None:
    """A tool without actions raises DefinitionError while building, not on a later call."""
    app = Fusion("broken")
    app.tool("empty", description="No actions yet.")
    with pytest.raises(DefinitionError, match="'empty' has no actions"):
        build_server(app)
    with pytest.raises(DefinitionError, match="'empty' has no actions"):
        app.asgi_app()


@pytest.mark.anyio
@pytest.mark.parametrize("behaviour", ["raise", "wrong type"])
async def test_escaped_failure_is_an_internal_error_result(
    behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception or a non-response out of the app is INTERNAL_ERROR, logged, not leaked."""
    async with Client(build_server(StubApp(behaviour))) as client:
        result = await client.call_tool("echo", {})
    assert result.is_error
    text = first_text(result)
    assert 'code="INTERNAL_ERROR"' in text and "secret" not in text
    assert any(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


@pytest.mark.anyio
async def test_escaped_failure_names_the_tool_cut_and_says_not_to_retry() -> None:
    """The client's tool name is echoed cut, as everywhere, with the no-retry recovery."""
    name = "x" * 500
    async with Client(build_server(StubApp("raise"))) as client:
        result = await client.call_tool(name, {})
    text = first_text(result)
    assert f"<message>Tool {preview(name)} failed with an internal error.</message>" in text
    assert f"<recovery>{NO_RETRY}</recovery>" in text
    assert name not in text


@pytest.mark.anyio
async def test_undeliverable_progress_does_not_fail_the_call(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A progress report the transport cannot send is logged once; the call still answers."""
    app = Fusion("demo")

    @app.tool("slow").action("run")
    async def run(ctx: Context) -> str:
        await ctx.progress(1, 2, "half")
        return "done"

    async def broken(*args: object) -> None:
        raise RuntimeError("client gone")

    monkeypatch.setattr(ServerSession, "report_progress", broken)
    async with Client(build_server(app)) as client:
        result = await client.call_tool("slow", {"action": "run"})
    assert not result.is_error and first_text(result) == "done"
    failures = [r for r in caplog.records if "progress report failed" in r.getMessage()]
    assert [r.levelno for r in failures] == [logging.WARNING]


@pytest.mark.anyio
async def test_arguments_and_meta_reach_the_app() -> None:
    """The call's name, arguments and request metadata are handed to the app."""
    app = StubApp()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("echo", {"x": [1]}, progress_callback=on_progress)
    name, arguments, meta = app.calls[0]
    assert (name, arguments) == ("echo", {"x": [1]})
    assert meta is not None and meta.get("progress_token") is not None


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_progress_reaches_the_client(mode: str) -> None:
    """Progress the app reports arrives at the client's callback, in order."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(build_server(StubApp("progress")), mode=mode) as client:
        await client.call_tool("echo", {}, progress_callback=on_progress)
    assert seen == [(1, 2, "half"), (2, 2, None)]


@pytest.mark.anyio
async def test_cancellation_reaches_the_app() -> None:
    """A call the client cancels is cancelled inside the app; no result is made up."""
    app = StubApp("hang")
    with anyio.fail_after(10):
        async with Client(build_server(app), mode="legacy") as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "echo", {})
                await app.started.wait()
                group.cancel_scope.cancel()
            await app.cancelled.wait()


@pytest.mark.anyio
async def test_fusion_app_through_the_adapter() -> None:
    """A real Fusion app answers through the adapter exactly as in-process."""
    app = Fusion("demo", version="2.0.0")
    tool = app.tool("greet", description="Greetings.")

    @tool.action("hello", read_only=True)
    async def hello(name: str, ctx: Context) -> str:
        await ctx.progress(1, 1, "done")
        return f"hello {name}"

    async with Client(build_server(app)) as client:
        result = await client.call_tool("greet", {"action": "hello", "name": "ada"})
        listed = await client.list_tools()
    expected = (await app.call_tool("greet", {"action": "hello", "name": "ada"})).to_mcp()
    assert texts(result.content) == [c["text"] for c in expected["content"]]
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == (
        app.list_tools()
    )


@pytest.mark.anyio
async def test_ui_for_the_user_reaches_the_client_annotated() -> None:
    """A UI block meant for the user arrives with audience ["user"]; the rest without."""
    app = Fusion("demo", ui_audience="user")
    view = Presenter("Row", Row)
    view.ui(lambda row: ui.summary(f"Row {row['id']}"))
    app.tool("rows").action("get", returns=view)(lambda: {"id": 1})
    async with Client(build_server(app)) as client:
        result = await client.call_tool("rows", {"action": "get"})
    data, block = result.content
    assert data.annotations is None
    assert block.annotations is not None
    assert block.annotations.audience == ["user"]


def test_loopback_bind_protects_against_dns_rebinding() -> None:
    """Loopback binds allow only loopback Host and Origin values, on any port."""
    settings = host_policy(HttpOptions(host="127.0.0.1"))
    assert settings.protected
    assert settings.hosts == ("127.0.0.1:*", "localhost:*", "[::1]:*")
    assert "http://localhost:*" in settings.origins


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.1.1", True),
        ("127.255.0.9", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LocalHost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_loopback_is_any_loopback_address(host: str, loopback: bool) -> None:
    """Every 127.0.0.0/8 address, ``::1`` and ``localhost`` count as loopback; nothing else."""
    assert is_loopback(host) is loopback


def test_other_loopback_binds_accept_their_own_address() -> None:
    """Bound to 127.0.1.1, the server is protected and also accepts that address as Host."""
    settings = host_policy(HttpOptions(host="127.0.1.1"))
    assert settings.protected
    assert settings.hosts == ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.1.1:*")
    assert "http://127.0.1.1:*" in settings.origins
    assert host_policy(HttpOptions(host="::1")).hosts == ("127.0.0.1:*", "localhost:*", "[::1]:*")


def test_public_bind_without_hosts_is_unprotected() -> None:
    """A public bind without allowed_hosts leaves Host checks to the proxy."""
    assert not host_policy(HttpOptions(host="0.0.0.0")).protected


def test_allowed_hosts_derive_origins() -> None:
    """Given hosts switch protection on; origins default to http and https on them."""
    settings = host_policy(HttpOptions(host="0.0.0.0", allowed_hosts=["api.example.com"]))
    assert settings.protected
    assert settings.origins == ("http://api.example.com", "https://api.example.com")
    explicit = host_policy(
        HttpOptions(
            host="0.0.0.0", allowed_hosts=["a.example"], allowed_origins=["https://ui.example"]
        )
    )
    assert explicit.origins == ("https://ui.example",)


@pytest.mark.parametrize(
    ("host", "allowed_hosts", "warned"),
    [
        ("0.0.0.0", None, True),
        ("::", None, True),
        ("0.0.0.0", ["api.example.com"], False),
        ("127.0.1.1", None, False),
        ("::1", None, False),
    ],
)
def test_unprotected_public_bind_logs_a_warning(
    host: str, allowed_hosts: list[str] | None, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Only a non-loopback bind without allowed hosts warns, on the mcpfusion logger."""
    caplog.set_level(logging.INFO, logger="mcpfusion")
    asgi_app(StubApp(), host=host, allowed_hosts=allowed_hosts)
    warnings = [
        (r.name, r.getMessage())
        for r in caplog.records
        if r.levelno == logging.WARNING and "DNS-rebinding" in r.getMessage()
    ]
    assert [name for name, _ in warnings] == (["mcpfusion"] if warned else [])
    assert all(f"bound to {host} " in message for _, message in warnings)


def test_run_http_hands_allowed_hosts_and_origins_to_the_asgi_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run_http`` builds its ASGI app with the allowed hosts and origins it was given."""
    seen: dict[str, Any] = {}

    class Built(Exception):
        """Stops run_http once the ASGI app is asked for, before any socket is bound."""

    def record(app: Any, options: HttpOptions) -> Starlette:
        seen["options"] = options
        raise Built

    monkeypatch.setattr(http, "asgi_app", record)
    with pytest.raises(Built, match=r"^$"):
        http.run_http(
            StubApp(), host="0.0.0.0", allowed_hosts=["a.example"], allowed_origins=["https://b"]
        )
    options = seen["options"]
    assert options.host == "0.0.0.0"
    assert (options.allowed_hosts, options.allowed_origins) == (("a.example",), ("https://b",))


def test_fusion_run_http_passes_the_security_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Fusion.run("http", ...)`` forwards allowed hosts and origins to ``run_http``."""
    calls: list[HttpOptions] = []
    monkeypatch.setattr(
        "mcpfusion.server.run_http",
        lambda app, options, **changes: calls.append(http_options(options, changes)),
    )
    Fusion("demo").run(
        "http", host="0.0.0.0", allowed_hosts=["a.example:*"], allowed_origins=["https://b"]
    )
    [options] = calls
    assert options.allowed_hosts == ("a.example:*",)
    assert options.allowed_origins == ("https://b",)


def test_asgi_app_routes_the_exact_path() -> None:
    """The ASGI app is a Starlette app with one Route (no Mount redirect) at ``path``."""
    app = asgi_app(StubApp(), path="/rpc")
    assert isinstance(app, Starlette)
    [route] = app.routes
    assert type(route) is Route
    assert route.path == "/rpc"


def test_the_list_notices_an_app_can_send_are_advertised() -> None:
    """A Fusion app, which announces its tool and prompt changes, says listChanged true for
    both (on every transport: they all take these options); an app that cannot says false."""
    app = Fusion("lists")
    app.tool("t").action("a")(lambda: "ok")

    @app.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    shown = build_server(app).create_initialization_options().capabilities
    assert shown.tools is not None and shown.tools.list_changed is True
    assert shown.prompts is not None and shown.prompts.list_changed is True
    silent = build_server(StubApp()).create_initialization_options().capabilities
    assert silent.tools is not None and silent.tools.list_changed is False


def _paging_app(secret: str | None = None) -> Fusion:
    """An app whose one action pages a Presenter's list of three rows, two a page."""

    class Row(BaseModel):
        n: int

    app = Fusion("pages", cursor_secret=secret)
    view = Presenter("Row", Row, limit=2)
    app.tool("rows").action("list", returns=view, paging=True)(lambda: [{"n": n} for n in range(3)])
    return app


async def _next_cursor(app: Fusion) -> str:
    """The cursor of the first page of ``_paging_app``."""
    first = await app.call_tool("rows", {"action": "list"})
    assert first.structured_content is not None
    cursor: str = first.structured_content["page"]["nextCursor"]
    return cursor


@pytest.mark.anyio
async def test_workers_sharing_request_state_keys_open_each_others_cursors() -> None:
    """Without cursor_secret, apps served with the same request-state key share cursors."""
    key = "k" * 32
    issuer, reader = _paging_app(), _paging_app()
    build_server(issuer, request_state_keys=[key])
    build_server(reader, request_state_keys=[key])
    cursor = await _next_cursor(issuer)
    following = await reader.call_tool("rows", {"action": "list", "_cursor": cursor})
    assert following.structured_content is not None
    assert following.structured_content["items"] == [{"n": 2}]


@pytest.mark.anyio
async def test_an_apps_own_cursor_secret_is_kept_when_served() -> None:
    """An app given cursor_secret keeps it: the request-state key does not replace it."""
    secret = "s" * 32
    served, other = _paging_app(secret), _paging_app(secret)
    build_server(served, request_state_keys=["k" * 32])
    cursor = await _next_cursor(served)
    following = await other.call_tool("rows", {"action": "list", "_cursor": cursor})
    assert not following.is_error
    unshared = await _paging_app().call_tool("rows", {"action": "list", "_cursor": cursor})
    assert unshared.is_error
