"""A Presenter per caller over real HTTP: two API keys, two views of one record, one refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from mcpfusion import Fusion, HttpOptions, Identity, Presenter
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.server import asgi_app
from mcpfusion.wire import parse
from tests.client_results import first_text
from tests.e2e.auth_servers import serving

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

VET_KEY = "sk_test_vet_0123456789abcdef0123456789abcdef"
DESK_KEY = "sk_test_desk_0123456789abcdef0123456789abcdef"
GUEST_KEY = "sk_test_guest_0123456789abcdef0123456789abcdef"


class Visit(BaseModel):
    """What the front desk may read of a visit."""

    pet: str
    owner_phone: str


class ClinicalVisit(Visit):
    """What the vet reads: the clinical notes too."""

    notes: str


def clinic_app() -> Fusion:
    """A clinic whose visits show the vet the notes and the desk only the booking."""
    app = Fusion("clinic")
    visits = app.tool("visits", requires={"clinic:read"})
    desk_view = Presenter("Visit", Visit, rules=["Phone numbers are for reminders only."])
    vet_view = Presenter("Visit", ClinicalVisit)

    @visits.action(returns={"clinic:notes": vet_view, "clinic:desk": desk_view}, read_only=True)
    def get_visit() -> dict[str, str]:
        """One visit."""
        return {"pet": "Rex", "owner_phone": "+351 912 345 678", "notes": "allergic to penicillin"}

    @visits.action(read_only=True)
    def ping() -> str:
        """Whether the clinic answers."""
        return "pong"

    visits.enable_select()
    return app


@asynccontextmanager
async def clinic() -> AsyncIterator[str]:
    """The clinic over streamable HTTP behind three API keys; yields its MCP URL."""
    read = {"mcp", "clinic:read"}
    keys = APIKeyVerifier(
        {
            hash_api_key(VET_KEY): Identity("dr-lee", scopes=read | {"clinic:notes"}),
            hash_api_key(DESK_KEY): Identity("front", scopes=read | {"clinic:desk"}),
            hash_api_key(GUEST_KEY): Identity("guest", scopes=read),
        }
    )

    def make(port: int) -> Any:
        auth = Auth(
            verifier=keys,
            resource=f"http://127.0.0.1:{port}/mcp",
            authorization_servers=["https://id.test.example"],
            required_scopes=["mcp"],
        )
        return asgi_app(clinic_app(), HttpOptions(auth=auth, stateless=True, json_response=True))

    async with serving(make) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def client(url: str, key: str) -> AsyncIterator[Client]:
    """The official client, sending ``key`` as its bearer token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as connected,
    ):
        yield connected


async def visit_and_tools(url: str, key: str) -> tuple[Any, Any]:
    """The ``get_visit`` result and the ``tools/list`` of the caller holding ``key``."""
    async with client(url, key) as connected:
        tools = (await connected.list_tools()).tools
        result = await connected.call_tool("visits", {"action": "get_visit"})
    return result, tools


async def test_each_caller_reads_its_own_view_and_lists_its_own_select_keys() -> None:
    """The vet reads the notes, the desk the booking and its rule; each `_select` names its keys."""
    with anyio.fail_after(60):
        async with clinic() as url:
            vet, vet_tools = await visit_and_tools(url, VET_KEY)
            desk, desk_tools = await visit_and_tools(url, DESK_KEY)
    assert "notes: allergic to penicillin" in first_text(vet)
    assert "notes" not in first_text(desk) and "penicillin" not in first_text(desk)
    assert parse(desk.content).view.system_rules == ("Phone numbers are for reminders only.",)
    select = [t.input_schema["properties"]["_select"] for t in (*vet_tools, *desk_tools)]
    assert [s["items"]["enum"] for s in select] == [
        ["notes", "owner_phone", "pet"],
        ["owner_phone", "pet"],
    ]


async def test_a_caller_with_no_view_is_refused_and_not_listed_the_action() -> None:
    """A caller holding neither scope: FORBIDDEN naming both, the action left out of its list."""
    with anyio.fail_after(60):
        async with clinic() as url:
            guest, tools = await visit_and_tools(url, GUEST_KEY)
    error = parse(guest.content).error
    assert guest.is_error and error is not None and error.code == "FORBIDDEN"
    assert error.message == (
        "This call needs one of the scopes 'clinic:desk', 'clinic:notes', which the caller "
        "does not have."
    )
    assert tools[0].input_schema["properties"]["action"]["enum"] == ["ping"]
