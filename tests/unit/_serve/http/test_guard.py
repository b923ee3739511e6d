"""Unit tests of mcpfusion._serve.http.guard: Host and Origin parsed and matched exactly."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from mcpfusion import HttpOptions
from mcpfusion._serve.http.guard import MESSAGE, RequestGuard
from mcpfusion._serve.http.hosts import Address, HostPolicy, Origin


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("localhost", Address("localhost", None)),
        ("LOCALHOST:8000", Address("localhost", "8000")),
        ("[::1]:80", Address("::1", "80")),
        ("[::1]", Address("::1", None)),
        ("example.com.:443", Address("example.com.", "443")),
        ("name:*", Address("name", "*")),
    ],
)
def test_addresses_parse(text: str, parsed: Address) -> None:
    """Host forms read as host and port: case folded, brackets dropped, a trailing dot kept."""
    assert Address.parse(text) == parsed


@pytest.mark.parametrize(
    "text",
    ["127.0.0.1:evil.com", "a:b:c", "::1", "[::1", "[nope]:80", "h:123456", "", "a b", "x@y"],
)
def test_malformed_addresses_do_not_parse(text: str) -> None:
    """Anything but host, host:port and [v6]:port is no address."""
    assert Address.parse(text) is None


def test_ports_match_exactly_or_any() -> None:
    """name:* allows any port or none; name:N that port; name the default port or none."""
    any_port = Address("h", "*")
    assert Address("h", "1").matches(any_port) and Address("h", None).matches(any_port)
    assert not Address("h", "2").matches(Address("h", "1"))
    assert Address("h", None).matches(Address("h", None))
    assert not Address("hh", "1").matches(any_port)


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:8000", True),
        ("HTTP://LocalHost:8000", True),
        ("http://localhost", False),
        ("https://localhost:8000", False),
        ("http://localhost:8000.evil.com", False),
        ("http://localhost:8000/path", False),
        ("null", False),
    ],
)
def test_origins_match_scheme_host_and_port(origin: str, allowed: bool) -> None:
    """An Origin is allowed only for the same scheme, host and port."""
    policy = HostPolicy(("localhost:*",), ("http://localhost:8000",))
    assert policy.origin_allowed([origin]) is allowed


def test_default_ports_count_as_given() -> None:
    """An origin without port matches a pattern naming the scheme's default port."""
    [origin] = [Origin.parse("https://api.example")]
    assert origin is not None
    allowed = Origin.parse("https://api.example:443")
    assert allowed is not None and origin.matches(allowed)


def test_more_than_one_origin_is_refused() -> None:
    """Two Origin headers are refused, whatever they say."""
    policy = HostPolicy(("localhost:*",), ("http://localhost:1",))
    assert not policy.origin_allowed(["http://localhost:1", "http://localhost:1"])
    assert policy.origin_allowed([])


def test_a_trailing_dot_or_a_second_host_header_is_refused() -> None:
    """A trailing dot (localhost.) names another host, and two Host headers name none."""
    policy = HostPolicy(("localhost:*",))
    assert policy.host_allowed(["localhost:8000"])
    assert not policy.host_allowed(["localhost.:8000"])
    assert not policy.host_allowed(["localhost:8000", "localhost:8000"])
    assert not policy.host_allowed([])
    assert HostPolicy(("example.com.:*",)).host_allowed(["example.com."])


def test_bad_patterns_fail_where_they_are_given() -> None:
    """A pattern that is not a host or an origin raises when the policy is made."""
    with pytest.raises(ValueError, match="not a host or host:port pattern"):
        HostPolicy(("http://x",))
    with pytest.raises(ValueError, match=r"not an origin \(scheme://host\[:port\]\)"):
        HostPolicy(("x:*",), ("x",))


@pytest.mark.parametrize(
    ("field", "value", "error", "match"),
    [
        ("max_sessions", 0, ValueError, "max_sessions must be positive"),
        ("body_timeout", "1", TypeError, "body_timeout must be a number"),
        ("header_timeout", -1.0, ValueError, "header_timeout must be positive"),
        ("cors_origins", "https://x", TypeError, "cors_origins is a list of str"),
        ("keep_alive_timeout", True, TypeError, "keep_alive_timeout must be a int"),
        ("max_head_bytes", 0, ValueError, "max_head_bytes must be positive"),
        ("max_headers", 1.5, TypeError, "max_headers must be a int"),
    ],
)
def test_http_options_check_the_new_fields(
    field: str, value: object, error: type[Exception], match: str
) -> None:
    """HttpOptions refuses timeouts and limits of the wrong type or sign where it is made."""
    with pytest.raises(error, match=match):
        HttpOptions(**{field: value})  # type: ignore[arg-type]


async def _seen_by_the_app(body: bytes) -> list[tuple[Any, bytes]]:
    """``(scope[MESSAGE], body)`` of each request a guard hands its app for one POST."""
    seen: list[tuple[Any, bytes]] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        got = await receive()
        seen.append((scope.get(MESSAGE), got.get("body", b"")))
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = RequestGuard(
        app, HostPolicy(None), stateless=False, max_body_bytes=10_000, body_timeout=5
    )
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s")]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    request = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        if request:
            return request.pop()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        """The client: reads nothing back."""

    with anyio.fail_after(10):
        await guard(scope, receive, send)
    return seen


@pytest.mark.anyio
async def test_the_guard_hands_the_parsed_message_on() -> None:
    """The app gets the body and, in its scope, that body's message parsed once."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    assert await _seen_by_the_app(body) == [(json.loads(body), body)]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert await _seen_by_the_app(note) == [(json.loads(note), note)]


@pytest.mark.anyio
async def test_each_batch_member_comes_with_its_own_message() -> None:
    """A batch member is handed on as its own request, with its own parsed message."""
    members = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    seen = await _seen_by_the_app(json.dumps(members).encode())
    assert [message for message, _ in seen] == members
    assert [json.loads(body) for _, body in seen] == members
