"""The entry `mcpfusion install` writes starts a server the official client talks to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import run_cli

pytestmark = pytest.mark.e2e

APP = '''
from mcpfusion import Fusion, Icon

app = Fusion(
    "installed-e2e",
    version="4.2",
    title="Installed Server",
    description="Started as a desktop client would.",
    website_url="https://example.com",
    icons=[Icon("https://example.com/icon.png", mime_type="image/png")],
    definitions="full",  # lean definitions (the default) leave a true openWorldHint out
)
tool = app.tool("lookup", description="Lookups.", title="Web lookups")


@tool.action(read_only=True, open_world=True)
def fetch(url: str) -> str:
    """Fetches a page."""
    return f"fetched {url}"
'''


@pytest.mark.anyio
async def test_the_installed_entry_serves_the_app_and_its_metadata(tmp_path: Path) -> None:
    """A client started from the written entry sees serverInfo's metadata and the tool's."""
    source = tmp_path / "installed_app.py"
    source.write_text(APP, encoding="utf-8")
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}), encoding="utf-8")
    done = run_cli("install", "claude-desktop", str(source), "--config", str(config))
    assert done.returncode == 0, done.stderr
    servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert set(servers) == {"other", "installed-e2e"}
    entry = servers["installed-e2e"]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={**os.environ, **entry.get("env", {})},
        cwd=str(Path.home()),  # the client's directory, not the app's
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            info = client.server_info
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool("lookup", {"action": "fetch", "url": "a"})
    assert info is not None
    assert (info.title, info.description, info.website_url) == (
        "Installed Server",
        "Started as a desktop client would.",
        "https://example.com",
    )
    assert info.icons is not None and info.icons[0].src == "https://example.com/icon.png"
    assert tool.title == "Web lookups"
    assert tool.annotations is not None and tool.annotations.open_world_hint is True
    assert not result.is_error
