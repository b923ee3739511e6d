"""The client channel on the SDK: both protocol eras, subscriptions and tenants."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.context import ClientRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated, ServerEvent
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcpfusion import Context, Fusion, Identity, SurfaceError
from mcpfusion._serve.sdk_client import ClientHub, TenantResourceUpdated, _TenantView
from mcpfusion.server import build_server
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ERAS = ("legacy", "2026-07-28")


class Why(BaseModel):
    """The question's answer."""

    reason: str


def _app() -> Fusion:
    app = Fusion("talk", data_format="json", ui_audience="all", definitions="full")
    tool = app.tool("t", description="Talks to the client.")

    @tool.action
    async def chat(ctx: Context) -> str:
        """Logs, asks, samples."""
        await ctx.log("debug", "debug line")
        await ctx.log("warning", "warning line", {"n": 1})
        answer = await ctx.elicit("Why?", Why)
        reply = await ctx.sample("Say hi.") if ctx.supports("sampling") else None
        said = answer.data.reason if answer.accepted else answer.action
        return f"{said}/{reply.text if reply else '-'}"

    @tool.action(confirm="Pay {invoice}?", invalidates=["t.*"])
    async def pay(invoice: str) -> str:
        """Asks first, then changes state."""
        return f"paid {invoice}"

    @tool.action(requires_client=["sampling"])
    async def needs(ctx: Context) -> str:
        """Cannot run without sampling."""
        return "ran"

    @tool.action
    async def both(ctx: Context) -> str:
        """Asks two questions at once."""
        answer, reply = await ctx.gather(ctx.elicit("Why?", Why), ctx.sample("Say hi."))
        return f"{answer.action}/{reply.text}"

    @tool.action
    async def roots(ctx: Context) -> list[str]:
        """The client's roots."""
        return [root.uri for root in await ctx.list_roots()]

    return app


@dataclass
class Scripted:
    """The client's side: answers and what it heard."""

    answer: types.ElicitResult
    logs: list[tuple[str, Any]]

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if params.message.startswith("Pay"):
            return types.ElicitResult(action="accept", content={"confirm": True})
        return self.answer

    async def on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi"), model="m"
        )

    async def on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate(
            {"roots": [{"uri": "file:///srv/work", "name": "work"}]}
        )


def _client(server: Any, mode: Any, script: Scripted, **extra: Any) -> Client:
    return Client(
        server,
        mode=mode,
        logging_callback=script.on_log,
        elicitation_callback=script.on_elicit,
        sampling_callback=script.on_sample,
        log_level="warning",
        **extra,
    )


async def _set_level(client: Client, mode: str, level: str) -> None:
    if mode == "legacy":
        with warnings.catch_warnings():  # logging is deprecated on 2026-07-28, not before
            warnings.simplefilter("ignore")
            await client.set_logging_level(level)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (types.ElicitResult(action="accept", content={"reason": "rent"}), "rent/hi"),
        (types.ElicitResult(action="decline"), "decline/hi"),
        (types.ElicitResult(action="cancel"), "cancel/hi"),
    ],
)
async def test_a_handler_logs_asks_and_samples_in_both_eras(
    mode: str, answer: types.ElicitResult, expected: str
) -> None:
    """Logs at the chosen level (once), and the user's accept, decline or cancel arrive."""
    script = Scripted(answer, [])
    with anyio.fail_after(20):
        async with _client(build_server(_app()), mode, script) as client:
            await _set_level(client, mode, "warning")
            result = await client.call_tool("t", {"action": "chat"})
    assert (result.content[0].text, result.is_error) == (expected, False)  # type: ignore[union-attr]
    assert script.logs == [("warning", {"message": "warning line", "data": {"n": 1}})]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_confirmed_mutation_ends_with_its_invalidation(mode: str) -> None:
    """confirm= asks through the client, then the invalidation block closes the result."""
    script = Scripted(types.ElicitResult(action="decline"), [])
    with anyio.fail_after(20):
        async with _client(build_server(_app()), mode, script) as client:
            result = await client.call_tool("t", {"action": "pay", "invoice": "I-1"})
    texts = [item.text for item in result.content]  # type: ignore[union-attr]
    assert texts == [
        "paid I-1",
        '<cache_invalidation caused_by="t.pay">\n- t.*\n</cache_invalidation>',
    ]


@pytest.mark.parametrize("mode", ERAS)
async def test_roots_and_a_client_without_them(mode: str) -> None:
    """list_roots returns the client's roots; a client without roots is told it lacks them."""
    script = Scripted(types.ElicitResult(action="decline"), [])
    server = build_server(_app())
    with anyio.fail_after(20):
        async with _client(server, mode, script, list_roots_callback=script.on_roots) as client:
            with warnings.catch_warnings():  # roots are deprecated on 2026-07-28
                warnings.simplefilter("ignore")
                listed = await client.call_tool("t", {"action": "roots"})
        async with _client(server, mode, script) as client:
            refused = await client.call_tool("t", {"action": "roots"})
    assert listed.content[0].text == '[\n  "file:///srv/work"\n]'  # type: ignore[union-attr]
    assert refused.is_error
    assert 'code="UNSUPPORTED_BY_CLIENT"' in refused.content[0].text  # type: ignore[union-attr]


class _Outbound:
    """A connection's standalone channel that records what it carries."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Mapping[str, Any] | None]] = []

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        self.sent.append((method, params))

    async def send_raw_request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no requests expected")


def _identity(ctx: Any) -> Identity | None:
    """The fake context's caller."""
    found: Identity | None = ctx.identity
    return found


def _ctx(connection: Connection, identity: Identity | None) -> Any:
    return SimpleNamespace(
        session=SimpleNamespace(_connection=connection),
        protocol_version="2025-11-25",
        identity=identity,
    )


async def test_updates_go_to_matching_subscribers_of_the_same_tenant() -> None:
    """resources/updated reaches subscribers whose URI matches, of the caller's tenant only."""
    bus = InMemorySubscriptionBus()
    events: list[ServerEvent] = []
    bus.subscribe(events.append)
    hub = ClientHub(bus, _identity)
    acme, globex = _Outbound(), _Outbound()
    connections = []  # held, as the SDK holds a live connection (the hub only refers to them)
    for outbound, tenant in ((acme, "acme"), (globex, "globex")):
        connections.append(Connection(outbound, protocol_version="2025-11-25"))
        ctx = _ctx(connections[-1], Identity("u", tenant=tenant))
        for uri in ("billing://invoices/INV-1", "crm://customers/C-1"):
            await hub.on_subscribe(ctx, types.SubscribeRequestParams(uri=uri))
    await hub.invalidated(["billing.*"], Identity("x", tenant="acme"))
    assert acme.sent == [("notifications/resources/updated", {"uri": "billing://invoices/INV-1"})]
    assert globex.sent == []
    await hub.invalidated(["reports.*"], Identity("x", tenant="acme"))
    assert len(acme.sent) == 1
    await hub.invalidated(["crm.customers"], None)  # no tenant: every subscriber
    assert [len(acme.sent), len(globex.sent)] == [2, 1]
    # Nobody listens here on 2026-07-28: only the patterns, for other processes.
    assert [type(e).__name__ for e in events] == ["StateChanged"] * 3


async def test_listen_streams_hear_their_tenant_only() -> None:
    """On 2026-07-28 a listen stream of another tenant does not get the update."""
    bus = InMemorySubscriptionBus()
    events: list[ServerEvent] = []
    bus.subscribe(events.append)
    hub = ClientHub(bus, _identity)
    hub._listening[("billing://invoices/INV-1", "acme")] = 1
    hub._listening[("billing://invoices/INV-2", "globex")] = 1
    await hub.invalidated(["billing.invoices"], Identity("x", tenant="acme"))
    assert events[0] == TenantResourceUpdated(uri="billing://invoices/INV-1", tenant="acme")
    assert [type(e).__name__ for e in events[1:]] == ["StateChanged"]


async def test_another_process_tells_its_own_listeners() -> None:
    """Two hubs on one bus: a change made in one reaches the streams the other holds."""
    bus = InMemorySubscriptionBus()
    here, there = ClientHub(bus, _identity), ClientHub(bus, _identity)
    heard: list[ServerEvent] = []
    view = _TenantView(there, "acme")
    view.subscribe(heard.append)
    there._listening[("billing://invoices/INV-1", "acme")] = 1
    await here.invalidated(["billing.*"], Identity("x", tenant="acme"))
    assert heard == [ResourceUpdated(uri="billing://invoices/INV-1")]
    await there.invalidated(["billing.*"], Identity("x", tenant="acme"))  # its own: told once
    assert heard[1:] == [TenantResourceUpdated(uri="billing://invoices/INV-1", tenant="acme")]


def _toggled_app() -> tuple[Fusion, Any]:
    app = Fusion(
        "toggles",
        data_format="json",
        ui_audience="all",
        definitions="full",
        local_identity=Identity("op", tenant="acme"),
    )
    app.tool("base", description="Always there.").action("ping", read_only=True)(lambda: "pong")
    beta = app.tool("beta", description="Hidden until enabled.", enabled=False)
    beta.action("try_it")(lambda: "tried")
    return app, beta


async def test_enable_and_disable_change_the_list_and_the_calls() -> None:
    """A disabled tool is neither listed nor callable; enabling it per tenant shows it to
    that tenant's callers only."""
    app, beta = _toggled_app()
    acme, globex = Identity("a", tenant="acme"), Identity("g", tenant="globex")
    assert [t["name"] for t in app.list_tools(tenant="acme")] == ["base"]
    hidden = await app.call_tool("beta", {"action": "try_it"}, identity=acme)
    assert hidden.is_error and 'code="UNKNOWN_TOOL"' in hidden.blocks[0]
    await beta.enable(tenant="acme")
    assert [t["name"] for t in app.list_tools(tenant="acme")] == ["base", "beta"]
    assert [t["name"] for t in app.list_tools(tenant="globex")] == ["base"]
    assert (await app.call_tool("beta", {"action": "try_it"}, identity=acme)).blocks == ("tried",)
    refused = await app.call_tool("beta", {"action": "try_it"}, identity=globex)
    assert refused.is_error
    await beta.disable()
    assert [t["name"] for t in app.list_tools(tenant="acme")] == ["base"]


async def _enable_and_hear(
    mode: str, item: Any, heard: list[str], listen: Callable[[], AbstractAsyncContextManager[Any]]
) -> None:
    """Enables ``item`` for globex, then for acme (the client's tenant), and waits until
    the client hears of it: on its connection (2025-11-25, the message handler fills
    ``heard``) or on the stream ``listen`` opens (2026-07-28). The caller bounds it."""
    if mode == "legacy":
        await item.enable(tenant="globex")
        await item.enable(tenant="acme")
        while not heard:
            await anyio.sleep(0.01)
        return
    async with listen() as subscription:
        await item.enable(tenant="globex")
        await item.enable(tenant="acme")
        event = await subscription.__anext__()
        heard.append(type(event).__name__)


@pytest.mark.parametrize("mode", ERAS)
async def test_clients_hear_that_their_tool_list_changed(mode: str) -> None:
    """tools/list_changed reaches the client (listen stream or its connection) when a tool
    is enabled for its tenant, not when one is enabled for another tenant."""
    app, beta = _toggled_app()
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.append("changed")

    server = build_server(app)
    with anyio.fail_after(20):
        async with Client(server, mode=mode, message_handler=on_message) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            await _enable_and_hear(
                mode, beta, heard, lambda: client.listen(tools_list_changed=True)
            )
            after = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
    assert (before, after) == (["base"], ["base", "beta"])
    assert heard[0] in ("changed", "ToolsListChanged")
    assert len([h for h in heard if h == "changed"]) <= 1


@pytest.mark.parametrize("mode", ERAS)
async def test_gathered_questions_are_answered_together(mode: str) -> None:
    """ctx.gather asks both questions (in one round on 2026-07-28) and returns both answers."""
    script = Scripted(types.ElicitResult(action="decline"), [])
    with anyio.fail_after(20):
        async with _client(build_server(_app()), mode, script) as client:
            result = await client.call_tool("t", {"action": "both"})
            raw = (
                await client.session.call_tool("t", {"action": "both"}, allow_input_required=True)
                if mode != "legacy"
                else None
            )
    assert result.content[0].text == "decline/hi"  # type: ignore[union-attr]
    if raw is not None:
        assert isinstance(raw, types.InputRequiredResult)
        assert sorted(raw.input_requests or {}) == ["q0", "q1"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_declared_requirement_is_refused_as_each_era_says(mode: str) -> None:
    """Without sampling: -32021 with the capability on 2026-07-28, a tool error before."""
    with anyio.fail_after(20):
        async with Client(build_server(_app()), mode=mode) as client:
            if mode == "legacy":
                result = await client.call_tool("t", {"action": "needs"})
                assert result.is_error
                assert 'code="UNSUPPORTED_BY_CLIENT"' in result.content[0].text  # type: ignore[union-attr]
                return
            with pytest.raises(MCPError, match="requires the client 'sampling' capability") as info:
                await client.call_tool("t", {"action": "needs"})
    assert info.value.error.code == -32021
    assert info.value.error.data == {"requiredCapabilities": {"sampling": {}}}


def _prompted_app() -> tuple[Fusion, Any]:
    app = Fusion(
        "prompts",
        data_format="json",
        ui_audience="all",
        definitions="full",
        local_identity=Identity("op", tenant="acme"),
    )
    app.prompt()(lambda: "always")  # named <lambda>
    app.tool("base").action("ping", read_only=True)(lambda: "pong")

    @app.prompt(enabled=False)
    def beta() -> str:
        """Hidden until enabled."""
        return "beta"

    return app, beta


async def test_prompts_are_enabled_and_disabled_per_tenant() -> None:
    """A disabled prompt is neither listed, gettable nor completed for; enabling it for a
    tenant shows it to that tenant's callers only."""
    app, beta = _prompted_app()
    acme, globex = Identity("a", tenant="acme"), Identity("g", tenant="globex")
    assert [p["name"] for p in app.list_prompts(tenant="acme")] == ["<lambda>"]
    with pytest.raises(SurfaceError, match=r'Unknown prompt "beta"\. Prompts: <lambda>\.'):
        await app.surface.get_prompt("beta", identity=acme)
    await beta.enable(tenant="acme")
    assert [p["name"] for p in app.list_prompts(tenant="acme")] == ["<lambda>", "beta"]
    assert [p["name"] for p in app.list_prompts(tenant="globex")] == ["<lambda>"]
    got = await app.surface.get_prompt("beta", identity=acme)
    assert [m.text for m in got.messages] == ["beta"]
    with pytest.raises(SurfaceError, match="Unknown prompt"):
        await app.surface.complete("prompt", "beta", "x", "", identity=globex)
    tester = FusionTester(app, identity=acme)
    assert [p["name"] for p in tester.list_prompts()] == ["<lambda>", "beta"]
    assert [p["name"] for p in tester.as_caller(globex).list_prompts()] == ["<lambda>"]
    await beta.disable()
    assert [p["name"] for p in app.list_prompts(tenant="acme")] == ["<lambda>"]
    with pytest.raises(TypeError, match="tenant is a str or None"):
        await beta.enable(tenant=3)


@pytest.mark.parametrize("mode", ERAS)
async def test_clients_hear_that_their_prompt_list_changed(mode: str) -> None:
    """prompts/list_changed reaches the client (listen stream or its connection) when a
    prompt is enabled for its tenant, and the list it reads again shows the prompt."""
    app, beta = _prompted_app()
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            heard.append("changed")

    with anyio.fail_after(20):
        async with Client(build_server(app), mode=mode, message_handler=on_message) as client:
            before = [p.name for p in (await client.list_prompts()).prompts]
            await _enable_and_hear(
                mode, beta, heard, lambda: client.listen(prompts_list_changed=True)
            )
            after = [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts]
    assert (before, after) == (["<lambda>"], ["<lambda>", "beta"])
    assert heard[0] in ("changed", "PromptsListChanged")
