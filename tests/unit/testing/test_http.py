"""``HttpTester``: the official client on the real ASGI app in-process, auth headers included."""

from __future__ import annotations

import anyio
import pytest
from pydantic import BaseModel

from mcpfusion import Fusion, Icon, Identity, Presenter
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.testing import FusionTester, HttpTester

KEY = "test-key-not-a-secret"


class Thing(BaseModel):
    """What a thing shows."""

    id: str


def _app() -> Fusion:
    app = Fusion("http-tested", version="2.0")
    view = Presenter("Thing", Thing, rules=["ids are stable"])
    things = app.tool("things", description="Things.")

    @things.action(returns=view, read_only=True)
    def show(thing_id: str) -> dict[str, str]:
        """One thing."""
        return {"id": thing_id}

    @things.action(requires=["things:write"])
    def wipe() -> str:
        """Wipes every thing."""
        return "wiped"

    return app


def _auth() -> Auth:
    identity = Identity("ci", scopes={"things:read"})
    return Auth(
        verifier=APIKeyVerifier({hash_api_key(KEY): identity}),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )


@pytest.mark.anyio
async def test_a_call_over_http_reads_back_like_an_in_process_one() -> None:
    """The blocks received over HTTP equal what ``FusionTester`` gets in-process."""
    app = _app()
    local = await FusionTester(app).call("things", "show", thing_id="t-1")
    with anyio.fail_after(30):
        async with HttpTester(app) as tester:
            result = await tester.call("things", "show", thing_id="t-1")
            assert tester.server_info["name"] == "http-tested"
    assert result.blocks == local.blocks
    assert result.system_rules == ("ids are stable",)


@pytest.mark.anyio
async def test_the_bearer_header_decides_what_the_client_sees() -> None:
    """With an API key, the caller's scopes hide the action it may not call."""
    with anyio.fail_after(30):
        async with HttpTester(
            _app(), headers={"Authorization": f"Bearer {KEY}"}, auth=_auth()
        ) as tester:
            (tool,) = await tester.list_tools()
            refused = await tester.call("things", "wipe")
    assert "show" in tool["description"] and "wipe" not in tool["description"]
    assert refused.is_error


@pytest.mark.anyio
async def test_the_http_client_reaches_the_app_without_the_protocol() -> None:
    """A request without the bearer header is answered 401 with the resource metadata."""
    with anyio.fail_after(30):
        async with HttpTester(
            _app(), headers={"Authorization": f"Bearer {KEY}"}, auth=_auth(), stateless=True
        ) as tester:
            response = await tester.http.post(
                "/mcp", json={}, headers={"Authorization": "", "Accept": "application/json"}
            )
    assert response.status_code == 401
    assert "resource_metadata" in response.headers["www-authenticate"]


@pytest.mark.anyio
async def test_a_tester_outside_async_with_says_so() -> None:
    """Using the tester before entering it is a clear error, not an attribute error."""
    with pytest.raises(RuntimeError, match="use the HttpTester in 'async with"):
        await HttpTester(_app()).list_tools()


def test_an_unknown_option_is_refused() -> None:
    """A keyword that is no ``HttpOptions`` field fails when the tester is made."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        HttpTester(_app(), colour="blue")


@pytest.mark.anyio
async def test_server_info_carries_the_apps_display_metadata() -> None:
    """``serverInfo`` has the title, description, website and icons the app declares."""
    app = Fusion(
        "shown",
        version="3.1",
        title="Shown Server",
        description="Things, shown.",
        website_url="https://example.com",
        icons=[Icon("https://example.com/logo.png", mime_type="image/png", sizes=("48x48",))],
    )
    app.tool("t", description="T.").action("ping", read_only=True)(_ping)
    with anyio.fail_after(30):
        async with HttpTester(app) as tester:
            info = tester.server_info
    assert info == {
        "name": "shown",
        "title": "Shown Server",
        "version": "3.1",
        "description": "Things, shown.",
        "websiteUrl": "https://example.com",
        "icons": [
            {"src": "https://example.com/logo.png", "mimeType": "image/png", "sizes": ["48x48"]}
        ],
    }


def _ping() -> str:
    """Answers pong."""
    return "pong"
