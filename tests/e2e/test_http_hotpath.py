"""The HTTP hot path over real HTTP: what clients see of a session's tools/call and tools/list,
compared with the SDK's own answers (the same app served with ``hot_path=False``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types
from mcp.client.context import ClientRequestContext

from mcpfusion import Identity
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.server import asgi_app
from tests.e2e import sample_app, surface_app
from tests.e2e.servers import uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
GET = {"action": "get", "invoice_id": "INV-3"}


def _call(request_id: int, tool: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _messages(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages of a response: its JSON body, or the data of its SSE events."""
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return [
        json.loads(line[5:])
        for line in response.text.replace("\r\n", "\n").split("\n")
        if line.startswith("data:") and line[5:].strip()
    ]


class Session:
    """A raw 2025-11-25 session over httpx: the handshake, then POSTs with its headers."""

    def __init__(self, http: httpx2.AsyncClient, url: str, token: str | None = None) -> None:
        self.http = http
        self.url = url
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"

    async def open(self, capabilities: dict[str, Any] | None = None) -> Session:
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        opened = await self.http.post(self.url, json=hello, headers=self.headers)
        assert opened.status_code == 200, opened.text
        self.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = VERSION
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(ready)).status_code == 202
        return self

    async def post(self, message: Any, **headers: str) -> httpx2.Response:
        return await self.http.post(self.url, json=message, headers={**self.headers, **headers})


@asynccontextmanager
async def served(app: Any, **options: Any) -> AsyncIterator[str]:
    """The app over streamable HTTP with uvicorn on 127.0.0.1; yields the endpoint URL."""
    async with uvicorn_in_process(asgi_app(app, **options)) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def both(app: Any, **options: Any) -> AsyncIterator[tuple[Session, Session]]:
    """A session on the app with the hot path and one on the app without it (the SDK's)."""
    async with (
        served(app, **options) as hot_url,
        served(app, hot_path=False, **options) as sdk_url,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        yield await Session(http, hot_url).open(), await Session(http, sdk_url).open()


async def test_a_quiet_call_is_one_json_body_with_the_sdk_answer() -> None:
    """A call that sends nothing but its answer gets a JSON body holding the SDK's message."""
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            fast = await hot.post(_call(7, "billing", GET))
            slow = await sdk.post(_call(7, "billing", GET))
    assert fast.status_code == 200
    assert fast.headers["content-type"] == "application/json"
    assert fast.headers["mcp-session-id"] == hot.headers["Mcp-Session-Id"]
    assert slow.headers["content-type"] == "text/event-stream"
    assert _messages(fast) == _messages(slow)
    assert fast.content == slow.text.split("data: ", 1)[1].split("\r\n", 1)[0].encode()


async def test_tools_list_is_the_sdk_list() -> None:
    """tools/list answers the SDK's bytes in a JSON body, for each id type."""
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            for request_id in (3, "three"):
                listing = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
                fast, slow = await hot.post(listing), await sdk.post(listing)
                assert fast.headers["content-type"] == "application/json"
                assert _messages(fast) == _messages(slow)


async def test_errors_and_unknown_tools_match_the_sdk() -> None:
    """A failing action, an unknown tool and bad arguments get the SDK's answers."""
    calls = [
        _call(1, "billing", {"action": "fail"}),
        _call(2, "nope", {}),
        _call(3, "billing", {"action": "get"}),
        _call(4, "billing", {"action": "get", "invoice_id": 5}),
    ]
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            for message in calls:
                assert _messages(await hot.post(message)) == _messages(await sdk.post(message))


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": {"name": "billing"}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": {"name": "billing"}},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 3}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": []},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "billing", "x": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "c"}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "billing"}, "x": 1},
        {**_call(1, "billing", GET), "jsonrpc": "1.0"},
        _call(1, "billing", GET, progressToken=None),
        _call(
            1, "billing", GET, traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ),
    ],
)
async def test_malformed_and_unusual_requests_get_the_sdks_answers(message: Any) -> None:
    """Odd ids, params, keys and _meta are left to the SDK (or the guard): same answers."""
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            fast, slow = await hot.post(message), await sdk.post(message)
    assert fast.status_code == slow.status_code
    assert fast.headers["content-type"] == slow.headers["content-type"]
    assert _messages(fast) == _messages(slow)


async def test_interleaved_calls_each_get_their_answer() -> None:
    """Twenty calls in flight at once on one session, some streaming: each its own answer."""
    answers: dict[int, list[Any]] = {}
    with anyio.fail_after(30):
        async with served(sample_app.app) as url, httpx2.AsyncClient(timeout=10) as http:
            session = await Session(http, url).open()

            async def one(request_id: int) -> None:
                if request_id % 3:
                    message = _call(
                        request_id, "billing", {**GET, "invoice_id": f"INV-{request_id % 4 + 1}"}
                    )
                else:
                    rows = {"action": "export", "rows": request_id % 5 + 1}
                    message = _call(request_id, "billing", rows, progressToken=request_id)
                answers[request_id] = _messages(await session.post(message))

            async with anyio.create_task_group() as group:
                for request_id in range(20):
                    group.start_soon(one, request_id)
    for request_id, messages in answers.items():
        assert messages[-1]["id"] == request_id
        reports = [m["params"]["progressToken"] for m in messages[:-1]]
        assert reports == ([request_id] * (request_id % 5 + 1) if request_id % 3 == 0 else [])
        if request_id % 3:
            assert f"INV-{request_id % 4 + 1}" in messages[-1]["result"]["content"][0]["text"]


async def test_progress_streams_as_the_sdk_does() -> None:
    """With a progress token, the answer is an event stream: each report, then the result."""
    export = _call(5, "billing", {"action": "export", "rows": 3}, progressToken="tok")
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            fast, slow = await hot.post(export), await sdk.post(export)
    assert fast.headers["content-type"] == "text/event-stream"
    assert fast.headers["mcp-session-id"] == hot.headers["Mcp-Session-Id"]
    assert _messages(fast) == _messages(slow)
    assert [m.get("method") for m in _messages(fast)] == [*["notifications/progress"] * 3, None]


async def test_a_progress_token_without_reports_is_a_json_body() -> None:
    """A token alone opens no stream: the handler reported nothing."""
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, _):
            answer = await hot.post(_call(6, "billing", GET, progressToken=1))
    assert answer.headers["content-type"] == "application/json"


async def test_log_messages_stream_at_the_level_the_client_set() -> None:
    """ctx.log turns the answer into an event stream, above the session's level only."""
    hello = _call(8, "talk", {"action": "hello"})
    with anyio.fail_after(30):
        async with both(surface_app.app) as (hot, sdk):
            fast, slow = await hot.post(hello), await sdk.post(hello)
            assert fast.headers["content-type"] == "text/event-stream"
            assert _messages(fast) == _messages(slow)
            assert _messages(fast)[0]["method"] == "notifications/message"
            level = {"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel"}
            for session in (hot, sdk):
                await session.post({**level, "params": {"level": "error"}})
            quiet = await hot.post(hello)
            assert quiet.headers["content-type"] == "application/json"
            assert _messages(quiet) == _messages(await sdk.post(hello))


async def test_official_client_hears_logs_and_progress() -> None:
    """The official client gets results, progress and log messages through the hot path."""
    logs: list[Any] = []
    reported: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    with anyio.fail_after(30):
        async with (
            served(surface_app.app) as url,
            Client(url, mode="legacy", logging_callback=on_log) as client,
        ):
            said = await client.call_tool("talk", {"action": "hello"})
        async with served(sample_app.app) as url, Client(url, mode="legacy") as client:
            got = await client.call_tool("billing", GET)
            exported = await client.call_tool(
                "billing", {"action": "export", "rows": 2}, progress_callback=on_progress
            )
    assert said.content[0].text == "hello"  # type: ignore[union-attr]
    assert logs == ["hello line"]
    expected = (await sample_app.app.call_tool("billing", GET)).to_mcp()
    assert [c.text for c in got.content] == [c["text"] for c in expected["content"]]  # type: ignore[union-attr]
    assert exported.content[0].text == "exported 2 rows"  # type: ignore[union-attr]
    assert reported == [1, 2]


@pytest.mark.parametrize("hot_path", [True, False])
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (types.ElicitResult(action="accept", content={"reason": "rent"}), "rent"),
        (types.ElicitResult(action="decline"), "decline"),
        (types.ElicitResult(action="cancel"), "cancel"),
    ],
)
async def test_questions_mid_call_reach_the_client_and_its_answers_the_call(
    hot_path: bool, answer: types.ElicitResult, said: str
) -> None:
    """The official client is asked (elicitation, then sampling) on the call's stream and
    the handler gets its answers, with and without the hot path."""
    asked: list[str] = []

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.append(params.message)
        return answer

    async def on_sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi"), model="scripted"
        )

    with anyio.fail_after(30):
        async with (
            served(surface_app.app, hot_path=hot_path) as url,
            Client(
                url, mode="legacy", elicitation_callback=on_elicit, sampling_callback=on_sample
            ) as client,
        ):
            result = await client.call_tool("talk", {"action": "chat"})
    assert (result.content[0].text, result.is_error) == (f"{said}/hi", False)  # type: ignore[union-attr]
    assert asked == ["Why?"]


async def test_a_question_is_the_sdks_request_and_an_error_answer_ends_it_alike() -> None:
    """The elicitation request on the stream is the SDK's but for its id; an error answer
    reaches the handler as through the SDK, and the answer POST gets the SDK's 202."""
    chat = _call(1, "talk", {"action": "chat"})
    capabilities: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}
    outcomes = []
    with anyio.fail_after(30):
        async with (
            served(surface_app.app) as hot_url,
            served(surface_app.app, hot_path=False) as sdk_url,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            for url in (hot_url, sdk_url):
                session = await Session(http, url).open(capabilities)
                headers = {**session.headers}
                events: list[Any] = []
                async with http.stream("POST", url, json=chat, headers=headers) as streamed:
                    accepted = None
                    async for line in streamed.aiter_lines():
                        if not line.startswith("data:") or not line[5:].strip():
                            continue
                        events.append(json.loads(line[5:]))
                        if events[-1].get("method") == "elicitation/create":
                            refusal = {
                                "jsonrpc": "2.0",
                                "id": events[-1]["id"],
                                "error": {"code": -32603, "message": "no user here"},
                            }
                            accepted = await session.post(refusal)
                assert accepted is not None
                outcomes.append((events, accepted.status_code, accepted.headers["content-type"]))
    (hot_events, *hot_accept), (sdk_events, *sdk_accept) = outcomes
    assert hot_accept == sdk_accept == [202, "application/json"]

    def asks(events: list[Any]) -> list[Any]:
        return [e for e in events if e.get("method") == "elicitation/create"]

    (hot_ask,), (sdk_ask,) = asks(hot_events), asks(sdk_events)
    assert type(hot_ask["id"]) is str
    assert {**hot_ask, "id": 0} == {**sdk_ask, "id": 0}
    assert [e for e in hot_events if e is not hot_ask] == [
        e for e in sdk_events if e is not sdk_ask
    ]
    assert hot_events[-1]["id"] == 1


async def test_a_call_cancelled_while_asking_withdraws_its_question() -> None:
    """Cancelled while the client is asked, the call tells the client its question is
    withdrawn and its stream ends unanswered, as through the SDK."""
    chat = _call(1, "talk", {"action": "chat"})
    capabilities: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}
    seen = []
    with anyio.fail_after(30):
        async with (
            served(surface_app.app) as hot_url,
            served(surface_app.app, hot_path=False) as sdk_url,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            for url in (hot_url, sdk_url):
                session = await Session(http, url).open(capabilities)
                events: list[Any] = []
                async with http.stream("POST", url, json=chat, headers=session.headers) as got:
                    async for line in got.aiter_lines():
                        if not line.startswith("data:") or not line[5:].strip():
                            continue
                        events.append(json.loads(line[5:]))
                        if events[-1].get("method") == "elicitation/create":
                            cancel = {
                                "jsonrpc": "2.0",
                                "method": "notifications/cancelled",
                                "params": {"requestId": 1},
                            }
                            assert (await session.post(cancel)).status_code == 202
                seen.append(events)
    for events in seen:
        ask = next(e for e in events if e.get("method") == "elicitation/create")
        withdrawn = events[-1]
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"] == {"requestId": ask["id"], "reason": "caller cancelled"}
    assert [e.get("method") for e in seen[0]] == [e.get("method") for e in seen[1]]


async def test_a_client_that_can_be_asked_gets_json_for_a_quiet_call() -> None:
    """Declaring elicitation changes nothing for a call that asks nothing: one JSON body."""
    with anyio.fail_after(30):
        async with served(sample_app.app) as url, httpx2.AsyncClient(timeout=10) as http:
            asking = await Session(http, url).open({"elicitation": {}, "roots": {}})
            quiet = await asking.post(_call(1, "billing", GET))
    assert quiet.headers["content-type"] == "application/json"


async def _while_running(
    session: Session,
    call: dict[str, Any],
    before: dict[str, Any],
    act: Callable[[], Awaitable[None]],
) -> httpx2.Response:
    """Posts ``call`` (a waiting action), runs ``act`` once its handler started, and
    returns the call's response (the caller bounds the wait)."""
    answer: list[httpx2.Response] = []

    async def waiting() -> None:
        answer.append(await session.post(call))

    async with anyio.create_task_group() as group:
        group.start_soon(waiting)
        while sample_app.STATE["started"] == before["started"]:
            await anyio.sleep(0.01)
        await act()
    return answer[0]


def _cancel(request_id: int, **reason: str) -> dict[str, Any]:
    """A ``notifications/cancelled`` for ``request_id``."""
    params = {"requestId": request_id, **reason}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


async def test_cancellation_stops_the_call_and_nothing_answers_it() -> None:
    """notifications/cancelled stops a running call; its response ends with no answer."""
    before = dict(sample_app.STATE)
    with anyio.fail_after(30):
        async with served(sample_app.app) as url, httpx2.AsyncClient(timeout=10) as http:
            session = await Session(http, url).open()

            async def cancel() -> None:
                assert (await session.post(_cancel(41, reason="enough"))).status_code == 202

            call = _call(41, "billing", {"action": "wait"})
            answer = await _while_running(session, call, before, cancel)
            after = await session.post(_call(42, "billing", GET))
    assert sample_app.STATE["cancelled"] == before["cancelled"] + 1
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/event-stream"
    assert _messages(answer) == []
    assert _messages(after)[0]["id"] == 42


async def test_ending_the_session_stops_its_calls() -> None:
    """DELETE ends the session's running calls: their streams end with no answer."""
    before = dict(sample_app.STATE)
    with anyio.fail_after(30):
        async with served(sample_app.app) as url, httpx2.AsyncClient(timeout=10) as http:
            session = await Session(http, url).open()

            async def end() -> None:
                assert (await http.delete(url, headers=session.headers)).status_code == 200

            call = _call(3, "billing", {"action": "wait"})
            answer = await _while_running(session, call, before, end)
            after = await session.post(_call(4, "billing", GET))
    assert sample_app.STATE["cancelled"] == before["cancelled"] + 1
    assert _messages(answer) == []
    assert after.status_code == 404


async def test_another_sessions_cancellation_does_not_reach_the_call() -> None:
    """A cancellation sent on another session names no call of this one."""
    before = dict(sample_app.STATE)
    with anyio.fail_after(30):
        async with served(sample_app.app) as url, httpx2.AsyncClient(timeout=10) as http:
            mine, other = await Session(http, url).open(), await Session(http, url).open()

            async def cancel_elsewhere() -> None:
                await other.post(_cancel(5))

            call = _call(5, "billing", {"action": "wait", "seconds": 1})
            answer = await _while_running(mine, call, before, cancel_elsewhere)
    assert _messages(answer)[0]["result"]["content"][0]["text"] == "waited 1.0s"
    assert sample_app.STATE["cancelled"] == before["cancelled"]


async def test_session_and_version_refusals_are_the_sdks() -> None:
    """An unknown or missing session id and a foreign protocol version get the SDK's answers."""
    cases: list[dict[str, str]] = [
        {"Mcp-Session-Id": "0123456789abcdef"},
        {"MCP-Protocol-Version": "1999-01-01"},
        {"MCP-Protocol-Version": "2025-06-18"},
        {"Accept": "application/json"},
    ]
    with anyio.fail_after(30):
        async with both(sample_app.app) as (hot, sdk):
            for headers in cases:
                fast = await hot.post(_call(1, "billing", GET), **headers)
                slow = await sdk.post(_call(1, "billing", GET), **headers)
                assert fast.status_code == slow.status_code, headers
                assert fast.headers["content-type"] == slow.headers["content-type"], headers
                assert _messages(fast) == _messages(slow), headers
            unsessioned = {k: v for k, v in hot.headers.items() if k != "Mcp-Session-Id"}
            missing = await hot.http.post(
                hot.url, json=_call(1, "billing", GET), headers=unsessioned
            )
    assert missing.status_code == 400


async def test_auth_is_enforced_and_a_session_keeps_its_caller() -> None:
    """Without a token: 401. Another caller's token on a session: 404, as the SDK answers."""
    keys = {
        hash_api_key("key-a"): Identity("a", scopes={"mcp"}),
        hash_api_key("key-b"): Identity("b", scopes={"mcp"}),
    }
    auth = Auth(
        verifier=APIKeyVerifier(keys),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )
    with anyio.fail_after(30):
        async with served(sample_app.app, auth=auth) as url, httpx2.AsyncClient(timeout=10) as http:
            session = await Session(http, url, token="key-a").open()
            mine = await session.post(_call(1, "billing", GET))
            anonymous = await session.post(_call(2, "billing", GET), Authorization="")
            theirs = await session.post(_call(3, "billing", GET), Authorization="Bearer key-b")
    assert mine.headers["content-type"] == "application/json"
    assert _messages(mine)[0]["id"] == 1
    assert anonymous.status_code == 401
    assert theirs.status_code == 404
