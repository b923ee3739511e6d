"""Unit tests of mcpfusion._tools.targets: suggestions and available actions name what exists."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter, Suggestion, ToolError, tool_error, ui
from mcpfusion.testing import FusionTester


class Row(BaseModel):
    """A presented row."""

    id: int


def make_app(exposition: Any = "grouped", **presenter: Any) -> Fusion:
    """An app whose tool 'rows' has a read action 'get' and a destructive 'drop'."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    rows = app.tool("rows", exposition=exposition)
    view = Presenter("Row", Row, **presenter)

    @view.suggest
    def _next(row: dict[str, Any]) -> list[Suggestion]:
        return [Suggestion("rows.drop", "Drop it"), Suggestion("rows.ghost", "Haunt it")]

    rows.action("get", returns=view, read_only=True)(lambda: {"id": 1})
    rows.action("drop", destructive=True)(lambda: None)
    return app


def test_an_unknown_dynamic_target_is_dropped_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A callback's suggestion naming no action is never sent; the log says so once."""
    tester = FusionTester(make_app())
    with caplog.at_level(logging.WARNING, logger="mcpfusion"):
        first = tester.call_sync("rows", "get")
        tester.call_sync("rows", "get")
    assert first.suggestions == (Suggestion("rows.drop", "Drop it"),)
    assert "rows.ghost" not in first.text
    logged = [r.getMessage() for r in caplog.records if "rows.ghost" in r.getMessage()]
    assert logged == [
        'a response named "rows.ghost", which is no tool or action of this app; it was not '
        "sent (known actions: rows.get, rows.drop)"
    ]


def test_under_flat_exposition_targets_are_the_flat_tool_names() -> None:
    """billing.remind is written billing_remind when each action is its own tool."""
    result = FusionTester(make_app("flat")).call_sync("rows", "get")
    assert result.suggestions == (Suggestion("rows_drop", "Drop it"),)
    assert result.text.endswith("<action_suggestions>\n- rows_drop: Drop it\n</action_suggestions>")


def test_under_split_exposition_targets_name_the_half() -> None:
    """A write action is suggested through the tool that lists it."""
    result = FusionTester(make_app("split")).call_sync("rows", "get")
    assert result.suggestions == (Suggestion("rows_write.drop", "Drop it"),)


def test_when_every_suggestion_is_dropped_the_block_goes() -> None:
    """A suggestions block left without entries is omitted, and the view agrees."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    view = Presenter("Row", Row, rules=["r"])
    view.suggest(lambda row: Suggestion("nowhere", "x"))
    app.tool("rows").action("get", returns=view)(lambda: {"id": 1})
    result = FusionTester(app).call_sync("rows", "get")
    assert result.blocks == ('{\n  "id": 1\n}', "<domain_rules>\n- r\n</domain_rules>")
    assert result.suggestions == ()


def test_a_dropped_target_keeps_the_answers_attachments() -> None:
    """Re-rendering the suggestions after a dropped target keeps the image the UI attached."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    view = Presenter("Row", Row)
    view.ui(lambda row: ui.image(b"\x89PNG"))
    view.suggest(lambda row: [Suggestion("rows.get", "Again"), Suggestion("nowhere", "x")])
    app.tool("rows").action("get", returns=view)(lambda: {"id": 1})
    result = FusionTester(app).call_sync("rows", "get")
    assert result.suggestions == (Suggestion("rows.get", "Again"),)
    assert [item["type"] for item in result.raw["content"]][-1] == "image"


@pytest.mark.parametrize(
    ("exposition", "expected"),
    [("grouped", ["get", "rows.drop"]), ("flat", ["rows_get", "rows_drop"])],
)
def test_available_actions_are_checked_and_spelled(exposition: Any, expected: list[str]) -> None:
    """A handler's available_actions are written as listed; unknown ones are dropped."""
    app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
    rows = app.tool("rows", exposition=exposition)

    @rows.action("get", read_only=True)
    def get() -> None:
        raise ToolError("NOT_FOUND", "No row.", available_actions=["get", "rows.drop", "nope"])

    rows.action("drop")(lambda: tool_error("GONE", "x", available_actions=["rows.ghost"]))
    tester = FusionTester(app)
    error = tester.call_sync("rows", "get").error
    assert error is not None
    assert error.available_actions == tuple(expected)
    assert "<available_actions>" not in tester.call_sync("rows", "drop").text


def test_static_suggestions_are_sent_and_checked_when_the_catalog_is_built() -> None:
    """A Presenter's suggestions= are sent every time; an unknown one stops the app."""
    fine = make_app(suggestions=[Suggestion("rows.drop", "Always")])
    assert FusionTester(fine).call_sync("rows", "get").suggestions[0] == Suggestion(
        "rows.drop", "Always"
    )
    broken = make_app(suggestions=[Suggestion("rows.remind", "Remind")])
    message = (
        r"^Presenter 'Row' suggests 'rows.remind: Remind', but 'rows.remind' is no tool or "
        r"action of this app; known actions: rows.get, rows.drop$"
    )
    with pytest.raises(DefinitionError, match=message):
        broken.freeze()


def test_a_static_suggestion_may_name_a_tool_and_a_bare_action() -> None:
    """A listed tool's name and the called tool's own actions are valid targets."""
    app = make_app(suggestions=[Suggestion("rows", "Anything"), Suggestion("drop", "Bare")])
    app.freeze()
    result = FusionTester(app).call_sync("rows", "get")
    assert [s.tool for s in result.suggestions] == ["rows", "drop", "rows.drop"]


def test_with_middleware_the_chains_responses_are_checked_too() -> None:
    """Behind middleware, the handler's response and one a middleware makes itself have
    their targets checked and respelled as without it."""
    app = make_app("flat")

    @app.middleware
    async def answering(call: Any, call_next: Any) -> Any:
        if call.arguments.get("id") == 0:
            return tool_error("NOPE", "Refused.", available_actions=["rows.drop", "rows.ghost"])
        return await call_next(call)

    @app.tool("other").action("take")
    def take(id: int) -> str:
        return "taken"

    tester = FusionTester(app)
    assert tester.call_sync("rows", "get").suggestions == (Suggestion("rows_drop", "Drop it"),)
    refused = tester.call_sync("other", "take", id=0)
    assert refused.error is not None and refused.error.available_actions == ("rows_drop",)
