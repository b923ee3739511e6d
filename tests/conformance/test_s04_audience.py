"""SPEC §1, §4.3: UI blocks for the user's eyes, annotated audience ["user"]."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mcpfusion import Fusion, Presenter, ui
from mcpfusion.testing import FusionTester


class Row(BaseModel):
    """A listed row."""

    id: int


class Line(BaseModel):
    """An embedded line."""

    sku: str


def listing(**options: Any) -> dict[str, Any]:
    """The MCP result of a truncated list with a UI block, an embed's block and a rule."""
    app = Fusion("srv", **options)
    lines = Presenter("Line", Line)
    lines.collection_ui(lambda ls: ui.list([line["sku"] for line in ls]))
    view = Presenter("Row", Row, limit=1, rules=["r"]).embed("lines", lines)
    view.collection_ui(lambda rows: ui.summary(f"{len(rows)} row"))
    view.ui(lambda row: ui.markdown(f"row {row['id']}"))
    app.tool("rows").action("list", returns=view)(lambda: [{"id": 1}, {"id": 2}])
    app.tool("one").action("get", returns=view)(lambda: {"id": 3, "lines": [{"sku": "A"}]})
    tester = FusionTester(app)
    return {
        "list": tester.call_sync("rows", "list").raw,
        "get": tester.call_sync("one", "get").raw,
    }


def test_no_annotation_for_all() -> None:
    """SPEC §1: with ui_audience="all", content items are exactly {type, text}."""
    for result in listing(ui_audience="all").values():
        assert all(set(item) == {"type", "text"} for item in result["content"])


def test_an_app_sends_ui_blocks_for_the_user_by_default() -> None:
    """SPEC §4.3: an app that chooses nothing annotates its UI blocks and embeds for the user."""
    assert listing() == listing(ui_audience="user")


def test_ui_and_embeds_for_the_user_but_not_the_notice() -> None:
    """SPEC §4.3: UI blocks and embeds carry audience ["user"]; the notice and the rest none."""
    result = listing(ui_audience="user")
    listed = [item.get("annotations") for item in result["list"]["content"]]
    assert listed == [None, None, {"audience": ["user"]}, None]
    assert "Dataset truncated. 1 shown, 1 hidden." in result["list"]["content"][1]["text"]
    one = [item.get("annotations") for item in result["get"]["content"]]
    assert one == [None, {"audience": ["user"]}, {"audience": ["user"]}, None]


def test_a_presenter_choice_wins_over_the_app() -> None:
    """SPEC §4.3: the option is a Presenter's or the app's; the Presenter's comes first."""
    app = Fusion("srv", ui_audience="all")
    view = Presenter("Row", Row, ui_audience="user")
    view.ui(lambda row: ui.summary("s"))
    app.tool("t").action("get", returns=view)(lambda: {"id": 1})
    content = FusionTester(app).call_sync("t", "get").raw["content"]
    assert content[1] == {
        "type": "text",
        "text": '<ui_passthrough type="summary">\n📊 **Summary**: s\n</ui_passthrough>',
        "annotations": {"audience": ["user"]},
    }
