"""The stdio session in-process: bad lines, batches, and the hot path against the SDK's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pydantic_core
import pytest
from mcp.server import Server
from mcp.server.caching import CacheHint

import mcpfusion._stdio as stdio
from mcpfusion import ToolResponse
from mcpfusion._lines import LineReader
from mcpfusion._sdk import build_server
from tests.e2e.sample_app import app as sample

pytestmark = pytest.mark.anyio

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Wire:
    """A stdout stand-in: every line written, read back one by one."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.lost = anyio.Event()
        self._read = 0
        self._more = anyio.Event()

    def write(self, line: bytes) -> None:
        """Keeps ``line``."""
        self.lines.append(line)
        self._more.set()

    async def drain(self) -> None:
        """Never full; a checkpoint, as a real drain may be."""
        await anyio.lowlevel.checkpoint()

    async def next_line(self) -> bytes:
        """The next line written, once there is one."""
        while self._read >= len(self.lines):
            self._more = anyio.Event()
            await self._more.wait()
        self._read += 1
        return self.lines[self._read - 1]


class Peer:
    """The client's end of an in-process session."""

    def __init__(self, lines: LineReader, wire: Wire) -> None:
        self.lines = lines
        self.wire = wire

    def send(self, message: Any) -> None:
        """Sends a message (bytes go as they are), one line."""
        raw = message if isinstance(message, bytes) else pydantic_core.to_json(message)
        self.lines.feed(raw + b"\n")

    async def receive(self) -> Any:
        """The next message the server wrote, parsed."""
        return json.loads(await self.wire.next_line())

    async def until(self, request_id: Any) -> list[bytes]:
        """Every line written up to and including the answer to ``request_id``."""
        written = []
        while True:
            line = await self.wire.next_line()
            written.append(line)
            message = json.loads(line)
            answered = isinstance(message, dict) and "method" not in message
            if answered and message.get("id") == request_id:
                return written

    async def request(self, method: str, params: Any = None, request_id: Any = 1) -> Any:
        """Sends a request and returns its answer, parsed."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return json.loads((await self.until(request_id))[-1])

    async def initialize(self, version: str = "2025-11-25") -> None:
        """The handshake, as a client opens a session."""
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        }
        answer = await self.request("initialize", params, "init")
        assert answer["result"]["protocolVersion"] == version
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@asynccontextmanager
async def session(
    app: Any, *, hot: bool = True, server: Server[Any] | None = None, max_line: int = 1 << 20
) -> AsyncIterator[Peer]:
    """A session of ``app`` in this process, fed and read through ``Peer``; ends at exit."""
    lines, wire = LineReader(max_line), Wire()
    served = stdio._Session(server or build_server(app), lines, wire, app if hot else None)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(served.run)
            try:
                yield Peer(lines, wire)
            finally:
                lines.feed_eof()


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods the hot path answered, in order."""
    answered: list[str] = []
    take = stdio._HotPath.take

    def spy(self: Any, message: dict[str, Any], version: str) -> bool:
        took = take(self, message, version)
        if took:
            answered.append(message["method"])
        return took

    monkeypatch.setattr(stdio._HotPath, "take", spy)
    return answered


def call(request_id: Any, name: str, arguments: Any = None, **params: Any) -> dict[str, Any]:
    """A ``tools/call`` request."""
    body: dict[str, Any] = {"name": name, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": body}


async def exchange(
    app: Any, messages: list[dict[str, Any]], *, hot: bool, version: str = "2025-11-25"
) -> list[bytes]:
    """Every line a session writes for ``messages``, each sent once the last is answered."""
    async with session(app, hot=hot) as peer:
        await peer.initialize(version)
        written = []
        for message in messages:
            peer.send(message)
            written += await peer.until(message["id"])
    return written


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


class Stub:
    """An app whose one tool returns (or raises) what it is given."""

    name = "stub"
    version = "1.0.0"
    instructions = None

    def __init__(self, outcome: Any, *, stubborn: bool = False) -> None:
        self.outcome = outcome
        self.stubborn = stubborn  # swallows its cancellation and answers anyway
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.release = anyio.Event()
        self.metas: list[Any] = []

    def list_tools(self) -> list[dict[str, Any]]:
        """One tool taking anything."""
        return [{"name": "t", "inputSchema": {"type": "object"}}]

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        """The outcome; with ``{"wait": true}`` only once released (or cancelled)."""
        self.metas.append(meta)
        if arguments and arguments.get("wait"):
            self.started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                if not self.stubborn:
                    raise
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize(
    "outcome",
    [
        RuntimeError("boom <secret>"),
        "not a response",
        ToolResponse(("a\ud800b",)),
        ToolResponse(("x",), structured_content={"n": float("nan"), "none": None, "t": (1, 2)}),
        ToolResponse(("x",), is_error=True, structured_content={}),
    ],
)
async def test_odd_outcomes_get_the_sdks_answer(outcome: Any, taken: list[str]) -> None:
    """An app that raises, returns no response, a lone surrogate or NaN: as the SDK answers."""
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
    """At the end of stdin a running call is stopped and answered -32000, as by the SDK."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub, hot=hot) as peer:
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


BAD_LINES = [
    (b"not json", None, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping"', 5, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":' + b"[" * 10_000, 5, -32700),
    (b'{"jsonrpc":"2.0","params":{"x":' + b"[" * 10_000 + b"]" * 10_000 + b'},"id":5}', 5, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\\ud800"}}', 5, -32700),
    (
        b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"x":' + b"9" * 5000 + b"}}",
        "s",
        -32700,
    ),
    (b"[]", None, -32600),
    (b'"hello"', None, -32600),
    (b"null", None, -32600),
    (b'{"jsonrpc":"2.0","id":5}', 5, -32600),
    (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', 5, -32600),
    (b'{"id":5,"method":"ping"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":42}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"result":"x"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, -32600),
    (b'[{"jsonrpc":"2.0","id":5,"method":"ping"}]', [5], -32600),  # no batches at 2025-11-25
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","x":"' + b"y" * 40_000 + b'"}', 5, -32600),  # long
]


@pytest.mark.parametrize(("line", "request_id", "code"), BAD_LINES)
async def test_every_bad_line_is_answered_once(line: bytes, request_id: Any, code: int) -> None:
    """A bad line gets one error with its id (or null), short and quoting nothing."""
    async with session(sample, max_line=32_768) as peer:
        await peer.initialize()
        peer.send(line)
        answer = await peer.receive()
        assert (await peer.request("ping", request_id="after"))["result"] == {}
    if isinstance(request_id, list):  # a refused batch: one error per request, as an array
        assert [item["id"] for item in answer] == request_id
        answer = answer[0]
    else:
        assert answer["id"] == request_id
    assert answer["error"]["code"] == code
    message = answer["error"]["message"]
    assert len(message) < 120 and "pydantic" not in message and "ping" not in message
    assert len(peer.wire.lines) == 3  # initialize, the error, the ping: nothing else


async def test_blank_lines_and_bad_utf8_are_read_as_the_sdk_reads_them() -> None:
    """A blank line is skipped; invalid UTF-8 becomes U+FFFD and the request is served."""
    async with session(sample) as peer:
        await peer.initialize()
        peer.send(b"   \t")
        peer.send(b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}')
        answer = await peer.receive()
    assert answer == {"jsonrpc": "2.0", "id": "\ufffd", "result": {}}


async def test_a_batch_on_2025_03_26_is_answered_as_one_array() -> None:
    """Each member is served; the answers come back as one array; notifications get none."""
    async with session(sample) as peer:
        await peer.initialize("2025-03-26")
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            call(2, "ops_ping"),
            {"jsonrpc": "2.0", "id": 3},
            7,
        ]
        peer.send(batch)
        answers = await peer.receive()
        peer.send([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
        assert (await peer.request("ping", request_id="after"))["id"] == "after"
    by_id = {json.dumps(answer["id"]): answer for answer in answers}
    assert sorted(by_id) == ["1", "2", "3", "null"]
    assert by_id["1"]["result"] == {}
    assert by_id["2"]["result"]["isError"] is False
    assert by_id["3"]["error"]["code"] == by_id["null"]["error"]["code"] == -32600


async def test_a_batch_member_cancelled_is_left_out_of_the_array() -> None:
    """The answers of a batch whose member was cancelled go out without it."""
    stub = Stub(ToolResponse(("late",)))
    async with session(stub) as peer:
        await peer.initialize("2025-03-26")
        peer.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, call(2, "t", {"wait": True})])
        await stub.started.wait()
        cancel = {"requestId": 2}
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        answers = await peer.receive()
    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


@pytest.mark.parametrize("version", [None, "2024-11-05", "2025-06-18", "2025-11-25"])
async def test_a_batch_elsewhere_is_refused_request_by_request(version: str | None) -> None:
    """Before a session or at a version without batches, each request gets -32600."""
    async with session(sample) as peer:
        if version is not None:
            await peer.initialize(version)
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        ]
        peer.send(batch)
        refused = await peer.receive()
        peer.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        alone = await peer.receive()
    assert [(r["id"], r["error"]["code"]) for r in refused] == [(1, -32600), ("b", -32600)]
    assert alone["id"] is None and alone["error"]["code"] == -32600


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
    assert stdio._plain_sdk_path(build_server(sample))
    hinted = Server("x", cache_hints={"tools/list": CacheHint(ttl_ms=5, scope="public")})
    assert not stdio._plain_sdk_path(hinted)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
async def test_requests_right_before_the_end_of_stdin_are_each_answered_once(
    version: str,
) -> None:
    """Requests followed at once by the end of stdin each get one answer, or -32000."""
    async with session(sample) as peer:
        await peer.initialize(version)
        pings = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(20)]
        peer.lines.feed(b"".join(pydantic_core.to_json(p) + b"\n" for p in pings))
        if version == "2025-03-26":
            peer.send([{"jsonrpc": "2.0", "id": "b1", "method": "ping"}, call("b2", "ops_ping")])
    answered: list[Any] = []
    for line in peer.wire.lines[1:]:
        message = json.loads(line)
        for answer in message if isinstance(message, list) else [message]:
            assert "result" in answer or answer["error"]["code"] == -32000
            answered.append(answer["id"])
    expected = list(range(20)) + (["b1", "b2"] if version == "2025-03-26" else [])
    assert sorted(answered, key=str) == sorted(expected, key=str)
