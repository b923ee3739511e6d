"""How the live client builds requests, and the options it refuses."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from mcpfusion import DefinitionError, Identity
from mcpfusion._openapi.auth import ApiKey, Bearer
from mcpfusion._openapi.document import load_document
from mcpfusion._openapi.operations import Operation, operations
from mcpfusion._openapi.upstream import Upstream

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"
FOUND = {op.action: op for op in operations(load_document(DATA / "petstore.yaml"))}


def build(upstream: Upstream, operation: Operation, **arguments: object) -> httpx2.Request:
    """The request ``upstream`` would send."""
    return upstream._request(httpx2.AsyncClient(), operation, arguments)


def test_a_path_value_cannot_leave_its_segment() -> None:
    """Slashes and dots in a path argument are quoted: no climbing to another route."""
    upstream = Upstream("http://api.test/v3")
    request = build(upstream, FOUND["getUserByName"], username="../admin?x=1")
    assert request.url.raw_path == b"/v3/user/..%2Fadmin%3Fx%3D1"


def test_query_values_and_credentials_are_placed_as_declared() -> None:
    """Query values are text (booleans as true), lists repeat; an API key can go in the query."""
    upstream = Upstream("http://api.test/v3", credentials=ApiKey("k", name="key", location="query"))
    request = build(upstream, FOUND["findPetsByTags"], tags=["a", "b"])
    assert request.url.params.get_list("tags") == ["a", "b"]
    assert request.url.params["key"] == "k"


@pytest.mark.anyio
async def test_a_bearer_function_is_read_for_each_request() -> None:
    """A token function is called per request, so a refreshed token is sent."""
    tokens = iter(["one", "two"])
    bearer = Bearer(lambda: next(tokens))
    assert not bearer.per_caller
    assert (await bearer.current(), await bearer.current()) == ("one", "two")


@pytest.mark.anyio
async def test_a_bearer_function_of_the_caller_gets_their_identity() -> None:
    """A function taking the identity (sync or async) is given the caller's."""

    async def exchange(identity: Identity | None) -> str:
        return f"token-for-{identity.subject if identity else 'nobody'}"

    bearer = Bearer(exchange)
    assert bearer.per_caller
    assert await bearer.current(Identity("ann")) == "token-for-ann"
    with pytest.raises(TypeError, match="returned no token"):
        await Bearer(lambda identity: "").current(None)


def test_the_token_goes_in_the_authorization_header() -> None:
    """The token the send step obtained is the request's bearer."""
    request = upstream_request("t-1")
    assert request.headers["authorization"] == "Bearer t-1"


def upstream_request(token: str) -> httpx2.Request:
    """The getInventory request with ``token``."""
    upstream = Upstream("http://api.test/v3", credentials=Bearer(token))
    return upstream._request(httpx2.AsyncClient(), FOUND["getInventory"], {}, token)


def test_bodies_are_json_and_absent_arguments_are_not_sent() -> None:
    """The body argument is the JSON body; an argument left out is not in the request."""
    upstream = Upstream("http://api.test/v3")
    request = build(upstream, FOUND["updatePetWithForm"], petId=3, name=None)
    assert str(request.url) == "http://api.test/v3/pet/3"
    order = build(upstream, FOUND["placeOrder"], body={"petId": 1})
    assert order.content == b'{"petId":1}'


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "ftp://x"}, "base_url is an http"),
        ({"timeout": 0}, "timeout is a positive number"),
        ({"retries": -1}, "retries is a count"),
        ({"max_bytes": 0}, "max_bytes is a positive"),
        ({"credentials": "token"}, "auth takes an ApiKey or a Bearer"),
    ],
)
def test_bad_options_fail_at_definition_time(options: dict[str, object], message: str) -> None:
    """Every option is checked where the app is built."""
    arguments = {"base_url": "http://api.test", **options}
    with pytest.raises(DefinitionError, match=message):
        Upstream(**arguments)  # type: ignore[arg-type]


def test_credentials_are_checked_where_they_are_made() -> None:
    """An empty key or token is refused at once."""
    with pytest.raises(DefinitionError, match="non-empty key"):
        ApiKey("")
    with pytest.raises(DefinitionError, match="non-empty token"):
        Bearer("")
