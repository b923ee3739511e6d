"""Talking to the client over stdio and HTTP with the official client, in both protocol eras:
log levels, questions (accept, decline, cancel), sampling, confirmation and subscriptions."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import toon_format
from mcp import Client, StdioServerParameters, types
from mcp.client.context import ClientRequestContext
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ResourceUpdated

from examples.billing import seed
from examples.billing.db import BillingDB
from mcpfusion.wire import parse
from tests.e2e import servers
from tests.e2e.billing_session import HttpServer, connect, stdio_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

ERAS = ("legacy", "2026-07-28")
TRANSPORTS = ("stdio", "http")
SURFACE = f"{Path(__file__).parent / 'surface_app.py'}:app"

Opener = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(scope="module")
async def surface_url() -> AsyncIterator[str]:
    """The surface app over streamable HTTP (stateful)."""
    async with servers.http_server(target=SURFACE) as url:
        yield url


@pytest.fixture(params=TRANSPORTS)
def surface(request: pytest.FixtureRequest) -> Opener:
    """Opens the official client on the surface app over each transport."""
    if request.param == "stdio":
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcpfusion.cli", "run", SURFACE],
            cwd=servers.REPO,
        )
        return lambda **kw: Client(params, **kw)
    url = request.getfixturevalue("surface_url")
    return lambda **kw: Client(url, **kw)


class Script:
    """The user's and the model's answers, and what the client heard."""

    def __init__(self, answer: types.ElicitResult) -> None:
        self.answer = answer
        self.logs: list[tuple[str, Any]] = []
        self.questions: list[str] = []
        self.updates: list[str] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return self.answer

    async def on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi"), model="scripted"
        )

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))

    def options(self, mode: str, level: str) -> dict[str, Any]:
        return {
            "mode": mode,
            "logging_callback": self.on_log,
            "elicitation_callback": self.on_elicit,
            "sampling_callback": self.on_sample,
            "message_handler": self.on_message,
            "log_level": level,
        }


async def _set_level(client: Client, mode: str, level: str) -> None:
    if mode == "legacy":  # 2026-07-28 asks per request (log_level=); 2025-11-25 per session
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated on 2026-07-28, current before
            await client.set_logging_level(level)  # type: ignore[arg-type]


def _text(result: Any) -> str:
    text: str = result.content[0].text
    return text


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (types.ElicitResult(action="accept", content={"reason": "rent"}), "rent"),
        (types.ElicitResult(action="decline"), "decline"),
        (types.ElicitResult(action="cancel"), "cancel"),
    ],
)
async def test_a_handler_asks_samples_and_logs(
    surface: Opener, mode: str, answer: types.ElicitResult, said: str
) -> None:
    """The user's accept, decline or cancel and the model's reply reach the handler; only
    log messages at the chosen level arrive, once each."""
    script = Script(answer)
    with anyio.fail_after(30):
        async with surface(**script.options(mode, "warning")) as client:
            await _set_level(client, mode, "warning")
            result = await client.call_tool("talk", {"action": "chat"})
    assert (_text(result), result.is_error) == (f"{said}/hi", False)
    assert script.questions == ["Why?"]
    assert script.logs == [("warning", {"message": "warning line", "data": {"n": 1}})]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_chosen_level_decides(surface: Opener, mode: str) -> None:
    """At debug every message arrives, at error none of these (from a client that cannot
    be asked, which the stdio hot path serves on 2025-11-25)."""
    for level, expected in (("debug", 1), ("error", 0)):
        script = Script(types.ElicitResult(action="cancel"))
        options = script.options(mode, level)
        del options["elicitation_callback"], options["sampling_callback"]
        with anyio.fail_after(30):
            async with surface(**options) as client:
                await _set_level(client, mode, level)
                assert _text(await client.call_tool("talk", {"action": "hello"})) == "hello"
        assert len(script.logs) == expected, (level, script.logs)


async def test_a_client_that_cannot_be_asked_gets_a_tool_error(surface: Opener) -> None:
    """Without elicitation the question is UNSUPPORTED_BY_CLIENT, an isError result."""
    with anyio.fail_after(30):
        async with surface() as client:
            result = await client.call_tool("talk", {"action": "chat"})
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "UNSUPPORTED_BY_CLIENT"


# -- the billing example: confirmation and subscriptions -------------------------------------


@asynccontextmanager
async def billing(transport: str, tmp_path: Path) -> AsyncIterator[tuple[Any, list[str]]]:
    """The billing example on a fresh database, and two of its unpaid invoices."""
    db_path = tmp_path / "billing.db"
    books = BillingDB.open(db_path).tenant(seed.MAIN_TENANT)
    unpaid = [r["id"] for r in books.list_invoices() if r["status"] != "paid"][:2]
    if transport == "stdio":
        yield stdio_server(db_path), unpaid
        return
    server = HttpServer.start(db_path)
    try:
        yield server.url, unpaid
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_mark_paid_asks_before_paying(transport: str, mode: str, tmp_path: Path) -> None:
    """Accepted, the invoice is paid and the result ends with what it made stale; declined
    or cancelled, nothing changes: NOT_CONFIRMED, no invalidation."""
    async with billing(transport, tmp_path) as (target, (first, _)):
        outcomes = []
        for answer in (
            types.ElicitResult(action="decline"),
            types.ElicitResult(action="cancel"),
            types.ElicitResult(action="accept", content={"confirm": True}),
        ):
            script = Script(answer)
            with anyio.fail_after(30):
                async with connect(target, **script.options(mode, "info")) as client:
                    result = await client.call_tool(
                        "billing", {"action": "mark_paid", "invoice_id": first}
                    )
            outcomes.append(parse(result.content))
            assert script.questions == [f"Record the payment of invoice {first}?"]
    declined, cancelled, accepted = outcomes
    assert [declined.error and declined.error.code, cancelled.error and cancelled.error.code] == [
        "NOT_CONFIRMED",
        "NOT_CONFIRMED",
    ]
    assert declined.view.invalidations == cancelled.view.invalidations == ()
    assert toon_format.decode(accepted.view.data)["status"] == "paid"  # TOON: the default
    assert accepted.view.invalidations == ("billing.*", "reports.*")


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_subscriber_hears_of_a_mutation(transport: str, mode: str, tmp_path: Path) -> None:
    """A client subscribed to an invoice's URI gets notifications/resources/updated after
    mark_paid succeeds, and none after it fails."""
    async with billing(transport, tmp_path) as (target, (first, _)):
        uri = f"billing://invoices/{first}"
        script = Script(types.ElicitResult(action="cancel"))
        options = script.options(mode, "info")
        del options["elicitation_callback"]  # a client that cannot be asked: mark_paid proceeds
        with anyio.fail_after(30):
            async with connect(target, **options) as client:
                if mode == "legacy":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # removed on 2026-07-28 only
                        await client.subscribe_resource(uri)
                    await _pay_twice(client, first)
                    while not script.updates:
                        await anyio.sleep(0.02)
                else:
                    async with client.listen(resource_subscriptions=[uri]) as subscription:
                        await _pay_twice(client, first)
                        event = await subscription.__anext__()
                    assert event == ResourceUpdated(uri=uri)
    assert script.updates == [uri]


async def _pay_twice(client: Client, invoice: str) -> None:
    """Pays the invoice (a success), then again (CONFLICT: no notification)."""
    paid = await client.call_tool("billing", {"action": "mark_paid", "invoice_id": invoice})
    again = await client.call_tool("billing", {"action": "mark_paid", "invoice_id": invoice})
    assert (paid.is_error, again.is_error) == (False, True)
