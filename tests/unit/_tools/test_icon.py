"""Display metadata: ``Icon``, a tool's title and icons, and ``openWorldHint`` from actions."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import DefinitionError, Fusion, Icon

LOGO = Icon("https://example.com/logo.svg", mime_type="image/svg+xml", sizes=("any",))


def _listed(*, definitions: Any = "full", **worlds: bool | None) -> dict[str, Any]:
    app = Fusion("meta", definitions=definitions)
    tool = app.tool("search", description="Search.", title="Web search", icons=[LOGO])
    for name, world in worlds.items():

        def handler(q: str) -> str:
            return q

        tool.action(name, read_only=True, open_world=world, description=f"{name}.")(handler)
    (listed,) = app.list_tools()
    return listed


def test_an_icon_is_sent_with_the_fields_that_are_set() -> None:
    """``to_mcp`` spells MCP's camelCase keys and leaves unset fields out."""
    assert LOGO.to_mcp() == {
        "src": "https://example.com/logo.svg",
        "mimeType": "image/svg+xml",
        "sizes": ["any"],
    }
    assert Icon("data:image/png;base64,AAAA", theme="dark").to_mcp() == {
        "src": "data:image/png;base64,AAAA",
        "theme": "dark",
    }


def test_a_bad_icon_fails_at_definition_time() -> None:
    """Another scheme, a malformed size or an unknown theme is a definition error."""
    with pytest.raises(DefinitionError, match="src is an https:, http: or data: URI"):
        Icon("javascript:alert(1)")
    with pytest.raises(DefinitionError, match="sizes are like"):
        Icon("https://example.com/a.png", sizes=("big",))
    with pytest.raises(DefinitionError, match="theme is 'light' or 'dark'"):
        Icon("https://example.com/a.png", theme="sepia")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="icons is a list of Icon"):
        Fusion("x").tool("t", icons=["https://example.com/a.png"])  # type: ignore[list-item]


def test_a_tool_lists_its_title_and_icons() -> None:
    """``title`` follows the name and ``icons`` the input schema in the tool definition."""
    listed = _listed(fetch=None)
    assert list(listed)[:2] == ["name", "title"]
    assert listed["title"] == "Web search"
    assert listed["icons"] == [LOGO.to_mcp()]
    assert "openWorldHint" not in listed["annotations"]


def test_open_world_is_sent_when_any_action_declares_it() -> None:
    """One open-world action makes the tool open-world; declared closed ones send False."""
    assert _listed(fetch=True, cached=False)["annotations"]["openWorldHint"] is True
    assert _listed(cached=False)["annotations"]["openWorldHint"] is False


def test_lean_definitions_send_only_a_closed_world() -> None:
    """MCP's default is an open world, so lean definitions drop a true hint and keep a false one."""
    assert "openWorldHint" not in _listed(definitions="lean", fetch=True)["annotations"]
    assert _listed(definitions="lean", cached=False)["annotations"]["openWorldHint"] is False


def test_bad_metadata_fails_at_definition_time() -> None:
    """A non-bool open_world, an empty title or a website that is no URL is refused."""
    tool = Fusion("x").tool("t")
    with pytest.raises(DefinitionError, match="open_world must be True, False or None"):
        tool.action("a", open_world="yes")(lambda: "x")  # type: ignore[call-overload]
    with pytest.raises(DefinitionError, match="title must be a non-empty str or None"):
        Fusion("x").tool("u", title="  ")
    with pytest.raises(DefinitionError, match="website_url is an http"):
        Fusion("x", website_url="example.com")
