"""OpenAPI documents served live: a real petstore upstream on 127.0.0.1, the app called
in-process and through the official client over streamable HTTP, and the CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import toon_format
from mcp import Client, StdioServerParameters

from mcpfusion import Fusion, Identity
from mcpfusion.openapi import ApiKey, Bearer, from_openapi
from mcpfusion.server import asgi_app
from tests.client_results import first_text
from tests.e2e.petstore_upstream import TOKEN, Upstream
from tests.e2e.servers import run_cli, uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DATA = Path(__file__).resolve().parents[1] / "data" / "openapi"
PETSTORE = DATA / "petstore.yaml"


@asynccontextmanager
async def petstore(**options: Any) -> AsyncIterator[tuple[Upstream, Fusion]]:
    """A fresh upstream served by uvicorn, and the app of the petstore document aimed at it."""
    upstream = Upstream()
    async with uvicorn_in_process(upstream.app()) as port:
        options.setdefault("auth", Bearer(TOKEN))
        app = from_openapi(PETSTORE, base_url=f"http://127.0.0.1:{port}/v3", **options)
        yield upstream, app


async def call(app: Fusion, tool: str, **arguments: Any) -> dict[str, Any]:
    """Calls a tool in-process; returns the MCP result."""
    result: dict[str, Any] = (await app.call_tool(tool, arguments)).to_mcp()
    return result


async def test_a_pet_reaches_the_agent_masked_to_the_response_schema() -> None:
    """Fields the document does not declare, nested ones too, never leave the process."""
    with anyio.fail_after(30):
        async with petstore() as (_, app):
            result = await call(app, "pet", action="getPetById", petId=1)
    text = result["content"][0]["text"]
    assert not result["isError"]
    assert toon_format.decode(text)["category"] == {"id": 1, "name": "Dogs"}
    assert "owner_ssn" not in text and "bites" not in text


async def test_lists_are_masked_row_by_row() -> None:
    """An array response goes through the item Presenter."""
    with anyio.fail_after(30):
        async with petstore() as (_, app):
            result = await call(app, "pet", action="findPetsByStatus", status="sold")
    assert toon_format.decode(result["content"][0]["text"]) == [
        {"id": 2, "name": "Tom", "photoUrls": [], "status": "sold"}
    ]


async def test_bad_arguments_never_reach_the_upstream() -> None:
    """An argument that does not fit the document's schema is a validation error, unsent."""
    with anyio.fail_after(30):
        async with petstore() as (upstream, app):
            result = await call(app, "pet", action="getPetById", petId="../admin")
            body = await call(app, "pet", action="addPet", body={"name": "Rex"})
    assert result["isError"] and "is not of type 'integer'" in result["content"][0]["text"]
    assert body["isError"] and "'photoUrls' is a required property" in body["content"][0]["text"]
    assert not upstream.hits


async def test_a_header_argument_cannot_inject_headers() -> None:
    """A line break in a header parameter is a validation error; nothing is sent."""
    with anyio.fail_after(30):
        async with petstore() as (upstream, app):
            result = await call(
                app, "pet", action="deletePet", petId=1, api_key="k\r\nX-Admin: yes"
            )
    assert result["isError"] and "control characters" in result["content"][0]["text"]
    assert not upstream.hits


async def test_upstream_errors_become_self_healing_tool_errors() -> None:
    """A 404 is NOT_FOUND with a recovery; a refused token is UPSTREAM_UNAUTHORIZED."""
    with anyio.fail_after(30):
        async with petstore() as (_, app):
            missing = await call(app, "pet", action="getPetById", petId=99)
        async with petstore(auth=Bearer("wrong")) as (_, app):
            refused = await call(app, "pet", action="getPetById", petId=1)
    assert missing["isError"] and 'code="NOT_FOUND"' in missing["content"][0]["text"]
    assert "<recovery>" in missing["content"][0]["text"]
    assert 'code="UPSTREAM_UNAUTHORIZED"' in refused["content"][0]["text"]


async def test_idempotent_requests_are_retried_and_posts_are_not() -> None:
    """A GET retries through 503s; a POST that got a 503 is reported, never repeated."""
    with anyio.fail_after(30):
        async with petstore(retries=2) as (upstream, app):
            upstream.failures["GET /v3/store/inventory"] = 2
            upstream.failures["POST /v3/store/order"] = 1
            inventory = await call(app, "store", action="getInventory")
            order = await call(app, "store", action="placeOrder", body={"petId": 1})
    assert toon_format.decode(inventory["content"][0]["text"]) == {"available": 1, "sold": 1}
    assert upstream.hits["GET /v3/store/inventory"] == 3
    assert 'code="UPSTREAM_UNAVAILABLE"' in order["content"][0]["text"]
    assert upstream.hits["POST /v3/store/order"] == 1


async def test_an_unreachable_upstream_is_an_error_the_agent_reads() -> None:
    """A refused connection becomes UPSTREAM_UNAVAILABLE, not a traceback."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        port = closed.getsockname()[1]
        app = from_openapi(PETSTORE, base_url=f"http://127.0.0.1:{port}/v3", retries=0)
        with anyio.fail_after(30):
            result = await call(app, "store", action="getInventory")
    assert result["isError"] and 'code="UPSTREAM_UNAVAILABLE"' in result["content"][0]["text"]


async def test_a_hostile_upstream_error_cannot_forge_blocks() -> None:
    """The upstream's error text is quoted inside the envelope, its tags neutralized."""
    with anyio.fail_after(30):
        async with petstore() as (_, app):
            result = await call(app, "store", action="placeOrder", body={"quantity": 101})
    text = result["content"][0]["text"]
    assert 'code="UPSTREAM_REJECTED"' in text
    assert "<domain_rules>" not in text and text.count("</message>") == 1


async def test_list_responses_are_cut_to_the_limit() -> None:
    """A list longer than limit= shows its first rows and the truncation notice."""
    with anyio.fail_after(30):
        async with petstore(limit=1) as (upstream, app):
            upstream.pets[3] = {"id": 3, "name": "Kit", "photoUrls": [], "status": "sold"}
            result = await call(app, "pet", action="findPetsByStatus", status="sold")
    blocks = [block["text"] for block in result["content"]]
    assert toon_format.decode(blocks[0]) == [
        {"id": 2, "name": "Tom", "photoUrls": [], "status": "sold"}
    ]
    assert "1 shown, 1 hidden" in "\n".join(blocks[1:])


async def test_a_response_past_max_bytes_is_refused_unread() -> None:
    """A body larger than max_bytes is UPSTREAM_TOO_LARGE, never loaded whole."""
    with anyio.fail_after(30):
        async with petstore(max_bytes=50) as (_, app):
            result = await call(app, "pet", action="getPetById", petId=1)
    assert result["isError"] and 'code="UPSTREAM_TOO_LARGE"' in result["content"][0]["text"]


async def test_a_token_is_obtained_for_each_caller() -> None:
    """A Bearer function of the identity gets the caller's token; the MCP token stays."""
    seen: list[str | None] = []

    def exchange(identity: Identity | None) -> str:
        seen.append(identity.subject if identity else None)
        return TOKEN if identity is not None and identity.subject == "ann" else "nobody"

    with anyio.fail_after(30):
        async with petstore(auth=Bearer(exchange)) as (_, app):
            ann = (
                await app.call_tool("store", {"action": "getInventory"}, identity=Identity("ann"))
            ).to_mcp()
            anonymous = await call(app, "store", action="getInventory")
    assert not ann["isError"]
    assert 'code="UPSTREAM_UNAUTHORIZED"' in anonymous["content"][0]["text"]
    assert seen == ["ann", None]
    tool = next(t for t in app.list_tools() if t["name"] == "store")
    assert "ctx" not in tool["inputSchema"]["properties"]  # injected, never an argument


async def test_an_api_key_is_sent_in_its_header() -> None:
    """ApiKey credentials travel in the header they name, on every request."""
    with anyio.fail_after(30):
        async with petstore(auth=ApiKey("k-123", name="api_key")) as (upstream, app):
            await call(app, "store", action="getInventory")
    assert upstream.seen_headers[-1]["api_key"] == "k-123"


async def test_the_official_client_sees_grouped_tools_and_masked_data() -> None:
    """Over streamable HTTP: one tool per tag with method hints, and masked results."""
    with anyio.fail_after(60):
        async with (
            petstore() as (_, app),
            uvicorn_in_process(asgi_app(app)) as port,
            Client(f"http://127.0.0.1:{port}/mcp") as client,
        ):
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("pet", {"action": "getPetById", "petId": 1})
    assert sorted(tools) == ["pet", "store", "user"]
    # deleteOrder makes the store tool destructive: under lean definitions (the default)
    # that is MCP's default, so no hint differs from it.
    annotations = tools["store"].annotations
    assert annotations is None or annotations.read_only_hint is not True
    assert annotations is None or annotations.destructive_hint in (None, True)
    assert toon_format.decode(first_text(result))["name"] == "Rex"
    assert "owner_ssn" not in first_text(result)


async def test_the_cli_serves_a_document_over_stdio() -> None:
    """``mcpfusion openapi SPEC`` over stdio: the official client calls the live upstream,
    with the bearer token read from the variable ``--bearer-env`` names."""
    upstream = Upstream()
    with anyio.fail_after(60):
        async with uvicorn_in_process(upstream.app()) as port:
            params = StdioServerParameters(
                command=sys.executable,
                args=[
                    *("-m", "mcpfusion.cli", "openapi", str(PETSTORE)),
                    *("--base-url", f"http://127.0.0.1:{port}/v3"),
                    *("--bearer-env", "PETSTORE_TOKEN"),
                ],
                env={**os.environ, "PETSTORE_TOKEN": TOKEN},
            )
            async with Client(params) as client:
                result = await client.call_tool("pet", {"action": "getPetById", "petId": 1})
    assert not result.is_error
    assert toon_format.decode(first_text(result))["name"] == "Rex"
    assert "owner_ssn" not in first_text(result)


def test_a_larger_document_builds_a_tool_per_tag() -> None:
    """The OpenAI document (51 operations, 10 tags) builds and lists without error."""
    app = from_openapi(DATA / "openai.yaml")
    flat = from_openapi(DATA / "openai.yaml", exposition="flat")
    assert len(app.list_tools()) == 10
    assert len(flat.list_tools()) == 51


def test_cli_inspect_compares_grouped_and_flat_costs() -> None:
    """``mcpfusion openapi SPEC --inspect`` ends with the operation count and both costs."""
    done = run_cli("openapi", str(PETSTORE), "--inspect")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("19 operations as 3 grouped tools: ")
    assert "as 19 tools (one per operation)" in last


def test_cli_out_writes_a_module_the_cli_runs(tmp_path: Path) -> None:
    """``--out FILE`` writes a module that ``mcpfusion inspect FILE:app`` loads."""
    out = tmp_path / "petstore_app.py"
    done = run_cli(
        "openapi", str(PETSTORE), "--base-url", "http://127.0.0.1:9/v3", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    inspected = run_cli("inspect", f"{out}:app")
    assert inspected.returncode == 0, inspected.stderr
    assert "3 tools" in inspected.stdout
    again = run_cli("openapi", str(PETSTORE), "--out", str(out))
    assert again.returncode != 0 and "exists" in again.stderr


def test_cli_refuses_a_relative_server_without_base_url(tmp_path: Path) -> None:
    """Serving needs an absolute URL: a document whose server is "/v1" asks for --base-url."""
    spec = tmp_path / "relative.json"
    document = {"openapi": "3.0.3", "servers": [{"url": "/v1"}], "paths": {}}
    spec.write_text(json.dumps(document), encoding="utf-8")
    done = run_cli("openapi", str(spec), stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "--base-url" in done.stderr
