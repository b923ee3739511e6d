"""Unit tests of mcpfusion._app.hosts: hosts that ignore `audience` get no UI for the user."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter, ui
from mcpfusion._app.hosts import IGNORES_AUDIENCE
from mcpfusion._present.response import FOR_USER, ToolResponse
from mcpfusion._serve.results import without_user_ui


class Row(BaseModel):
    """A row with a table for people."""

    name: str


@pytest.mark.parametrize(
    ("hosts", "message"),
    [("claude-code", "a collection of clientInfo names"), ([""], "a non-empty str")],
)
def test_a_bad_host_list_fails_at_definition(hosts: Any, message: str) -> None:
    """One name as a str, or an empty name: DefinitionError where the app is made."""
    with pytest.raises(DefinitionError, match=message):
        Fusion("x", hosts_ignoring_audience=hosts)


def test_known_hosts_by_default_and_the_app_s_own_list() -> None:
    """Claude Code is known to ignore audience; an app's list replaces the known one."""
    assert "claude-code" in IGNORES_AUDIENCE
    assert not Fusion("x").sends_user_ui("claude-code")
    assert Fusion("x").sends_user_ui("some-agent") and Fusion("x").sends_user_ui(None)
    own = Fusion("y", hosts_ignoring_audience={"my-host"})
    assert own.sends_user_ui("claude-code") and not own.sends_user_ui("my-host")
    assert Fusion("z", hosts_ignoring_audience=()).sends_user_ui("claude-code")


def table_app() -> Fusion:
    """An app whose one action answers rows and a table for the user."""
    app = Fusion("rows")
    view = Presenter("Row", Row)
    view.collection_ui(lambda rows: ui.table(["Name"], [[r["name"]] for r in rows]))

    def names() -> list[dict[str, str]]:
        return [{"name": "Ann"}]

    app.tool("rows").action(returns=view, read_only=True)(names)
    return app


@pytest.mark.anyio
async def test_without_user_ui_keeps_the_blocks_for_the_model() -> None:
    """Only the blocks for the user alone go; a response of nothing else stays whole."""
    response = await table_app().call_tool("rows", {"action": "names"})
    assert [a.audience if a else None for a in response.annotations] == [None, ("user",)]
    kept = without_user_ui(response)
    assert kept.blocks == response.blocks[:1] and kept.annotations == (None,)
    alone = ToolResponse(("table",), annotations=(FOR_USER,))
    assert without_user_ui(alone) is alone
