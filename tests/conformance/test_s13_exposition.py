"""SPEC §13: groups, instructions, split exposition, lean definitions and checked targets."""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from mcpfusion import DefinitionError, Fusion, Presenter, Suggestion, ToolError
from mcpfusion.testing import FusionTester
from tests.conformance.golden import assert_golden


class Issue(BaseModel):
    """An issue as the agent sees it."""

    id: int
    title: str
    assignee: str | None = None


issue_view = Presenter("Issue", Issue)


@issue_view.suggest
def _next(issue: dict[str, Any]) -> list[Suggestion]:
    return [Suggestion("issues.close", "Close it"), Suggestion("issues.admin.purge", "Purge")]


def tracker(definitions: Any = "full", exposition: Any = "split") -> Fusion:
    """An issue tracker: reads, a write, a destructive admin group, instructions."""
    app = Fusion("tracker", definitions=definitions)
    issues = app.tool(
        "issues",
        description="Issues of the team.",
        exposition=exposition,
        instructions="List before you close anything.",
    )
    issues.enable_select()

    @issues.action(returns=issue_view, read_only=True)
    def find(
        status: Annotated[Literal["open", "closed"] | None, Field(description="Only this.")] = None,
        assignee: str | None = None,
    ) -> list[dict[str, Any]]:
        """Find issues."""
        return [{"id": 1, "title": "Crash", "assignee": assignee}]

    @issues.action(returns=issue_view, read_only=True)
    def get(id: Annotated[int, Field(ge=1)]) -> dict[str, Any]:
        """One issue."""
        if id > 9:
            raise ToolError(
                "NOT_FOUND", "No such issue.", available_actions=["find", "issues.nope"]
            )
        return {"id": id, "title": "Crash"}

    @issues.action(idempotent=True)
    def close(id: int, assignee: str) -> str:
        """Close an issue."""
        return f"Closed {id}."

    admin = issues.group("admin", description="Maintenance; needs an admin token.")

    @admin.action(destructive=True)
    def purge() -> None:
        """Delete closed issues."""

    return app


@pytest.mark.parametrize(
    ("definitions", "golden"),
    [("full", "tools_list_tracker_split.json"), ("lean", "tools_list_tracker_lean.json")],
)
def test_split_tools_list_golden(definitions: Any, golden: str) -> None:
    """SPEC §13: a split tool with groups and instructions, full and lean, byte for byte."""
    listed = tracker(definitions).list_tools()
    assert_golden(golden, json.dumps(listed, indent=2, ensure_ascii=False) + "\n")


def test_groups_and_instructions_in_the_description() -> None:
    """SPEC §13: ungrouped actions, then each group under its heading, then instructions."""
    [listed] = tracker(exposition="grouped").list_tools()
    assert listed["description"] == (
        "Issues of the team.\n\nActions:\n- find: Find issues.\n- get: One issue. Requires: id."
        "\n- close: Close an issue. Requires: id, assignee.\n\n"
        "admin actions: Maintenance; needs an admin token.\n"
        "- admin.purge: [DESTRUCTIVE] Delete closed issues.\n\n"
        "List before you close anything."
    )


def test_differing_constraints_are_written_per_action() -> None:
    """SPEC §13: 'id' is ge=1 in get only and 'assignee' optional in find, required in close."""
    properties = tracker(exposition="grouped").list_tools()[0]["inputSchema"]["properties"]
    assert properties["id"] == {
        "description": "Required for: get, close. In get: minimum 1.",
        "type": "integer",
    }
    assert properties["assignee"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    tester = FusionTester(tracker(exposition="grouped"))
    assert tester.call_sync("issues", "get", id=0).error_code == "VALIDATION_ERROR"
    assert tester.call_sync("issues", "close", id=0, assignee="ann").text == "Closed 0."


def test_split_routes_and_names_the_other_half() -> None:
    """SPEC §13: an action sent to the wrong half is UNKNOWN_ACTION naming the right tool."""
    tester = FusionTester(tracker())
    assert tester.call_sync("issues", "close", id=2, assignee="ann").text == "Closed 2."
    wrong = tester.call_sync("issues", None, action="close", id=2, assignee="ann")
    assert wrong.error is not None
    assert (wrong.error.code, wrong.error.recovery) == (
        "UNKNOWN_ACTION",
        "Call tool 'issues_write' for action 'close'.",
    )
    assert wrong.error.available_actions == ("find", "get")


@pytest.mark.parametrize(
    ("exposition", "expected"),
    [
        ("grouped", ["issues.close", "issues.admin.purge"]),
        ("split", ["issues_write.close", "issues_write.admin.purge"]),
        ("flat", ["issues_close", "issues_admin.purge"]),
    ],
)
def test_targets_are_written_as_listed(exposition: Any, expected: list[str]) -> None:
    """SPEC §13: suggestion targets follow the exposition's spelling."""
    result = FusionTester(tracker(exposition=exposition)).call_sync("issues", "get", id=1)
    assert [s.tool for s in result.suggestions] == expected


def test_unknown_targets_are_dropped_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """SPEC §13: an available action naming nothing is not sent, and logged once."""
    tester = FusionTester(tracker())
    with caplog.at_level(logging.WARNING, logger="mcpfusion"):
        for _ in range(2):
            error = tester.call_sync("issues", "get", id=10).error
            assert error is not None
            assert error.available_actions == ("find",)
    assert sum("issues.nope" in r.getMessage() for r in caplog.records) == 1


def test_static_targets_are_checked_with_the_catalog() -> None:
    """SPEC §13: a static suggestion naming no action stops the app, naming what exists."""
    app = tracker()
    view = Presenter("Note", Issue, suggestions=[Suggestion("issues.reopen", "Reopen it")])
    app.tool("notes").action("get", returns=view, read_only=True)(lambda: {"id": 1, "title": "t"})
    message = (
        r"^Presenter 'Note' suggests 'issues.reopen: Reopen it', but 'issues.reopen' is no tool "
        r"or action of this app; known actions: issues.find, issues.get, issues.close, "
        r"issues.admin.purge, notes.get$"
    )
    with pytest.raises(DefinitionError, match=message):
        app.list_tools()


def test_lean_optional_parameters_still_accept_null() -> None:
    """SPEC §13: in the lean form an optional parameter is plain, and null means absent."""
    app = tracker("lean")
    reads = app.list_tools()[0]
    assert reads["inputSchema"]["properties"]["assignee"] == {
        "description": "Used by: find.",
        "type": "string",
    }
    assert FusionTester(app).call_sync("issues", "find", assignee=None).data == [
        {"id": 1, "title": "Crash", "assignee": None}
    ]
