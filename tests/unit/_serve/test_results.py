"""One wire mapping of a tool response and one tools/list cache, shared by every path."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from mcp import types
from mcp.server import Server
from mcp.types import methods
from mcp_types import SERVER_INFO_META_KEY

from mcpfusion import Fusion, Identity, Image, ToolResponse
from mcpfusion._present.response import FOR_USER
from mcpfusion._serve.jsonrpc import encode
from mcpfusion._serve.results import call_result, respond, sent_result, to_call_tool_result
from mcpfusion._serve.sdk import build_server, lists_of
from mcpfusion._tools.client import InputNeeded

pytestmark = pytest.mark.anyio

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
VERSIONS = (*HANDSHAKE_VERSIONS, "2026-07-28")

PLAIN = [
    ToolResponse(("one",)),
    ToolResponse(("a", "b <x/>", ""), is_error=True),
    ToolResponse(("row",), structured_content={"rows": [1, 2], "more": None}),
    ToolResponse(("data", "<ui>", "more"), annotations=(None, FOR_USER, None)),
    ToolResponse(("x", "y"), structured_content={}, annotations=(FOR_USER, FOR_USER)),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("response", PLAIN)
def test_plain_text_is_what_the_sdks_sieve_sends(response: ToolResponse, version: str) -> None:
    """For text blocks, some for the user only, the hot paths' shortcut equals the SDK's
    sieve of call_result, at every version."""
    sieved = methods.serialize_server_result("tools/call", version, call_result(response))
    assert encode(sent_result(response, version)) == encode(sieved)


@pytest.mark.parametrize("response", [*PLAIN, ToolResponse(("a",), attachments=(Image(b"1"),))])
def test_a_2026_result_carries_the_servers_stamp_as_the_sdk_writes_it(
    response: ToolResponse,
) -> None:
    """At 2026-07-28 the result ends with the serverInfo _meta the SDK's runner stamps."""
    server = Server("stamped", version="9")
    sieved = methods.serialize_server_result("tools/call", "2026-07-28", call_result(response))
    stamped = {**sieved, "_meta": {SERVER_INFO_META_KEY: server.server_info_stamp}}
    sent = sent_result(response, "2026-07-28", server.server_info_stamp)
    assert encode(sent) == encode(stamped)
    assert "_meta" not in sent_result(response, "2025-11-25", server.server_info_stamp)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_rare_shapes_are_the_sdks_sieve_of_call_result(version: str) -> None:
    """Annotated blocks and attachments go through the SDK's own sieve of call_result."""
    response = ToolResponse(("a", "b"), annotations=(None, FOR_USER), attachments=(Image(b"1"),))
    sieved = methods.serialize_server_result("tools/call", version, call_result(response))
    assert sent_result(response, version) == sieved


def test_call_result_is_to_mcp_with_its_result_type() -> None:
    """The handler result is ``to_mcp()`` plus ``resultType``, a new dict each time."""
    response = PLAIN[2]
    first = call_result(response)
    assert first == {**response.to_mcp(), "resultType": "complete"}
    assert call_result(response) is not first


def test_the_sdk_model_is_the_same_mapping() -> None:
    """``to_call_tool_result`` is the SDK model of the same wire form."""
    response = ToolResponse(("a", "b"), annotations=(None, FOR_USER), attachments=(Image(b"1"),))
    model = to_call_tool_result(response)
    assert model.model_dump(by_alias=True, mode="json", exclude_none=True) == call_result(response)


class _Raising:
    """An app whose ``call_tool`` raises what it is given."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None, **_: Any) -> Any:
        raise self.error


async def test_an_escaped_exception_is_the_escaped_result() -> None:
    """An exception out of the app is the model's escaped-error result, on every path."""
    app: Any = _Raising(KeyError("secret"))
    response = await respond(app, "t", {}, None, _no_progress, None, _NO_CLIENT)
    assert response.is_error and "secret" not in response.text


async def test_a_question_of_2026_propagates() -> None:
    """``InputNeeded`` is the SDK path's to answer: ``respond`` lets it through."""
    app: Any = _Raising(InputNeeded({"q0": {}}, "{}"))
    with pytest.raises(InputNeeded, match="input needed"):
        await respond(app, "t", {}, None, _no_progress, None, _NO_CLIENT)


async def _no_progress(done: float, total: float | None, message: str | None) -> None:
    """Reports to nobody."""


_NO_CLIENT: Any = None


def _app() -> Fusion:
    app = Fusion("lists")
    tool = app.tool("t")

    @tool.action("read", requires=["r"])
    async def read() -> str:
        return "r"

    @tool.action("write", requires=["w"])
    async def write() -> str:
        return "w"

    return app


def test_each_caller_sees_one_shared_result() -> None:
    """The cache gives each (scope key, tenant) one result, made once."""
    app = _app()
    lists = lists_of(build_server(app))
    assert lists is not None
    reader = Identity("ann", scopes={"r"})
    first = lists.result(reader)
    assert lists.result(Identity("bob", scopes={"r"})) is first
    assert lists.result(None) is not first
    assert len(lists.everything) == 1


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_the_hot_line_is_the_sdk_result_sieved(version: str) -> None:
    """The hot paths' bytes are the SDK path's result through the per-version sieve."""
    app = _app()
    lists = lists_of(build_server(app))
    assert lists is not None
    reader = Identity("ann", scopes={"r"})
    dumped = lists.result(reader).model_dump(by_alias=True, mode="json", exclude_none=True)
    expected = methods.serialize_server_result("tools/list", version, dumped)
    line = json.loads(lists.line(7, reader, version))
    assert line == {"jsonrpc": "2.0", "id": 7, "result": expected}


def test_clearing_forgets_every_result() -> None:
    """After a run-time catalog change every caller's result is made again."""
    app = _app()
    lists = lists_of(build_server(app))
    assert lists is not None
    before = lists.result(None)
    line = lists.line(1, None, "2025-11-25")
    lists.clear()
    assert lists.result(None) is not before
    assert lists.line(1, None, "2025-11-25") == line
    assert isinstance(before, types.ListToolsResult)
