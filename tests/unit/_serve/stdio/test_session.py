"""The stdio session in-process: every bad line answered, blank lines, batches, the end."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
import pytest

from mcpfusion import ToolResponse
from tests.e2e.sample_app import app as sample
from tests.stdio_session import Stub, call, session

pytestmark = pytest.mark.anyio


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


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
async def test_requests_right_before_the_end_of_stdin_are_each_answered_once(
    version: str,
) -> None:
    """Requests followed at once by the end of stdin each get one answer: their result."""
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
            assert "result" in answer, answer
            answered.append(answer["id"])
    expected = list(range(20)) + (["b1", "b2"] if version == "2025-03-26" else [])
    assert sorted(answered, key=str) == sorted(expected, key=str)
