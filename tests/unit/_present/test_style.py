"""Data formats, TOON delimiters, UI for the user and omit_none, per Presenter and app."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toon_format
from pydantic import MISSING, BaseModel

from mcpfusion import (
    BlockAnnotations,
    Context,
    DefinitionError,
    Fusion,
    Presenter,
    ToolResponse,
    toon_success,
    ui,
)
from mcpfusion._present.omission import plan_of
from mcpfusion._present.style import Style
from mcpfusion.testing import FusionTester


class Row(BaseModel):
    """A flat row."""

    id: int
    name: str


class Child(BaseModel):
    """A nested model with an optional field."""

    sku: str
    note: str | None = None


class Ticket(BaseModel):
    """Optional fields of every kind."""

    id: int
    assignee: str | None = None
    closed_by: str | None  # no default: None is a value here
    children: list[Child] = []
    owner: Child | None = None
    tags: list[str] | None = None


ROWS = [{"id": 1, "name": "a"}, {"id": 2, "name": "b|c"}]
FOR_USER = BlockAnnotations(("user",))


def served(presenter: Presenter, data: Any = ROWS, **app_options: Any) -> ToolResponse:
    """The response a tool whose action returns ``data`` through ``presenter`` sends."""
    app = Fusion("srv", **app_options)
    app.tool("t").action("get", returns=presenter)(lambda: data)
    return FusionTester(app).call_sync("t", "get").response


def test_app_data_format_applies_where_a_presenter_chooses_none() -> None:
    """A Presenter without a format takes the app's; one with a format keeps its own."""
    assert served(Presenter("Row", Row), data_format="compact").blocks[0] == json.dumps(
        ROWS, separators=(",", ":")
    )
    own = Presenter("Row", Row, data_format="json")
    assert served(own, data_format="compact").blocks[0] == json.dumps(ROWS, indent=2)
    assert served(Presenter("Row", Row), data_format="json").blocks[0] == json.dumps(ROWS, indent=2)


def test_an_app_that_chooses_nothing_writes_toon_for_the_model() -> None:
    """An app's defaults are the model's: TOON data and UI blocks for the user (issue 26)."""
    view = Presenter("Row", Row)
    view.collection_ui(lambda rows: ui.table(["id"], [[r["id"]] for r in rows]))
    response = served(view)
    assert response.blocks[0] == '[2|]{id|name}:\n  1|a\n  2|"b|c"'
    assert response.annotations == (None, FOR_USER)
    assert served(view, ui_audience="all").annotations == ()
    assert view.present(ROWS).blocks[0] == json.dumps(ROWS, indent=2)  # alone: indented


def test_app_data_format_applies_to_plain_values() -> None:
    """A handler's plain value is written in the app's format too."""
    app = Fusion("srv", data_format="toon", delimiter=",")
    app.tool("t").action("get")(lambda: ROWS)
    assert FusionTester(app).call_sync("t", "get").text == "[2]{id,name}:\n  1,a\n  2,b|c"


@pytest.mark.parametrize("delimiter", ["|", ",", "\t"])
def test_toon_delimiters_round_trip(delimiter: Any) -> None:
    """Every delimiter writes a table that decodes back to the rows, for lists and items."""
    text = served(Presenter("Row", Row, data_format="toon", delimiter=delimiter)).blocks[0]
    assert text.startswith(f"[2{'' if delimiter == ',' else delimiter}]{{id{delimiter}name}}:")
    assert toon_format.decode(text) == ROWS
    item = toon_success({"id": 1, "name": "x,y"}, delimiter=delimiter).blocks[0]
    assert toon_format.decode(item) == {"id": 1, "name": "x,y"}


def test_a_single_item_in_toon() -> None:
    """A single object is TOON key-value lines."""
    text = served(Presenter("Row", Row, data_format="toon"), {"id": 7, "name": "n"}).blocks[0]
    assert text == "id: 7\nname: n"


def test_ui_for_the_user_is_annotated_and_the_notice_is_not() -> None:
    """UI blocks and embeds go to the user; the truncation notice stays for the model."""
    view = Presenter("Row", Row, limit=1, ui_audience="user")
    view.collection_ui(lambda rows: ui.table(["id"], [[r["id"]] for r in rows]))
    response = served(view)
    assert response.blocks[1].startswith('<ui_passthrough type="summary">')
    assert response.annotations == (None, None, FOR_USER)
    assert "annotations" not in response.to_mcp()["content"][1]
    assert response.to_mcp()["content"][2]["annotations"] == {"audience": ["user"]}


def test_app_ui_audience_and_embeds() -> None:
    """The app's ui_audience reaches Presenters that set none, embeds included."""
    child = Presenter("Child", Child)
    child.collection_ui(lambda rows: ui.list([r["sku"] for r in rows]))
    parent = Presenter("Ticket", Ticket).embed("children", child)
    parent.ui(lambda t: ui.summary(str(t["id"])))
    data = {"id": 1, "closed_by": None, "children": [{"sku": "A"}]}
    response = served(parent, data, ui_audience="user")
    assert response.annotations == (None, FOR_USER, FOR_USER)
    assert served(parent, data, ui_audience="all").annotations == ()


def test_omit_none_drops_only_none_defaults_at_every_level() -> None:
    """None is left out where the schema defaults to None; elsewhere it is a value."""
    view = Presenter("Ticket", Ticket, omit_none=True, data_format="compact")
    seen: list[Any] = []
    view.rules(lambda ticket: seen.append(dict(ticket)))
    data = {
        "id": 1,
        "assignee": None,
        "closed_by": None,
        "children": [{"sku": "A", "note": None}, {"sku": "B", "note": "n"}],
        "owner": {"sku": "C", "note": None},
        "tags": None,
    }
    text = served(view, data).blocks[0]
    assert json.loads(text) == {
        "id": 1,
        "closed_by": None,
        "children": [{"sku": "A"}, {"sku": "B", "note": "n"}],
        "owner": {"sku": "C"},
    }
    assert seen[0]["assignee"] is None  # callbacks see the whole row


def test_missing_is_the_alternative_to_omit_none() -> None:
    """A MISSING default needs no option: the field is absent whenever it is not given."""

    class Lean(BaseModel):
        id: int
        assignee: str | MISSING = MISSING

    assert (
        served(Presenter("Lean", Lean), [{"id": 1}], data_format="json").blocks[0]
        == '[\n  {\n    "id": 1\n  }\n]'
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"data_format": "xml"}, "data_format must be one of"),
        ({"delimiter": ";"}, "delimiter must be one of"),
        ({"ui_audience": "model"}, "ui_audience must be one of"),
    ],
)
def test_bad_styles_raise_at_definition(options: dict[str, Any], message: str) -> None:
    """A Presenter or app with an unknown style choice raises where it is written."""
    with pytest.raises(DefinitionError, match=f"^Presenter 'Row': {message}"):
        Presenter("Row", Row, **options)
    with pytest.raises(DefinitionError, match=f"^app 'srv': {message}"):
        Fusion("srv", **options)


def test_style_over_fills_what_is_left_open() -> None:
    """A style's open choices come from the defaults; its own win."""
    assert Style("toon").over(Style("compact", ",", "user")) == Style("toon", ",", "user")
    assert (Style().format, Style().toon_delimiter) == ("json", "|")


def test_omit_none_plans_follow_lists_optionals_and_self_reference() -> None:
    """The plan reaches models in lists and optionals, and a self-referencing model ends."""

    class Node(BaseModel):
        label: str | None = None
        children: list[Node] = []
        parent: Node | None = None

    plan = plan_of(Node)
    assert plan.fields == {"label", "parent"}
    assert plan.nested["children"] is plan
    assert plan.nested["parent"] is plan
    row: dict[str, Any] = {
        "label": None,
        "children": [{"label": None, "children": []}],
        "parent": None,
    }
    plan.prune(row)
    assert row == {"children": [{"children": []}]}


@pytest.mark.parametrize("run_async", [False, True])
def test_a_handler_presenting_itself_honours_the_app(run_async: bool) -> None:
    """view.present(data, ctx) inside a handler, sync or async, writes in the app's style."""
    view = Presenter("Row", Row)
    view.collection_ui(lambda rows: ui.table(["id"], [[r["id"]] for r in rows]))
    app = Fusion("srv", data_format="compact")
    if run_async:

        async def listing(ctx: Context) -> ToolResponse:
            return view.present(ROWS, ctx)
    else:

        def listing(ctx: Context) -> ToolResponse:  # type: ignore[misc]
            return view.present(ROWS, ctx)

    app.tool("t").action("get")(listing)
    response = FusionTester(app).call_sync("t", "get").response
    assert response.blocks[0] == json.dumps(ROWS, separators=(",", ":"))
    assert response.annotations == (None, FOR_USER)
    assert view.present(ROWS).blocks[0] == json.dumps(ROWS, indent=2)  # outside: the defaults


def test_a_handler_presenting_itself_under_middleware_honours_the_app() -> None:
    """With middleware in the chain, the context the handler gets still carries the app's style."""
    view = Presenter("Row", Row)
    app = Fusion("srv", data_format="compact")

    @app.middleware
    async def passing(call: Any, call_next: Any) -> Any:
        return await call_next(call)

    async def listing(ctx: Context) -> ToolResponse:
        return view.present(ROWS, ctx)

    app.tool("t").action("get")(listing)
    response = FusionTester(app).call_sync("t", "get").response
    assert response.blocks[0] == json.dumps(ROWS, separators=(",", ":"))


def test_a_bare_present_inside_a_handler_writes_the_defaults() -> None:
    """view.present(data) without ctx inside a handler writes as outside an app: the style
    travels with the context, not with the running task."""
    view = Presenter("Row", Row)
    app = Fusion("srv", data_format="compact")

    async def listing() -> ToolResponse:
        return view.present(ROWS)

    app.tool("t").action("get")(listing)
    response = FusionTester(app).call_sync("t", "get").response
    assert response.blocks[0] == json.dumps(ROWS, indent=2)
