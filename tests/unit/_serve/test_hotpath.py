"""The stdio hot path against the SDK's own path: same bytes, same cancellation, same ids."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server import Server
from mcp.server.caching import CacheHint

from mcpfusion import Audio, Fusion, Image, ToolResponse
from mcpfusion._present.response import FOR_USER
from mcpfusion._serve.hotpath import HotPath, plain_sdk_path
from mcpfusion._serve.sdk import build_server
from tests.e2e.sample_app import app as sample
from tests.stdio_session import MODERN, Stub, call, enveloped, exchange, session

pytestmark = pytest.mark.anyio

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods the hot path answered, in order."""
    answered: list[str] = []
    take = HotPath.take

    def spy(self: Any, message: dict[str, Any], version: str) -> bool:
        took = take(self, message, version)
        if took:
            answered.append(message["method"])
        return took

    monkeypatch.setattr(HotPath, "take", spy)
    return answered


SAME_AS_SDK = [
    call(1, "billing", {"action": "get", "invoice_id": "INV-1"}),
    call("a", "billing", {"action": "list", "status": "paid"}),
    call(3, "reports", {"action": "totals", "currency": "USD"}),
    call(4, "billing", {"action": "get", "invoice_id": 3}),
    call(5, "billing", {"action": "fail"}),
    call(6, "nope", {}),
    call(7, "ops_ping"),
    {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {"name": "ops_ping", "arguments": None},
    },
    call(9, "billing", {"action": "export", "rows": 2}, _meta={"progressToken": 42}),
    call(10, "billing", {"action": "export", "rows": 2}, _meta={"progressToken": "tok"}),
    call(11, "billing", {"action": "export", "rows": 1}, _meta={}),
    call(12, "billing", {"action": "export", "rows": 1}, _meta=None),
    call(13, "billing", {"action": "note", "text": "ünï \U0001f600 <llm_directives>"}),
]
SDK_ONLY = [
    call(20, "billing", ["get"]),  # arguments not an object
    call(21, 5),  # name not a string
    call(22, "ops_ping", None, task={"ttl": 1}),  # a field the hot path leaves to the SDK
    call(23, "ops_ping", None, _meta={"progressToken": None}),
    call(24, "ops_ping", None, _meta={"traceparent": "00-x"}),
    call(25, "ops_ping", None, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
    {"jsonrpc": "2.0", "id": 26, "method": "tools/call"},  # no params
    {"jsonrpc": "2.0", "id": 27, "method": "tools/call", "params": {"name": "x"}, "extra": 1},
    {"jsonrpc": "2.0", "id": 28, "method": "tools/list", "params": {"cursor": "x"}},
]


async def test_hot_path_writes_the_sdks_bytes(taken: list[str]) -> None:
    """Every call the hot path answers gets the very lines the SDK writes, progress too."""
    via_sdk = await exchange(sample, SAME_AS_SDK, hot=False)
    via_hot = await exchange(sample, SAME_AS_SDK, hot=True)
    assert via_hot == via_sdk
    assert taken == ["tools/call"] * len(SAME_AS_SDK)
    progress = [json.loads(line) for line in via_hot if b"notifications/progress" in line]
    assert [p["params"]["progressToken"] for p in progress] == [42, 42, "tok", "tok"]


async def test_requests_the_hot_path_leaves_alone_get_the_sdks_answer(taken: list[str]) -> None:
    """A request not in the hot path's exact shape is the SDK's, answered as before."""
    via_sdk = await exchange(sample, SDK_ONLY, hot=False)
    via_hot = await exchange(sample, SDK_ONLY, hot=True)
    assert via_hot == via_sdk
    assert taken == []


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_tools_list_is_the_sdks_at_every_version(version: str, taken: list[str]) -> None:
    """tools/list from the hot path is byte for byte the SDK's, at each handshake version."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": None},
    ]
    via_sdk = await exchange(sample, messages, hot=False, version=version)
    via_hot = await exchange(sample, messages, hot=True, version=version)
    assert via_hot == via_sdk
    assert taken == ["tools/list"] * 3


@pytest.mark.parametrize(
    "outcome",
    [
        RuntimeError("boom <secret>"),
        "not a response",
        ToolResponse(("a\ud800b",)),
        ToolResponse(("x",), structured_content={"n": float("nan"), "none": None, "t": (1, 2)}),
        ToolResponse(("x",), is_error=True, structured_content={}),
        ToolResponse(("data", "<ui_passthrough>"), annotations=(None, FOR_USER)),
        ToolResponse(("see the chart",), attachments=(Image(b"\x89PNG"), Audio(b"RIFF"))),
    ],
)
async def test_odd_outcomes_get_the_sdks_answer(outcome: Any, taken: list[str]) -> None:
    """An app that raises, returns no response, a lone surrogate, NaN, annotated blocks or
    attachments: as the SDK answers."""
    messages = [call(1, "t", {"a": 1}), call(2, "t")]
    via_sdk = await exchange(Stub(outcome), messages, hot=False)
    via_hot = await exchange(Stub(outcome), messages, hot=True)
    assert via_hot == via_sdk
    assert taken == ["tools/call", "tools/call"]
    for line in via_hot:
        line.decode()  # always valid UTF-8: a lone surrogate became U+FFFD
        assert b"secret" not in line


async def test_the_handler_sees_the_sdks_meta() -> None:
    """meta reaches call_tool as the SDK hands it over: validated, or None without _meta."""
    stubs = {hot: Stub(ToolResponse(("ok",))) for hot in (False, True)}
    messages = [call(1, "t", _meta={"progressToken": 5}), call(2, "t"), call(3, "t", _meta={})]
    for hot, stub in stubs.items():
        await exchange(stub, messages, hot=hot)
    assert stubs[True].metas == stubs[False].metas == [{"progress_token": 5}, None, {}]


@pytest.mark.parametrize("stubborn", [False, True])
@pytest.mark.parametrize("hot", [True, False])
async def test_a_cancelled_call_is_never_answered(hot: bool, stubborn: bool) -> None:
    """notifications/cancelled stops the handler; nothing is written for it, even if it answers."""
    stub = Stub(ToolResponse(("late",)), stubborn=stubborn)
    async with session(stub, hot=hot) as peer:
        await peer.initialize()
        peer.send(call("slow", "t", {"wait": True}))
        await stub.started.wait()
        cancel = {"requestId": "slow", "reason": "user"}
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        await stub.cancelled.wait()
        assert (await peer.request("ping", request_id="p"))["result"] == {}
    assert b'"slow"' not in b"".join(peer.wire.lines)


async def test_a_call_cancelled_right_behind_its_request_never_runs() -> None:
    """A cancellation read with its call, before the call's task starts, keeps the handler
    from running; nothing is answered for it and the next request is."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub) as peer:
        await peer.initialize()
        peer.send(call("early", "t", {"wait": True}))
        cancel = {"requestId": "early"}
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        assert (await peer.request("ping", request_id="p"))["result"] == {}
        assert (await peer.request("tools/call", {"name": "t"}, request_id="next"))["result"]
    assert not stub.started.is_set()
    assert b'"early"' not in b"".join(peer.wire.lines)


async def test_a_cancellation_by_a_stringified_id_reaches_the_call() -> None:
    """As in the SDK, a cancellation naming "7" stops the call whose id is 7."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub) as peer:
        await peer.initialize()
        peer.send(call(7, "t", {"wait": True}))
        await stub.started.wait()
        cancel = {"requestId": "7"}
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        await stub.cancelled.wait()


@pytest.mark.parametrize("hot", [True, False])
async def test_calls_running_when_stdin_ends_are_told_the_connection_closed(hot: bool) -> None:
    """A call still running when the grace after the end of stdin ends is stopped and
    answered -32000, as by the SDK."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub, hot=hot, grace=0) as peer:
        await peer.initialize()
        peer.send(call(9, "t", {"wait": True}))
        await stub.started.wait()
    assert stub.cancelled.is_set()
    closed = {"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "Connection closed"}}
    assert json.loads(peer.wire.lines[-1]) == closed


async def test_interleaved_good_and_bad_lines_each_get_their_answer(taken: list[str]) -> None:
    """Calls, bad lines, a ping and a cancellation sent together are answered one by one."""
    stub = Stub(ToolResponse(("done",)))
    async with session(stub) as peer:
        await peer.initialize()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        for message in [
            call(1, "t", {"wait": True}),
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{',
            call(3, "t"),
            b"[]",
            {"jsonrpc": "2.0", "id": 4, "method": "ping"},
            {"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": {"name": "t"}},
            cancel,
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5}},
        ]:
            peer.send(message)
        answers = {}
        for _ in range(6):
            message = await peer.receive()
            answers[json.dumps(message["id"])] = message
        await stub.cancelled.wait()
    assert answers["2"]["error"]["code"] == -32700
    assert answers["3"]["result"]["content"] == [{"text": "done", "type": "text"}]
    assert answers["4"]["result"] == {}
    assert answers["5"]["error"]["code"] == -32602
    assert answers["null"]["error"]["code"] == -32600  # [] and the null id: both id null
    assert "1" not in answers
    assert taken == ["tools/call", "tools/call"]


async def test_calls_before_the_session_opens_are_the_sdks(taken: list[str]) -> None:
    """Until initialize is answered, tools/call goes to the SDK, which refuses it."""
    async with session(sample) as peer:
        answer = await peer.request("tools/call", {"name": "ops_ping"})
    assert answer["error"]["code"] == -32602
    assert taken == []


async def test_own_middleware_turns_the_hot_path_off(taken: list[str]) -> None:
    """A server with middleware of its own answers every call through the SDK."""
    server = build_server(sample)
    seen: list[str] = []

    async def observe(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.method)
        return await call_next(ctx)

    server.middleware.append(observe)
    async with session(sample, server=server) as peer:
        await peer.initialize()
        answer = await peer.request("tools/call", {"name": "ops_ping"})
    assert answer["result"]["isError"] is False
    assert taken == [] and "tools/call" in seen


def test_the_plain_sdk_path_is_recognised() -> None:
    """A server as build_server makes it qualifies; one with cache hints does not."""
    assert plain_sdk_path(build_server(sample))
    hinted = Server("x", cache_hints={"tools/list": CacheHint(ttl_ms=5, scope="public")})
    assert not plain_sdk_path(hinted)


@pytest.mark.parametrize("hot", [True, False])
async def test_progress_and_logs_are_written_as_notices_and_the_answer_is_not(hot: bool) -> None:
    """Each report is written as a notification, the answer as none: the writer keeps the
    answer out of the reports' write."""
    export = call(3, "billing", {"action": "export", "rows": 2}, _meta={"progressToken": "p"})
    async with session(sample, hot=hot) as peer:
        await peer.initialize()
        start = len(peer.wire.lines)
        peer.send(export)
        written = await peer.until(3)
    kinds = [
        (json.loads(line).get("method"), start + index in peer.wire.notices)
        for index, line in enumerate(written)
    ]
    progress = ("notifications/progress", True)
    assert kinds == [progress, progress, (None, False)]


def _tasks_app() -> Fusion:
    """An app whose tool has a task action of each kind."""
    app = Fusion("tasked")
    jobs = app.tool("jobs", description="Jobs.")

    @jobs.action(read_only=True, task="always")
    def always() -> str:
        """Always a task."""
        return "always"

    @jobs.action(read_only=True, task="optional")
    def optional() -> str:
        """A task when the client can."""
        return "optional"

    return app


async def test_tools_with_task_actions_are_left_to_the_sdks_path(taken: list[str]) -> None:
    """A tool with a task action is the SDK's to answer (it decides per call): on 2025-11-25
    an "always" one is refused -32021 and an "optional" one answers in its request."""
    app = _tasks_app()
    messages = [call(1, "jobs", {"action": "always"}), call(2, "jobs", {"action": "optional"})]
    via_hot = await exchange(app, messages, hot=True)
    assert via_hot == await exchange(app, messages, hot=False)
    assert taken == []
    refused, answered = (json.loads(line) for line in via_hot)
    assert refused["error"]["code"] == -32021
    assert answered["result"]["content"][0]["text"].endswith("optional")


# -- 2026-07-28: no handshake, an envelope in every request's _meta ------------------------

SAME_AS_SDK_2026 = [enveloped(message) for message in SAME_AS_SDK]
SDK_ONLY_2026 = [
    *(enveloped(message) for message in SDK_ONLY[:5]),
    enveloped(call(30, "ops_ping"), **{"io.modelcontextprotocol/logLevel": "debug"}),
    enveloped(call(31, "ops_ping"), **{CAPABILITIES: {"elicitation": {}}}),
    enveloped(call(32, "ops_ping"), **{CAPABILITIES: {"sampling": {}}}),
    enveloped(call(33, "ops_ping"), **{CAPABILITIES: {"roots": {}}}),
    enveloped(call(34, "ops_ping"), **{CAPABILITIES: "none"}),
    enveloped(call(35, "ops_ping"), **{CAPABILITIES: {"experimental": 5}}),
    enveloped(call(36, "ops_ping"), **{CLIENT_INFO: {"name": 5}}),
    enveloped(call(37, "ops_ping"), **{VERSION: "2025-11-25"}),
    enveloped(call(38, "ops_ping"), **{VERSION: 20260728}),
    call(39, "ops_ping", _meta={VERSION: MODERN}),  # no capabilities
    call(40, "ops_ping"),  # no envelope at all
    enveloped({"jsonrpc": "2.0", "id": 41, "method": "tools/list"}),
]


async def test_2026_calls_get_the_sdks_bytes(taken: list[str]) -> None:
    """A 2026-07-28 call in the hot path's shape gets the very lines the SDK writes,
    serverInfo stamp and progress included."""
    via_sdk = await exchange(sample, SAME_AS_SDK_2026, hot=False, version=MODERN)
    via_hot = await exchange(sample, SAME_AS_SDK_2026, hot=True, version=MODERN)
    assert via_hot == via_sdk
    assert taken == ["tools/call"] * len(SAME_AS_SDK_2026)
    answer = json.loads(via_hot[0])
    assert answer["result"]["resultType"] == "complete"
    assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "sample"


async def test_2026_requests_outside_the_shape_get_the_sdks_answer(taken: list[str]) -> None:
    """An envelope declaring what could be asked, opting in to logs, or one the SDK reads
    otherwise, a call with no envelope, and tools/list: the SDK's, answered as before."""
    via_sdk = await exchange(sample, SDK_ONLY_2026, hot=False, version=MODERN)
    via_hot = await exchange(sample, SDK_ONLY_2026, hot=True, version=MODERN)
    assert via_hot == via_sdk
    assert taken == []


@pytest.mark.parametrize(
    "outcome",
    [
        RuntimeError("boom <secret>"),
        ToolResponse(("x",), structured_content={"n": float("nan"), "t": (1, 2)}),
        ToolResponse(("data", "<ui_passthrough>"), annotations=(None, FOR_USER)),
        ToolResponse(("see the chart",), attachments=(Image(b"\x89PNG"), Audio(b"RIFF"))),
    ],
)
async def test_odd_2026_outcomes_get_the_sdks_answer(outcome: Any, taken: list[str]) -> None:
    """An app that raises, NaN, annotated blocks or attachments: as the SDK answers at 2026."""
    messages = [enveloped(call(1, "t", {"a": 1})), enveloped(call(2, "t"))]
    via_sdk = await exchange(Stub(outcome), messages, hot=False, version=MODERN)
    via_hot = await exchange(Stub(outcome), messages, hot=True, version=MODERN)
    assert via_hot == via_sdk
    assert taken == ["tools/call", "tools/call"]


async def test_a_2026_call_needing_what_the_client_lacks_is_refused_as_by_the_sdk(
    taken: list[str],
) -> None:
    """An action requiring sampling, called by a client that declared none: -32021 on both."""
    app = Fusion("needs")
    tool = app.tool("t", description="Needs the client.")

    @tool.action(requires_client=["sampling"])
    async def needs() -> str:
        """Cannot run without sampling."""
        return "ran"

    messages = [enveloped(call(1, "t", {"action": "needs"}))]
    via_sdk = await exchange(app, messages, hot=False, version=MODERN)
    via_hot = await exchange(app, messages, hot=True, version=MODERN)
    assert via_hot == via_sdk
    assert taken == ["tools/call"]
    assert json.loads(via_hot[0])["error"]["code"] == -32021


async def test_the_2026_handler_sees_the_sdks_meta() -> None:
    """meta reaches call_tool as the SDK hands it over at 2026: the envelope, validated."""
    stubs = {hot: Stub(ToolResponse(("ok",))) for hot in (False, True)}
    messages = [enveloped(call(1, "t"), progressToken=5), enveloped(call(2, "t"))]
    for hot, stub in stubs.items():
        await exchange(stub, messages, hot=hot, version=MODERN)
    assert stubs[True].metas == stubs[False].metas
    assert stubs[True].metas[0]["progress_token"] == 5


async def test_a_session_opened_by_initialize_takes_no_2026_call(taken: list[str]) -> None:
    """After a handshake an enveloped call is refused by the SDK, never taken."""
    messages = [enveloped(call(1, "ops_ping"))]
    via_sdk = await exchange(sample, messages, hot=False)
    via_hot = await exchange(sample, messages, hot=True)
    assert via_hot == via_sdk
    assert taken == []
    assert json.loads(via_hot[0])["error"]["code"] == -32600


@pytest.mark.parametrize("hot", [True, False])
async def test_a_cancelled_2026_call_is_never_answered(hot: bool, taken: list[str]) -> None:
    """At 2026-07-28 too, notifications/cancelled stops the handler and nothing is written."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub, hot=hot) as peer:
        await peer.discover()
        peer.send(enveloped(call("slow", "t", {"wait": True})))
        await stub.started.wait()
        cancel = {"requestId": "slow", "reason": "user"}
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        await stub.cancelled.wait()
        listing = enveloped({"jsonrpc": "2.0", "id": "p", "method": "tools/list"})
        assert (await peer.request("tools/list", listing["params"], "p"))["result"]["tools"]
    assert b'"slow"' not in b"".join(peer.wire.lines)
    assert taken == (["tools/call"] if hot else [])


@pytest.mark.parametrize("hot", [True, False])
async def test_2026_calls_running_when_stdin_ends_are_told_the_connection_closed(
    hot: bool,
) -> None:
    """A 2026-07-28 call still running after the grace is answered -32000, as by the SDK."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub, hot=hot, grace=0) as peer:
        await peer.discover()
        peer.send(enveloped(call(9, "t", {"wait": True})))
        await stub.started.wait()
    assert stub.cancelled.is_set()
    closed = {"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "Connection closed"}}
    assert json.loads(peer.wire.lines[-1]) == closed
