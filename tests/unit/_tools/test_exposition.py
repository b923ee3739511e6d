"""Action groups, per-tool instructions and the effect-split exposition (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest
import toon_format
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Identity, Presenter, Tool
from mcpfusion.testing import FusionTester


class Issue(BaseModel):
    """A presented issue."""

    id: int
    title: str


class Note(BaseModel):
    """What the write half returns."""

    id: int
    text: str


def tracker(exposition: Any = "grouped", **options: Any) -> tuple[Fusion, Tool]:
    """An issue tracker: two reads, a write, and a destructive admin action in a group."""
    app = Fusion("tracker", data_format="json", ui_audience="all", definitions="full")
    issues = app.tool("issues", description="Issues.", exposition=exposition, **options)
    view = Presenter("Issue", Issue)
    issues.action("list_issues", returns=view, read_only=True)(lambda: [{"id": 1, "title": "A"}])
    issues.action("get", returns=view, read_only=True)(lambda id: {"id": id, "title": "A"})
    issues.action("comment", returns=Presenter("Note", Note))(lambda id: {"id": id, "text": "x"})
    admin = issues.group("admin", description="Maintenance; needs an admin token.")

    @admin.action(destructive=True)
    def purge() -> None:
        """Delete closed issues."""

    return app, issues


def test_group_actions_have_dotted_names_and_their_own_heading() -> None:
    """A group's actions are '{group}.{name}' and listed under the group's description."""
    app, issues = tracker(instructions="Always list before you close.")
    assert list(issues.actions) == ["list_issues", "get", "comment", "admin.purge"]
    [listed] = app.list_tools()
    assert listed["description"] == (
        "Issues.\n\nActions:\n- list_issues\n- get: Requires: id.\n- comment: Requires: id.\n\n"
        "admin actions: Maintenance; needs an admin token.\n"
        "- admin.purge: [DESTRUCTIVE] Delete closed issues.\n\n"
        "Always list before you close."
    )
    assert listed["inputSchema"]["properties"]["action"]["enum"][-1] == "admin.purge"
    assert FusionTester(app).call_sync("issues", "admin.purge").text == "OK"


def test_groups_in_the_toon_description() -> None:
    """The TOON description keeps one action table and adds a table of groups."""
    app, issues = tracker()
    issues.toon_description()
    description = app.list_tools()[0]["description"]
    summary, actions, groups = description.split("\n\n")
    assert summary == "Issues."
    assert toon_format.decode(actions)[-1] == {
        "action": "admin.purge",
        "desc": "[DESTRUCTIVE] Delete closed issues.",
        "required": "",
    }
    assert toon_format.decode(groups) == {
        "groups": [{"group": "admin", "desc": "Maintenance; needs an admin token."}]
    }


def test_flat_tools_carry_the_instructions() -> None:
    """Under flat exposition every action's tool ends with the tool's instructions."""
    app, _ = tracker("flat", instructions="Be careful.")
    names = [tool["name"] for tool in app.list_tools()]
    assert names == ["issues_list_issues", "issues_get", "issues_comment", "issues_admin.purge"]
    assert all(t["description"].endswith("\n\nBe careful.") for t in app.list_tools())


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("a.b", {}, r"group name 'a.b' must be letters, digits, _ or -"),
        ("admin", {}, "already has a group 'admin'"),
        ("x", {"description": 3}, "group description must be a str"),
    ],
)
def test_bad_groups(name: str, options: dict[str, Any], message: str) -> None:
    """A bad or repeated group name raises where it is written."""
    _, issues = tracker()
    with pytest.raises(DefinitionError, match=message):
        issues.group(name, **options)


def test_split_lists_reads_and_writes_as_two_honest_tools() -> None:
    """Read-only actions and the others are two tools, each with its own annotations."""
    app, _ = tracker("split")
    reads, writes = app.list_tools()
    assert (reads["name"], writes["name"]) == ("issues", "issues_write")
    assert reads["inputSchema"]["properties"]["action"]["enum"] == ["list_issues", "get"]
    assert writes["inputSchema"]["properties"]["action"]["enum"] == ["comment", "admin.purge"]
    assert reads["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
    }
    assert writes["annotations"]["destructiveHint"] is True
    assert "admin actions" in writes["description"]
    assert "admin" not in reads["description"]


def test_split_routes_each_action_through_its_half() -> None:
    """Calls reach actions through the half that lists them; the other says where to go."""
    app, _ = tracker("split", split_names=("issues_read", "issues_change"))
    tester = FusionTester(app)
    assert tester.call_sync("issues", "get", id=2).data == {"id": 2, "title": "A"}
    assert tester.call_sync("issues", "comment", id=2).data == {"id": 2, "text": "x"}
    wrong = tester.call_sync("issues_read", None, action="comment", id=2)
    assert wrong.error is not None
    assert wrong.error.code == "UNKNOWN_ACTION"
    assert wrong.error.recovery == "Call tool 'issues_change' for action 'comment'."
    assert wrong.error.available_actions == ("list_issues", "get")
    missing = tester.call_sync("issues_change", None)
    assert missing.error is not None
    assert missing.error.message.startswith("Tool 'issues_change' needs the 'action' argument")
    assert missing.error.available_actions == ("comment", "admin.purge")


def test_split_select_follows_each_half() -> None:
    """Each half offers _select over its own actions' fields."""
    app, issues = tracker("split")
    issues.enable_select()
    reads, writes = app.list_tools()
    assert reads["inputSchema"]["properties"]["_select"]["items"]["enum"] == ["id", "title"]
    assert writes["inputSchema"]["properties"]["_select"]["items"]["enum"] == ["id", "text"]
    result = FusionTester(app).call_sync("issues", "comment", id=3, _select=["text"])
    assert result.data == {"text": "x"}


def test_split_claims_both_names() -> None:
    """A split tool's names are taken when it is created; bad names raise."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    app.tool("issues", exposition="split")
    with pytest.raises(DefinitionError, match="'issues_write' is already listed by tool"):
        app.tool("issues_write")
    with pytest.raises(DefinitionError, match="split_names takes two different tool names"):
        app.tool("t", exposition="split", split_names=("t", "t"))
    with pytest.raises(DefinitionError, match="split_names= applies to exposition='split'"):
        app.tool("u", split_names=("a", "b"))


def test_split_halves_follow_the_callers_scopes() -> None:
    """A split tool's views: a half without visible actions disappears, none leaks elsewhere."""
    app = Fusion("tracker", data_format="json", ui_audience="all", definitions="full")
    issues = app.tool("issues", exposition="split")
    issues.action("get", read_only=True)(lambda id: {"id": id})
    issues.action("comment", requires={"issues:write"})(lambda id: {"id": id})
    issues.action("close", requires={"issues:admin"})(lambda id: {"id": id})
    reader = FusionTester(app, identity=Identity("r"))
    assert [t["name"] for t in reader.list_tools()] == ["issues"]
    writer = FusionTester(app, identity=Identity("w", scopes={"issues:write"}))
    reads, writes = writer.list_tools()
    assert reads["inputSchema"]["properties"]["action"]["enum"] == ["get"]
    assert writes["inputSchema"]["properties"]["action"]["enum"] == ["comment"]
    wrong = reader.call_sync("issues", None, action="close", id=1)
    assert wrong.error is not None
    assert wrong.error.code == "UNKNOWN_ACTION"
    assert "issues_write" not in str(wrong.error.recovery)
    assert wrong.error.available_actions == ("get",)
    redirected = writer.call_sync("issues", None, action="comment", id=1)
    assert redirected.error is not None
    assert redirected.error.recovery == "Call tool 'issues_write' for action 'comment'."
